"""Git worktrees for a bisection, builds and measurements through the runner, records in the store."""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from abstat.errors import InputError
from abstat.history.revision import commit_time, git

VARIANT = "bench"


class Worktrees:
    """Detached worktrees of one repository under a private temporary directory, removed on close."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self.root = tempfile.mkdtemp(prefix="abstat-bisect-")
        self.paths: dict[str, str] = {}
        self.at: dict[str, str] = {}

    def checkout(self, name: str, sha: str) -> str:
        path = self.paths.get(name)
        if path is None:
            path = os.path.join(self.root, name)
            git(["worktree", "add", "--detach", "--force", path, sha], self.repo)
            self.paths[name] = path
        elif self.at.get(name) != sha:
            git(["checkout", "--quiet", "--force", "--detach", sha], path)
        self.at[name] = sha
        return path

    def close(self) -> None:
        for path in self.paths.values():
            git(["worktree", "remove", "--force", path], self.repo, check=False)
        shutil.rmtree(self.root, ignore_errors=True)
        git(["worktree", "prune"], self.repo, check=False)

    def __enter__(self) -> Worktrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def in_dir(path: str, command: str) -> Any:
    from abstat.runner import Command

    return Command(f"cd {shlex.quote(path)} && {command}", shell=True)


def build(executor: Any, command: str | None, path: str, label: str, timeout: float | None) -> str | None:
    """Run the build command in ``path``; None when it succeeded, else why it failed."""
    from abstat.runner import RunContext

    if not command:
        return None
    measurement = executor.run_hook("build", in_dir(path, command), RunContext(label), timeout=timeout)
    return None if measurement.ok else failure_reason(measurement)


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
        namesz = int.from_bytes(data[marker - 12:marker - 8], "little")
        size = int.from_bytes(data[marker - 8:marker - 4], "little")
        kind = int.from_bytes(data[marker - 4:marker], "little")
        if namesz == 4 and kind == 3 and 8 <= size <= 64:  # NT_GNU_BUILD_ID
            return "build-id:" + data[marker + 4:marker + 4 + size].hex()
        marker = data.find(b"GNU\x00", marker + 4)
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Recorder:
    """One store invocation per revision (labels rev, commit_time, role), runs added as they complete."""

    def __init__(self, store: Any, experiment: str, repo: str, argv: Sequence[str], settings: dict[str, Any]) -> None:
        from abstat import machine

        self.store = store
        self.experiment = experiment
        self.repo = repo
        self.argv = list(argv)
        self.settings = settings
        self.machine = machine.collect()
        self.invocations: dict[tuple[str, str], Any] = {}
        self.counts: dict[tuple[str, str], int] = {}
        self.failures: dict[tuple[str, str], str] = {}  # (sha, role) -> why its last failed run failed
        self.position = 0

    def invocation(self, sha: str, role: str) -> Any:
        key = (sha, role)
        if key not in self.invocations:
            labels = {"rev": sha, "commit_time": commit_time(sha, self.repo), "role": role}
            self.invocations[key] = self.store.start_invocation(
                self.experiment, self.machine, argv=self.argv, settings=self.settings, labels=labels,
                variants=[VARIANT])
            self.counts[key] = 0
        return self.invocations[key]

    def add(self, sha: str, role: str, command: str, started: float, measurement: Any) -> None:
        invocation = self.invocation(sha, role)
        key = (sha, role)
        self.store.add_run(
            invocation, variant=VARIANT, command=command, iteration=self.counts[key], position=self.position,
            status=measurement.status, exit_code=measurement.exit_code, started_at=started,
            wall=measurement.wall_s, values=measurement.values, units=measurement.units,
            notes=measurement.notes + ([f"stderr: {measurement.stderr_tail}"] if measurement.stderr_tail else []),
        )
        self.counts[key] += 1
        self.position += 1
        if not measurement.ok:
            self.failures[key] = failure_reason(measurement)

    def skipped(self, sha: str, reason: str) -> None:
        invocation = self.invocation(sha, "skipped")
        self.store.finish_invocation(invocation, "build-failed", [f"build failed: {reason}"])
        del self.invocations[(sha, "skipped")]

    def close(self, status: str, notes: Sequence[str] = ()) -> None:
        for invocation in self.invocations.values():
            self.store.finish_invocation(invocation, status, list(notes))
        self.invocations.clear()


def measure(executor: Any, recorder: Recorder | None, sha: str, role: str, path: str, run: str,
            metric: str, timeout: float | None) -> float | None:
    """One run of the benchmark in ``path``; its value of ``metric`` (None when it failed)."""
    from abstat.runner import RunContext

    started = time.time()
    measurement = executor.measure(in_dir(path, run), RunContext(role), timeout=timeout)
    if recorder is not None:
        recorder.add(sha, role, run, started, measurement)
    value = metric_value(measurement, metric)
    if value is None and measurement.ok:
        raise InputError(f"the benchmark's output has no value of metric {metric!r} "
                         f"({'; '.join(measurement.notes) or 'no match'}) at {sha[:12]}")
    return value
