"""One candidate commit on a test box: build, copy, install, boot, check, measure, recover.

:class:`Box` does what ``abstat bisect --host`` needs of one box, one boot
at a time (the search, :mod:`abstat.history.bisect.boxes`, chooses which):

1. **build** the commit, once: ``--build`` in a worktree on this machine
   (then ``--artifact``, a file of the tree, is copied to the box, under
   ``~/.abstat/artifacts/SHA/``);
2. **install** it before every boot whose commit is not the one installed
   last: ``--build-on-host`` and ``--install`` on the box (a box may keep one
   kernel slot, or one build tree, which the previous commit overwrote);
3. **boot, check and measure** it through the engine: one
   :class:`~abstat.engine.ExperimentSpec` with ``lab=Lab(host, boot, check)``
   per boot, run by :meth:`abstat.engine.Engine.run` (the lab's worker boots
   the box, waits for a new boot id, runs ``--check``, then ``--runs``
   runs of ``--run``; one stored invocation per boot, labelled ``rev``,
   ``role``, ``commit_time`` and ``host``).  The boot's value is the median
   of its runs: boots are the unit.

Every command run on the box gets ``ABSTAT_REV`` (the full commit hash) and
``ABSTAT_ARTIFACT`` (the copied artifact's path there, or ``--artifact`` as
given with ``--build-on-host``, or empty) in its environment; ``--recover``
runs on this machine with those and ``ABSTAT_HOST``/``ABSTAT_DESTINATION``.

A commit that does not build or install, whose boot does not come back
within ``--boot-timeout``, is refused by ``--check``, or whose every run
fails gives a :class:`Failed` (the search skips it, as ``git bisect skip``);
then ``--recover`` runs and the box must answer again.  A box that cannot be
reached before a boot, or after ``--recover``, raises :class:`BoxLost`: the
bisection stops with everything stored, to be resumed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

from abstat.errors import InputError, named

VARIANT = "bench"
ARTIFACT_DIR = ".abstat/artifacts"  # on the box, under the login directory
LONG_S = 24 * 3600.0  # a build or install without --timeout
UNREACHABLE = "cannot reach the host"  # how the lab's worker words a box it cannot reach


class BoxLost(InputError):
    """The box cannot be reached: the bisection stops, its boots stored, to be resumed."""


@dataclass(frozen=True)
class Failed:
    """A commit that gave no value on the box (skipped by the search), and why."""

    reason: str
    booted: bool = False  # it failed in or after its boot (then --recover runs), not in its build


@dataclass(frozen=True)
class BoxSetup:
    """How to bring a commit to the box and measure it there (stored with every boot, for --resume)."""

    label: str
    destination: str
    run: str
    metric: str
    metric_spec: str | None = None
    runs: int = 5
    build: str | None = None
    build_on_host: str | None = None
    artifact: str | None = None
    install: str | None = None
    boot: str | None = None
    check: str | None = None
    recover: str | None = None
    boot_timeout: float = 600.0
    timeout: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: str) -> BoxSetup:
        """From the stored form, checked (the store is untrusted): one-line InputError naming it."""
        if not isinstance(data, dict) or set(data) - {f.name for f in fields(cls)}:
            raise InputError(f"{where}: the stored box settings are not valid", fields=["resume"])
        for key, value in data.items():
            number = key in ("runs", "boot_timeout", "timeout")
            ok = (
                (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0)
                if number
                else isinstance(value, str) and 0 < len(value) <= 100_000
            )
            if not ok and not (value is None and key not in ("label", "destination", "run", "metric", "runs")):
                raise InputError(f"{where}: the stored box setting {key!r} is not valid", fields=["resume"])
        from abstat.engine import Host, SpecError

        _check_stored(data, where)
        try:
            # no ssh option from a store; Host refuses what is not a name (None too)
            Host(data.get("label"), data.get("destination"))  # type: ignore[arg-type]
            return cls(**data)
        except TypeError:
            raise InputError(f"{where}: the stored box settings are incomplete", fields=["resume"]) from None
        except SpecError as err:
            raise InputError(f"{where}: the stored box is not valid: {err}", fields=["resume"]) from None


def _check_stored(data: dict[str, Any], where: str) -> None:
    """What the command line checks of --artifact, --metric and --runs, checked of the stored settings too."""
    from abstat.history.bisect.workspace import relative_inside
    from abstat.box.runner.sources import RegexMetric

    artifact, spec, runs = data.get("artifact"), data.get("metric_spec"), data.get("runs", 5)
    why = None
    if artifact is not None and not relative_inside(artifact):  # a store is no wider than --artifact
        why = f"'artifact' {artifact!r} is not a path inside the repository's tree (relative, without '..')"
    elif not isinstance(runs, int) or not 1 <= runs <= 100_000:
        why = f"'runs' {runs!r} is not a number of runs from 1 to 100000"
    else:
        try:
            RegexMetric.parse(spec) if spec is not None else None
        except ValueError as err:
            why = f"'metric_spec' is not valid: {err}"
    if why is not None:
        raise InputError(f"{where}: the stored box setting {why}", fields=["resume"])


def _artifact_name(artifact: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(artifact)) or "artifact"


class Box:
    """One test box during a bisection (close it when done)."""

    def __init__(
        self,
        setup: BoxSetup,
        *,
        repo: str,
        experiment: str,
        store: str,
        argv: list[str],
        session: Any,
        trees: Any,
        caller: dict[str, Any],
    ) -> None:
        from abstat.lab.ssh import SshHost

        self.setup = setup
        self.repo = repo
        self.experiment = experiment
        self.store = store
        self.argv = argv
        self.session = session  # this machine's process control (builds, --recover)
        self.trees = trees  # the bisection's worktrees (--build)
        self.caller = caller  # stored with every boot: the bisection's settings
        self.built: set[str] = set()  # commits built here and copied to the box
        self.installed: str | None = None  # the commit whose --build-on-host/--install ran last on the box
        self.failed: dict[str, str] = {}  # commits that did not build or install: why
        self.work = tempfile.mkdtemp(prefix="abstat-bisect-box-")
        self.ssh = SshHost(setup.label, setup.destination, self.work)

    def close(self) -> None:
        self.ssh.close()
        shutil.rmtree(self.work, ignore_errors=True)

    # -- the environment of every command ------------------------------------

    def artifact_on_box(self, sha: str) -> str:
        artifact = self.setup.artifact
        if artifact is None:
            return ""
        if self.setup.build_on_host is not None:
            return artifact
        return f"$HOME/{ARTIFACT_DIR}/{sha}/{_artifact_name(artifact)}"

    def env(self, sha: str) -> str:
        """The shell prefix that gives a command on the box ABSTAT_REV and ABSTAT_ARTIFACT."""
        artifact = self.artifact_on_box(sha)
        quoted = f'"{artifact}"' if artifact.startswith("$HOME/") else shlex.quote(artifact)
        return f"ABSTAT_REV={sha} ABSTAT_ARTIFACT={quoted}; export ABSTAT_REV ABSTAT_ARTIFACT; "

    # -- build and copy (once per commit), install (when another was installed) ---

    def _remote(self, what: str, command: str, timeout: float) -> tuple[int, str]:
        from abstat.lab.ssh import SshError

        try:
            self.ssh.connect(min(self.setup.boot_timeout, 30.0))
            code, out, err = self.ssh.run(command, timeout=timeout)
        except SshError as failure:
            raise BoxLost(f"host {self.setup.label}: {UNREACHABLE} to {what}: {failure}") from None
        if code == 255:
            raise BoxLost(f"host {self.setup.label}: the connection dropped during {what}: {err.strip()[-200:]}")
        detail = (err or out).strip().splitlines()
        return code, (f"exit status {code}" + (f": {detail[-1][:200]}" if detail else ""))

    def _copy(self, sha: str, local: str) -> None:
        from abstat.lab.ssh import SshError

        target = f"{ARTIFACT_DIR}/{sha}"
        name = _artifact_name(self.setup.artifact or "")
        command = f"mkdir -p {target} && cat > {target}/{name}.part && mv {target}/{name}.part {target}/{name}"
        try:
            self.ssh.connect(min(self.setup.boot_timeout, 30.0))
            process = self.ssh.open(command)
        except (SshError, OSError) as err:
            raise BoxLost(f"host {self.setup.label}: {UNREACHABLE} to copy the artifact: {err}") from None
        try:
            assert process.stdin is not None and process.stderr is not None  # open() makes both pipes
            with open(local, "rb") as handle:
                shutil.copyfileobj(handle, process.stdin)
            process.stdin.close()
            stderr = process.stderr.read()
            process.wait(timeout=self.setup.timeout or LONG_S)
        except (OSError, ValueError, subprocess.TimeoutExpired) as failure:
            raise BoxLost(f"host {self.setup.label}: copying the artifact failed: {failure}") from None
        finally:
            self.ssh.close_session(process)
        if process.returncode != 0:
            raise BoxLost(
                f"host {self.setup.label}: copying the artifact failed (exit status "
                f"{process.returncode}): {stderr.decode(errors='replace').strip()[-200:]}"
            )

    def prepare(self, sha: str) -> Failed | None:
        """Make ``sha`` the kernel the next boot starts: build and copy it once (``--build``), then run the
        box's own steps (``--build-on-host``, ``--install``) whenever the kernel installed last is another
        commit's -- a box may keep one slot (docs/lab.md: ``cp "$ABSTAT_ARTIFACT" /boot/vmlinuz-bisect``),
        or build in one tree, so what a commit installed earlier may have been overwritten since.
        A Failed when it does not build or install."""
        if sha in self.failed:
            return Failed(self.failed[sha])
        setup = self.setup
        why = self._build_here(sha) if setup.build is not None and sha not in self.built else None
        if why is None and self.installed != sha:
            self.installed = None  # a box step that fails half way leaves no commit known installed
            if setup.build_on_host is not None:
                code, detail = self._remote("build", self.env(sha) + setup.build_on_host, setup.timeout or LONG_S)
                why = named(f"{{build_on_host}} failed: {detail}", "build_on_host") if code else None
            if why is None and setup.install is not None:
                code, detail = self._remote("install", self.env(sha) + setup.install, setup.timeout or LONG_S)
                why = named(f"{{install}} failed: {detail}", "install") if code else None
        if why is not None:
            self.failed[sha] = why
            return Failed(why)
        self.built.add(sha)
        self.installed = sha
        return None

    def _build_here(self, sha: str) -> str | None:
        """``--build`` in the box's worktree here, and the artifact copied to the box; why not, or None."""
        from abstat.history.bisect.workspace import build, file_in_tree

        setup = self.setup
        path = self.trees.checkout("box", sha)
        why = build(self.session, f"ABSTAT_REV={sha}; export ABSTAT_REV; {setup.build}", path, "test", setup.timeout)
        if why:
            return f"build failed: {why}"
        if setup.artifact is not None:
            local = file_in_tree(path, setup.artifact)  # a link to a file outside is refused, not copied
            if not os.path.isfile(local):
                return f"build made no {setup.artifact}"
            self._copy(sha, local)
        return None

    # -- one boot, through the engine --------------------------------------------

    def spec(self, sha: str, role: str, seed: int) -> Any:
        from abstat.engine import ExperimentSpec, Host, Lab, Variant
        from abstat.history.revision import commit_time
        from abstat.box.runner.sources import RegexMetric

        setup, env = self.setup, self.env(sha)
        lab = Lab(
            hosts=(Host(setup.label, setup.destination),),
            boot={VARIANT: env + setup.boot} if setup.boot else {},
            check={VARIANT: env + setup.check} if setup.check else {},
            boot_timeout=setup.boot_timeout,
        )
        metrics = (RegexMetric.parse(setup.metric_spec),) if setup.metric_spec else ()
        return ExperimentSpec(
            (Variant(VARIANT, env + setup.run),),
            runs=setup.runs,
            shell=True,
            timeout=setup.timeout,
            on_failure="continue",
            metrics=metrics,
            experiment=self.experiment,
            seed=seed,
            lab=lab,
            store=self.store,
            labels={"rev": sha, "role": role, "commit_time": commit_time(sha, self.repo)},
        )

    def measure(self, sha: str, role: str, slot: dict[str, int]) -> float | Failed:
        """Boot ``sha`` once and measure it: the median of the boot's runs, or why there is none."""
        from abstat.engine import Engine

        failed = self.prepare(sha)
        if failed is not None:
            return failed
        caller = {"bisect": {**self.caller, **slot, "role": role}}
        seed = (slot["batch"] * 1000 + slot["slot"]) % (2**31)
        result = Engine(argv=self.argv, caller=caller).run(self.spec(sha, role, seed))
        if result.status == "interrupted":
            raise KeyboardInterrupt
        lost = result.hosts_failed.get(self.setup.label)
        if lost is not None:
            if UNREACHABLE in lost:  # before the boot: the box, not the commit
                raise BoxLost(f"host {self.setup.label}: {lost}")
            return Failed(f"boot: {lost}", booted=True)
        values = result.values(VARIANT, self.setup.metric, self.setup.label)
        if not values:
            notes = next((run.notes for run in result.failed_runs), ()) or (result.error or "no value",)
            return Failed(f"no run gave a value of {self.setup.metric}: {'; '.join(notes)[:200]}", booted=True)
        return float(statistics.median(values))

    def recover(self, sha: str) -> None:
        """After a failed boot: ``--recover`` here, then wait (``--boot-timeout``) for the box to answer."""
        from abstat.history.bisect.workspace import failure_reason
        from abstat.lab.ssh import SshError
        from abstat.box.runner import Command, RunContext

        setup = self.setup
        if setup.recover is None:
            return
        env = {
            "ABSTAT_REV": sha,
            "ABSTAT_ARTIFACT": self.artifact_on_box(sha),
            "ABSTAT_HOST": setup.label,
            "ABSTAT_DESTINATION": setup.destination,
        }
        prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        measurement = self.session.run_hook(
            "recover",
            Command(f"{prefix}; export {' '.join(env)}; {setup.recover}", shell=True),
            RunContext("recover"),
            timeout=setup.boot_timeout,
        )
        if not measurement.ok:
            raise BoxLost(f"host {setup.label}: {{recover}} failed: {failure_reason(measurement)}", fields=["recover"])
        self.ssh.disconnect()
        deadline = time.monotonic() + setup.boot_timeout
        while True:
            try:
                self.ssh.connect(max(1.0, min(10.0, deadline - time.monotonic())))
                code, _, _ = self.ssh.run("true", timeout=30)
                if code == 0:
                    return
            except SshError:
                pass
            if time.monotonic() >= deadline:
                raise BoxLost(
                    f"host {setup.label}: did not answer within {setup.boot_timeout:g} s after {{recover}}",
                    fields=["recover"],
                )
            time.sleep(0.5)
