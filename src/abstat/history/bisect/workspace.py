"""Git worktrees for a bisection, builds and measurements through the runner, records in the store."""

from __future__ import annotations

import hashlib
import os
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any

from abstat.history.bisect.worktrees import LOCK_FILE, PREFIX, Worktrees, ceiling_prefix  # noqa: F401 (Worktrees: for step)
from abstat.errors import InputError
from abstat.history.revision import commit_time

VARIANT = "bench"


def in_dir(path: str, command: str) -> Any:
    """``command`` (shell) run in ``path``; in one of abstat's worktrees, git stops at the tree."""
    from abstat.box.runner import Command

    root = os.path.dirname(path)
    ours = os.path.basename(root).startswith(PREFIX) and os.path.exists(os.path.join(root, LOCK_FILE))
    return Command(f"{ceiling_prefix(root) if ours else ''}cd {shlex.quote(path)} && {command}", shell=True)


def build(executor: Any, command: str | None, path: str, label: str, timeout: float | None) -> str | None:
    """Run the build command in ``path``; None when it succeeded, else why it failed."""
    from abstat.box.runner import RunContext

    if not command:
        return None
    measurement = executor.run_hook("build", in_dir(path, command), RunContext(label), timeout=timeout)
    return None if measurement.ok else failure_reason(measurement)


def relative_inside(path: str) -> bool:
    """Whether ``path`` names something inside a tree: relative, not leaving it with ``..``."""
    parts = os.path.normpath(path).split(os.sep)
    return bool(path) and not os.path.isabs(path) and parts[0] not in ("..", "") and "\x00" not in path


def file_in_tree(tree: str, path: str) -> str:
    """``path`` (relative) in ``tree``, every link followed, confined to the tree: its real path; else an
    InputError naming ``{artifact}`` (a file of the commit that links outside is refused, not followed)."""
    root = os.path.realpath(tree)
    real = os.path.realpath(os.path.join(root, path)) if relative_inside(path) else None
    if real is None or os.path.commonpath([root, real]) != root:
        where = f"leads outside the tree (to {real})" if real else "is not a path inside the tree"
        raise InputError(f"{{artifact}} {path!r} {where}: nothing is copied", fields=["artifact"])
    return real


def failure_reason(measurement: Any) -> str:
    """Why a build or a run failed: its notes (exit status...) and the end of its stderr."""
    reason = "; ".join(measurement.notes) or measurement.status
    return reason + (f" (stderr: {measurement.stderr_tail})" if measurement.stderr_tail else "")


def metric_value(measurement: Any, metric: str) -> float | None:
    values = measurement.values.get(metric) if measurement.ok else None
    if not values:
        return None
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def artifact_digest(path: str) -> str | None:
    """GNU build-id of an ELF file when it has one, else the SHA-256 of its bytes."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    marker = data.find(b"GNU\x00") if data[:4] == b"\x7fELF" else -1
    while marker >= 12:  # ELF notes: namesz 4, descsz, type, "GNU\0", desc (little-endian files)
        namesz = int.from_bytes(data[marker - 12 : marker - 8], "little")
        size = int.from_bytes(data[marker - 8 : marker - 4], "little")
        kind = int.from_bytes(data[marker - 4 : marker], "little")
        if namesz == 4 and kind == 3 and 8 <= size <= 64:  # NT_GNU_BUILD_ID
            return "build-id:" + data[marker + 4 : marker + 4 + size].hex()
        marker = data.find(b"GNU\x00", marker + 4)
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Recorder:
    """One store invocation per revision (labels rev, commit_time, role), runs added as they complete.

    With ``spool`` (a callback for the store's one-line messages), a PostgreSQL server that goes
    away does not stop the bisection: the store's own mechanism (``spool_on_disconnect``, as
    ``abstat run`` uses it) moves the invocations in progress to a local SQLite file, and brings it
    home when they end if the server answers again.  Invocations of revisions first measured after
    that are begun in the same file.  A revision whose invocation could not be begun because the
    server had just gone, before the store spooled, keeps its runs here until the next run of an
    invocation begun on the server (every batch has one: the reference run), or the end, makes the
    store spool.  Any other store error stops the bisection, as before."""

    def __init__(
        self,
        store: Any,
        experiment: str,
        repo: str,
        argv: Sequence[str],
        settings: dict[str, Any],
        spool: Callable[[str], None] | None = None,
    ) -> None:
        from abstat.box import machine

        self.store = store
        self.experiment = experiment
        self.repo = repo
        self.argv = list(argv)
        self.settings = settings
        self.machine = machine.collect()
        self.invocations: dict[tuple[str, str], Any] = {}
        self.where: dict[tuple[str, str], Any] = {}  # key -> the store holding its invocation (or its spool)
        self.waiting: dict[tuple[str, str], list[dict[str, Any]]] = {}  # runs whose invocation is not begun yet
        self.ends: dict[tuple[str, str], tuple[str, list[str]]] = {}  # ... and how to finish it
        self.counts: dict[tuple[str, str], int] = {}
        self.failures: dict[tuple[str, str], str] = {}  # (sha, role) -> why its last failed run failed
        self.failed: dict[tuple[str, str], int] = {}  # (sha, role) -> how many of its runs failed
        self.position = 0
        self.spooling = spool is not None
        if spool is not None:
            store.spool_on_disconnect(spool)

    def _begin(self, key: tuple[str, str]) -> Any | None:
        """The invocation of ``key``, begun where runs go now; None while it waits (see the class)."""
        if key in self.invocations:
            return self.invocations[key]
        labels = {"rev": key[0], "commit_time": commit_time(key[0], self.repo), "role": key[1]}
        arguments = dict(argv=self.argv, settings=self.settings, labels=labels, variants=[VARIANT])
        spool = getattr(self.store, "spool", None)
        target = spool if spool is not None else self.store
        try:
            self.invocations[key] = target.start_invocation(self.experiment, self.machine, **arguments)
        except InputError as err:
            gone = err.__context__ is not None and self.store.db.is_disconnect(err.__context__)
            if not (gone and spool is None and self.spooling and self.store in self.where.values()):
                raise
            self.waiting.setdefault(key, [])
            return None
        self.where[key] = target
        self.counts.setdefault(key, 0)
        return self.invocations[key]

    def _settle(self) -> None:
        """Begin the waiting invocations (in the spool once the store spooled) and hand them their runs."""
        for key in list(self.waiting):
            runs = self.waiting.pop(key)
            if self._begin(key) is None:
                self.waiting[key] = runs
                continue
            for arguments in runs:
                self.where[key].add_run(self.invocations[key], **arguments)
            if key in self.ends:
                self._finish(key, *self.ends.pop(key))

    def _finish(self, key: tuple[str, str], status: str, notes: list[str]) -> None:
        self.where.pop(key).finish_invocation(self.invocations.pop(key), status, notes)

    def _write(self, key: tuple[str, str], arguments: dict[str, Any] | None, end: tuple[str, list[str]] | None) -> None:
        from abstat.box.runner import signals

        with signals.deferred():  # a signal lands after the commit, never inside the transaction
            if key in self.waiting or self._begin(key) is None:
                if arguments is not None:
                    self.waiting[key].append(arguments)
                if end is not None:
                    self.ends[key] = end
                return
            if arguments is not None:
                self.where[key].add_run(self.invocations[key], **arguments)
            if end is not None:
                self._finish(key, *end)
            if self.waiting:  # a run went through: to the server, or to the spool the store just made
                self._settle()

    def add(self, sha: str, role: str, command: str, started: float, measurement: Any) -> None:
        key = (sha, role)
        count = self.counts.setdefault(key, 0)
        arguments = dict(
            variant=VARIANT,
            command=command,
            iteration=count,
            position=self.position,
            status=measurement.status,
            exit_code=measurement.exit_code,
            started_at=started,
            wall=measurement.wall_s,
            values=measurement.values,
            units=measurement.units,
            notes=measurement.notes + ([f"stderr: {measurement.stderr_tail}"] if measurement.stderr_tail else []),
        )
        self.counts[key] = count + 1
        self.position += 1
        if not measurement.ok:
            self.failures[key] = failure_reason(measurement)
            self.failed[key] = self.failed.get(key, 0) + 1
        self._write(key, arguments, None)

    def skipped(self, sha: str, reason: str) -> None:
        self._write((sha, "skipped"), None, ("build-failed", [f"build failed: {reason}"]))

    def close(self, status: str, notes: Sequence[str] = ()) -> None:
        """Finish every invocation: those begun in the spool before the last begun on the server,
        whose end brings the spool home when the server answers again."""
        from abstat.box.runner import signals

        with signals.deferred():
            on_server = [key for key, where in self.where.items() if where is self.store]
            if self.waiting and on_server:  # its end makes the store spool if the server is gone
                self._finish(on_server.pop(0), status, list(notes))
                self._settle()
            for key in [key for key in self.where if key not in on_server] + on_server:
                self._finish(key, status, list(notes))
            if self.waiting:
                lost = sum(len(runs) for runs in self.waiting.values())
                self.waiting.clear()
                raise InputError(
                    f"the store took no invocation for {lost} run(s) after its server went away",
                    path=self.store.display,
                )


def measure(
    executor: Any,
    recorder: Recorder | None,
    sha: str,
    role: str,
    path: str,
    run: str,
    metric: str,
    timeout: float | None,
) -> float | None:
    """One run of the benchmark in ``path``; its value of ``metric`` (None when it failed)."""
    from abstat.box.runner import RunContext, signals

    signals.raise_if_stopped()  # a SIGTERM that an import swallowed stops the bisection here
    started = time.time()
    measurement = executor.measure(in_dir(path, run), RunContext(role), timeout=timeout)
    if recorder is not None:
        recorder.add(sha, role, run, started, measurement)
    value = metric_value(measurement, metric)
    if value is None and measurement.ok:
        raise InputError(
            f"the benchmark's output has no value of metric {metric!r} "
            f"({'; '.join(measurement.notes) or 'no match'}) at {sha[:12]}"
        )
    return value
