"""Executors: the real one (processes, ``os.wait4``) and a fake for tests.

An executor measures one command (:meth:`measure`), runs hooks
(:meth:`run_hook`) and starts background load (:meth:`start_background`).
The experiment loop only talks to this interface, so scheduling, hooks and
failure handling are tested deterministically with :class:`FakeExecutor`.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from abstat.runner import perf as perf_mod
from abstat.runner import cgroup, reaper, signals
from abstat.runner.containment import Containment
from abstat.runner.metrics import MetricScanner, scan_output
from abstat.runner.model import BUILTIN_METRICS, Command, Measurement, MetricPattern


@dataclass(frozen=True)
class RunContext:
    """Which variant and iteration a command runs for (exported to it)."""

    variant: str
    iteration: int = -1
    warmup: bool = False

    def env(self) -> dict[str, str]:
        return {
            "ABSTAT_VARIANT": self.variant,
            "ABSTAT_ITERATION": str(self.iteration),
            "ABSTAT_WARMUP": "1" if self.warmup else "0",
        }


class BackgroundHandle(Protocol):
    command: Command

    def exited(self) -> str | None:
        """None while running, else how it ended (e.g. ``exit status 1``)."""

    def failure(self) -> str | None:
        """None while it provides the load, else how it failed or ended."""

    def stop(self) -> list[str]:
        """Stop it with its whole process group; return notes."""


class Executor(Protocol):
    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement: ...

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement: ...

    def start_background(self, command: Command) -> BackgroundHandle: ...

    def close(self) -> None: ...


def describe_status(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit status {code}"


def own_peak_rss_kib() -> int | None:
    """This process's peak RSS (VmHWM) in KiB.

    The kernel starts a child's ``ru_maxrss`` at its parent's peak RSS
    (exec records the old address space's high-water mark), so a measured
    peak at or below this value says nothing about the command itself.
    """
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _tail(data: bytes, lines: int = 3, limit: int = 400) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    tail = " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())
    return tail[-limit:]


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal a process group; True when it still had members."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_alive(pgid: int) -> bool:
    """True while group ``pgid`` has members (orphaned zombies included)."""
    return _kill_group(pgid, 0)


def _live_group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (from /proc).

    ``kill(-pgid, 0)`` also succeeds while orphaned zombies of the group wait
    for init to reap them, which can take a second; they are already dead.
    """
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [pgid] if _group_alive(pgid) else []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def _resolve(program: str) -> str:
    """The executable ``program`` names, found on PATH now rather than inside the timed region."""
    if os.sep in program:
        return program
    found = shutil.which(program)
    return found if found is not None else program


def _spawn(argv: list[str], env: Mapping[str, str], stdout_fd: int, stderr_fd: int, path: str | None = None) -> int:
    """Start ``argv`` in its own process group, stdin from /dev/null.

    A new process group (``setpgid``), not a new session: ``setsid`` would
    also put the command in a new scheduler autogroup, which measurably
    changes its timing on a loaded machine (hyperfine does neither).
    """
    return os.posix_spawnp(
        path or argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
            (os.POSIX_SPAWN_DUP2, stderr_fd, 2),
        ],
        setpgroup=0,
    )


def _wait(pid: int, timeout: float | None) -> tuple[int, os.struct_rusage | None, bool]:
    """Wait for ``pid``; on timeout or interruption kill its whole group.

    Returns (wait status, rusage of that child and its reaped descendants,
    timed out).  ``os.wait4`` gives this child's own usage, not the
    cumulative usage of every child abstat ever waited for.
    """
    try:
        if timeout is None:
            _, status, usage = os.wait4(pid, 0)
            return status, usage, False
        deadline = time.monotonic() + timeout
        pidfd = -1
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        if pidfd >= 0:
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0 or poller.poll(max(1, int(left * 1000) + 1)):
                        break
            finally:
                os.close(pidfd)
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done == pid:
                return status, usage, False
        else:
            pause = 0.001
            while time.monotonic() < deadline:
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done == pid:
                    return status, usage, False
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
        _kill_group(pid)
        _, status, usage = os.wait4(pid, 0)
        return status, usage, True
    except BaseException:
        # Ctrl-C (or anything else) while waiting: leave nothing behind.
        _kill_group(pid)
        try:
            os.wait4(pid, 0)
        except ChildProcessError:
            pass
        raise


class ProcessBackground:
    """A background command in its own process group."""

    def __init__(self, command: Command, env: Mapping[str, str], grace: float = 2.0,
                 containment: Containment | None = None) -> None:
        self.command = command
        self.grace = grace
        self._containment = containment or Containment(subreaper=False, supervise=False)
        env, self._token = self._containment.environment(env)
        self._cgroup = self._containment.enter_own_cgroup()
        try:
            with open(os.devnull, "wb") as devnull:
                self.pid = _spawn(command.argv(), env, devnull.fileno(), devnull.fileno())
        finally:
            self._containment.leave(self._cgroup)
        self._containment.keep.add(self.pid)
        self._containment.started(self.pid)
        self._ended: str | None = None

    def exited(self) -> str | None:
        if self._ended is None:
            done, status, _ = os.wait4(self.pid, os.WNOHANG)
            if done == self.pid:
                self._ended = describe_status(status)
        return self._ended

    def failure(self) -> str | None:
        """How the background load failed or ended; None while it runs.

        A command that exits 0 while other members of its process group go on
        (``sh -c 'load &'``) still provides the load.
        """
        ended = self.exited()
        if ended is None or (ended == "exit status 0" and _live_group_members(self.pid)):
            return None
        return ended

    def _escaped(self) -> list[int]:
        """Live processes of this load outside its process group (setsid, setpgid)."""
        if self._cgroup is not None:
            return [pid for pid in cgroup.members(self._cgroup) if pid != self.pid and reaper.outside_group(pid, self.pid)]
        return [pid for pid in self._containment._left(self._token) if pid != self.pid]

    def stop(self) -> list[str]:
        """SIGTERM to the load's group and its escaped descendants, up to
        ``grace`` seconds to end, then SIGKILL.  A second Ctrl-C or SIGTERM
        meanwhile sends SIGKILL at once; it never abandons the stop."""
        notes: list[str] = []
        early = self.exited()
        if early is not None:
            notes.append(f"background command {self.command.text!r} had already ended ({early})")
        with signals.deferred():
            _kill_group(self.pid, signal.SIGTERM)
            reaper.kill(self._escaped(), signal.SIGTERM)
            deadline = time.monotonic() + self.grace
            insisted = False
            while time.monotonic() < deadline:
                self.exited()
                if self._ended is not None and not self._escaped() and (
                        not _group_alive(self.pid) or not _live_group_members(self.pid)):
                    break
                if signals.wait_for_signal(0.01) is not None:
                    insisted = True
                    break
            left = (_live_group_members(self.pid) if _group_alive(self.pid) else []) + self._escaped()
            _kill_group(self.pid, signal.SIGKILL)
            if self._cgroup is not None:
                self._containment.end_cgroup(self._cgroup, self.pid)
            else:
                self._containment.sweep(self._token)
            if left and insisted:
                notes.append(f"background command {self.command.text!r}: interrupted again while it was "
                             "being stopped: sent SIGKILL")
            elif left:
                notes.append(
                    f"background command {self.command.text!r} ignored SIGTERM for {self.grace:g} s: sent SIGKILL"
                )
            if self._ended is None:
                _, status, _ = os.wait4(self.pid, 0)
                self._ended = describe_status(status)
            self._containment.keep.discard(self.pid)
            self._containment.ended(self.pid)
        return notes


class ProcessExecutor:
    """Runs real processes without a shell (unless the command asks for one).

    Wall time is ``time.perf_counter_ns`` around spawn and ``os.wait4``;
    user/sys time, peak RSS and context switches come from the rusage
    ``wait4`` returns for the measured process.  Standard output goes to a
    temporary file (no pipe to drain, no deadlock) and is scanned for
    ``--metric`` patterns and JSON lines afterwards.
    """

    def __init__(
        self,
        *,
        patterns: tuple[MetricPattern, ...] | list[MetricPattern] = (),
        json_lines: bool = True,
        perf: perf_mod.PerfSupport | None = None,
        extra_env: Mapping[str, str] | None = None,
        subreaper: bool = True,
        cgroups: bool = True,
    ) -> None:
        """``subreaper``: make this process the Linux child subreaper, so that
        orphans of the commands stay below it and can be found and ended.
        ``cgroups``: where cgroup v2 is writable, this process moves into the
        run's cgroup until :meth:`close`, and everything in it but this process
        is ended after each measured command (docs/processes.md).  Pass False
        for both in a program that runs child processes of its own concurrently:
        dead orphans re-parented here are reaped, by process id, and children
        born in the run's cgroup would be ended."""
        self.patterns = tuple(patterns)
        self.json_lines = json_lines
        self.perf = perf if perf is not None and perf.usable else None
        self._base_env = dict(os.environ)
        if extra_env:
            self._base_env.update(extra_env)
        self.containment = Containment(subreaper=subreaper, cgroups=cgroups)
        self._out = tempfile.TemporaryFile(prefix="abstat-out-")
        self._err = tempfile.TemporaryFile(prefix="abstat-err-")
        self._paths: dict[str, str] = {}
        self._perf_path: str | None = None
        if self.perf is not None:
            fd, self._perf_path = tempfile.mkstemp(prefix="abstat-perf-", suffix=".csv")
            os.close(fd)

    def close(self) -> None:
        """End every process the run started (see docs/processes.md); idempotent."""
        self.containment.close()
        self._out.close()
        self._err.close()
        if self._perf_path:
            try:
                os.unlink(self._perf_path)
            except OSError:
                pass
            self._perf_path = None

    def _reset_files(self) -> None:
        for handle in (self._out, self._err):
            handle.seek(0)
            handle.truncate()

    def _env(self, context: RunContext) -> dict[str, str]:
        env = dict(self._base_env)
        env.update(context.env())
        return env

    def _execute(
        self, argv: list[str], env: Mapping[str, str], timeout: float | None, *, sweep: bool = True
    ) -> tuple[str, int | None, int, os.struct_rusage | None, list[str]]:
        """Spawn, wait; (status, exit code, wall ns, rusage, notes)."""
        env, token = self.containment.environment(env)
        self._reset_files()
        out_fd, err_fd = self._out.fileno(), self._err.fileno()
        path = self._paths.get(argv[0])
        if path is None:
            path = self._paths[argv[0]] = _resolve(argv[0])
        # Where cgroup v2 is writable, a measured command is born in the run's cgroup, and a hook
        # (whose daemon may outlive it) in one of its own; abstat moves back after the wait.
        own = None if sweep else self.containment.enter_own_cgroup()
        shared = sweep and self.containment.in_cgroup()
        start = time.perf_counter_ns()
        try:
            pid = _spawn(argv, env, out_fd, err_fd, path)
        except OSError as err:
            self.containment.leave(own)
            if own is not None:
                self.containment.end_cgroup(own, 0)
            return "failed", None, 0, None, [f"cannot execute {argv[0]!r}: {err.strerror or err}"]
        self.containment.started(pid)
        try:
            wait_status, usage, timed_out = _wait(pid, timeout)
            wall_ns = time.perf_counter_ns() - start
            notes: list[str] = []
            if timed_out:
                notes.append(f"timed out after {timeout:g} s: process group killed")
            code = os.waitstatus_to_exitcode(wait_status)
            if code != 0 and not timed_out:
                notes.append(describe_status(wait_status))
            # A hook's group is not killed when its shell exits: a daemon it starts (`server &`, or
            # daemon(3): fork, the parent exits, the child calls setsid) may still be in the group
            # at that moment, and the benchmark needs it.  What a hook starts ends with the run.
            if sweep and _group_alive(pid):
                left = _live_group_members(pid)
                _kill_group(pid)
                if left:
                    notes.append("killed processes the command left running in its process group")
        finally:
            self.containment.leave(own)
            if not sweep:  # a hook's daemon lives in its cgroup until the run ends
                escaped = 0
                if own is not None:
                    cgroup.remove(own)  # only when empty
            elif shared:
                escaped = self.containment.end_command(pid)
            else:
                escaped = self.containment.sweep(token)
            self.containment.ended(pid)
        if escaped:
            notes.append(f"killed {escaped} process(es) the command left running outside its process group")
        if timed_out:
            return "timeout", None, wall_ns, usage, notes
        return ("failed" if code != 0 else "ok"), code, wall_ns, usage, notes

    def _stderr_tail(self) -> str:
        size = self._err.seek(0, os.SEEK_END)
        self._err.seek(max(0, size - 8192))
        return _tail(self._err.read())

    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        argv = command.argv()
        if self.perf is not None and self._perf_path is not None:
            argv = perf_mod.wrap(argv, self.perf, self._perf_path)
        status, code, wall_ns, usage, notes = self._execute(argv, self._env(context), timeout)
        wall = wall_ns / 1e9
        measurement = Measurement(status, code, wall, notes=notes)
        if status != "ok":
            measurement.stderr_tail = self._stderr_tail()
            return measurement
        assert usage is not None
        values = measurement.values
        values["wall"] = [wall]
        values["user"] = [usage.ru_utime]
        values["sys"] = [usage.ru_stime]
        floor = own_peak_rss_kib()
        if floor is None or usage.ru_maxrss > floor:
            values["maxrss"] = [float(usage.ru_maxrss)]
        else:
            notes.append(
                f"peak RSS not recorded: at most abstat's own {floor} KiB, which Linux charges to every "
                "process abstat starts"
            )
        values["vcsw"] = [float(usage.ru_nvcsw)]
        values["ivcsw"] = [float(usage.ru_nivcsw)]
        measurement.units.update(BUILTIN_METRICS)
        if self.perf is not None and self._perf_path is not None:
            counters, units, missing = perf_mod.read_output(self._perf_path)
            for event, value in counters.items():
                values[event] = [value]
                measurement.units[event] = units.get(event, "count")
            if missing:
                notes.append("perf: not counted: " + ", ".join(missing))
        if self.patterns or self.json_lines:
            self._out.seek(0)
            scanner = MetricScanner(self.patterns, json_lines=self.json_lines, reserved=values.keys())
            measurement.stdout = scan_output(self._out, scanner)
            notes.extend(scanner.json_notes())
            for name, numbers in scanner.json_values.items():
                values.setdefault(name, []).extend(numbers)
            if self.patterns:
                regex_notes = scanner.regex_notes()
                for pattern in self.patterns:
                    if pattern.unit:
                        measurement.units[pattern.name] = pattern.unit
                for name, numbers in scanner.regex_values.items():
                    values[name] = numbers
                if regex_notes:
                    # A benchmark that did not print its result did not succeed.
                    measurement.status = "failed"
                    measurement.stderr_tail = self._stderr_tail()
                notes.extend(regex_notes)
        return measurement

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        env = self._env(context)
        env["ABSTAT_HOOK"] = kind
        # A hook may start a daemon the benchmark needs, in its group or not: it is ended with the run,
        # in close() (or at once if the hook times out).
        status, code, wall_ns, _, notes = self._execute(command.argv(), env, timeout, sweep=False)
        measurement = Measurement(status, code, wall_ns / 1e9, notes=notes)
        if status != "ok":
            measurement.stderr_tail = self._stderr_tail()
        return measurement

    def start_background(self, command: Command) -> ProcessBackground:
        return ProcessBackground(command, self._base_env, containment=self.containment)


# --------------------------------------------------------------------------
# Fake executor (deterministic tests of scheduling, order, hooks, failures)

FakeBehaviour = Callable[[RunContext], "float | dict[str, float] | Measurement"]


class FakeBackground:
    def __init__(self, command: Command, log: list[tuple]) -> None:
        self.command = command
        self._log = log
        self._log.append(("background-start", command.text))

    def exited(self) -> str | None:
        return None

    def failure(self) -> str | None:
        return None

    def stop(self) -> list[str]:
        self._log.append(("background-stop", self.command.text))
        return []


class FakeExecutor:
    """Records every call in :attr:`log`; values come from ``behaviour``.

    ``behaviour(context)`` returns the wall time in seconds, a dict of
    metric values (``wall`` included or defaulting to 1.0), or a complete
    :class:`Measurement`.  ``failing_hooks`` maps a hook kind to the
    variant it fails for (``"*"`` for all).
    """

    def __init__(
        self,
        behaviour: FakeBehaviour | None = None,
        *,
        failing_hooks: Mapping[str, str] | None = None,
    ) -> None:
        self.behaviour = behaviour or (lambda context: 1.0)
        self.failing_hooks = dict(failing_hooks or {})
        self.log: list[tuple] = []
        self.closed = False

    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        self.log.append(("run", context.variant, context.iteration, context.warmup))
        result = self.behaviour(context)
        if isinstance(result, Measurement):
            return result
        if isinstance(result, dict):
            values = {name: [float(v)] for name, v in result.items()}
        else:
            values = {"wall": [float(result)]}
        values.setdefault("wall", [1.0])
        return Measurement("ok", 0, values["wall"][0], values, {"wall": "s"})

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        self.log.append((kind, context.variant, context.iteration))
        target = self.failing_hooks.get(kind)
        if target is not None and target in ("*", context.variant):
            return Measurement("failed", 1, 0.0, notes=["exit status 1"], stderr_tail="fake failure")
        return Measurement("ok", 0, 0.0)

    def start_background(self, command: Command) -> FakeBackground:
        return FakeBackground(command, self.log)

    def close(self) -> None:
        self.closed = True
