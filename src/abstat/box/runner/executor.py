"""The executor: runs a measured command, hooks and background load as real processes.

An executor measures one command (:meth:`ProcessExecutor.measure`), runs hooks
(:meth:`~ProcessExecutor.run_hook`) and starts background load
(:meth:`~ProcessExecutor.start_background`).  The experiment loop only talks
to the :class:`~abstat.box.runner.model.Executor` interface, so scheduling, hooks
and failure handling are tested deterministically with
:class:`~abstat.box.runner.fake.FakeExecutor`.  The process primitives are in
:mod:`abstat.box.runner.process`, background loads in :mod:`abstat.box.runner.background`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

from abstat.box.isolate import Isolation
from abstat.box.runner import perf as perf_mod
from abstat.box.runner import cgroup, reaper
from abstat.box.runner.background import ProcessBackground
from abstat.box.runner.containment import Containment
from abstat.box.runner.fake import FakeBackground, FakeExecutor
from abstat.box.runner.metrics import MetricScanner, scan_output
from abstat.box.runner.model import (
    BUILTIN_METRICS,
    BackgroundHandle,
    Collector,
    Command,
    Executor,
    Measurement,
    MetricPattern,
    RunContext,
)
from abstat.box.runner.process import (
    describe_status,
    group_alive,
    kill_group,
    live_group_members,
    own_peak_rss_kib,
    resolve,
    spawn,
    tail,
    wait,
)

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    import resource

_yield = getattr(os, "sched_yield", lambda: None)
_CPUS = os.cpu_count() or 1
#: How long abstat sleeps before a measured command's first timestamp when every CPU has a runnable
#: task (issue 26; benchmarks/run_bias.py measures it against hyperfine -N).
SETTLE_S = 0.00025


_LOADAVG = [-2]  # /proc/loadavg, kept open (-1: it cannot be read here)


def _contended() -> bool:
    """Whether every CPU has a runnable task now, this process included (/proc/loadavg's fourth field)."""
    fd = _LOADAVG[0]
    if fd == -2:
        try:
            fd = _LOADAVG[0] = os.open("/proc/loadavg", os.O_RDONLY)
        except OSError:
            fd = _LOADAVG[0] = -1
    if fd < 0:
        return False
    try:
        running = int(os.pread(fd, 256, 0).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running >= _CPUS  # this process is one of them


def settle() -> None:
    """Before a measured command's first timestamp: let the scheduler settle abstat's own work.

    abstat's work between runs (rusage, output, the store's commit: about a millisecond of
    CPU) is charged to it by the scheduler: on a busy machine it then waits longer to run
    again when the command exits, and that wait is inside the measured time.  A short sleep
    lets the scheduler (EEVDF's lag, Linux 6.6+) settle that account first: with 1 ms of work
    between runs, at load 7-10 on 2 CPUs, ``true`` read +0.02 ms against hyperfine -N after a
    0.25 ms sleep, +2.55 ms after ``sched_yield`` and +5.29 ms after neither (run_bias.py).
    On an idle machine the sleep would only lengthen the time between runs: then abstat yields."""
    if _contended():
        time.sleep(SETTLE_S)
    else:
        _yield()


_FS_ENCODING = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())
_TOKEN_KEY = reaper.TOKEN_VARIABLE.encode("ascii")


def _encode(env: Mapping[str, str]) -> dict[bytes, bytes]:
    """``env`` as posix_spawn takes it: str.encode as os.fsencode does it, without a Python call per variable."""
    code, errors = _FS_ENCODING
    return {key.encode(code, errors): value.encode(code, errors) for key, value in env.items()}


__all__ = [
    "BackgroundHandle",
    "Executor",
    "FakeBackground",
    "FakeExecutor",
    "ProcessBackground",
    "ProcessExecutor",
    "RunContext",
    "describe_status",
    "own_peak_rss_kib",
]


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
        collectors: Sequence[Collector] = (),
        cpus: Sequence[int] = (),
        isolate: bool = False,
    ) -> None:
        """``subreaper``: make this process the Linux child subreaper, so that
        orphans of the commands stay below it and can be found and ended.
        ``cgroups``: where cgroup v2 is writable, this process moves into the
        run's cgroup until :meth:`close`, and everything in it but this process
        is ended after each measured command (docs/processes.md).  Pass False
        for both in a program that runs child processes of its own concurrently:
        dead orphans re-parented here are reaped, by process id, and children
        born in the run's cgroup would be ended.  ``collectors``: further metric
        sources (:class:`~abstat.box.runner.model.Collector`), in order, around every
        measured command; :meth:`close` closes them.  ``cpus``: every measured command starts confined to
        these CPUs (the affinity its children inherit; empty: as abstat's own); ``isolate``: and those CPUs
        are theirs alone (:mod:`abstat.box.isolate`, restored by :meth:`close`)."""
        self.patterns = tuple(patterns)
        self.collectors = tuple(collectors)
        self.cpus = frozenset(cpus)
        self.notes: list[str] = []  # what the collectors said when closed
        self.isolation = Isolation(self.cpus) if isolate else None
        self.json_lines = json_lines
        self.perf = perf if perf is not None and perf.usable else None
        self._base_env = dict(os.environ)
        if extra_env:
            self._base_env.update(extra_env)
        self._encoded_env = _encode(self._base_env)  # once: a run encodes only what it adds
        self.containment = Containment(subreaper=subreaper, cgroups=cgroups)
        self._out = tempfile.TemporaryFile(prefix="abstat-out-")
        self._err = tempfile.TemporaryFile(prefix="abstat-err-")
        self._paths: dict[str, str] = {}
        self._argvs: dict[Command, list[str]] = {}  # shlex once per command, not once per run
        self._rss_floor = 0  # abstat's peak RSS as last read: it only grows (see _values)
        self._perf_path: str | None = None
        if self.perf is not None:
            fd, self._perf_path = tempfile.mkstemp(prefix="abstat-perf-", suffix=".csv")
            os.close(fd)

    def close(self) -> None:
        """End every process the run started (see docs/processes.md); idempotent."""
        collectors, self.collectors = self.collectors, ()
        for collector in collectors:
            self.notes.extend(collector.close())
        if self.isolation is not None:
            self.notes.append(self.isolation.summary())
            self.notes.extend(f"--isolate: not restored: {line}" for line in self.isolation.close())
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

    def _execute(
        self, argv: list[str], added: Mapping[str, str], timeout: float | None, *, sweep: bool = True
    ) -> tuple[str, int | None, int, resource.struct_rusage | None, list[str]]:
        """Spawn with the base environment plus ``added``, wait; (status, exit code, wall ns, rusage, notes)."""
        token, encoded = self._environment(added)
        self._reset_files()
        out_fd, err_fd = self._out.fileno(), self._err.fileno()
        path = self._path(argv[0])
        # Where cgroup v2 is writable, a measured command is born in the run's cgroup, and a hook
        # (whose daemon may outlive it) in one of its own; abstat moves back after the wait.
        own = None if sweep else self.containment.enter_own_cgroup()
        # (--isolate on cgroup v2 has the command born in the partition: it is then ended by its token)
        shared = sweep and self.containment.in_cgroup() and (self.isolation is None or self.isolation.version == 1)
        # --cpus: this thread takes the CPUs for the spawn (posix_spawn's child inherits its affinity) and
        # until the wait ends (it only waits meanwhile), so nothing is done between the timestamps
        pinned = os.sched_getaffinity(0) if sweep and self.cpus else None
        isolated = self.isolation if sweep else None
        if isolated is not None:  # --isolate: born in the isolated cpuset, where this thread waits
            isolated.enter()
        if pinned is not None:
            os.sched_setaffinity(0, self.cpus)
        settle()  # abstat's own work between runs must not be charged to the command (issue 26)
        start = time.perf_counter_ns()
        try:
            pid = spawn(argv, encoded, out_fd, err_fd, path)
        except OSError as err:
            self._release(isolated, pinned)
            self.containment.leave(own)
            if own is not None:
                self.containment.end_cgroup(own, 0)
            return "failed", None, 0, None, [f"cannot execute {argv[0]!r}: {err.strerror or err}"]
        if not shared:  # born in the run's cgroup, it is ended with it: nothing to tell inside the timed part
            self.containment.started(pid)
        try:
            wait_status, usage, timed_out = wait(pid, timeout)
            wall_ns = time.perf_counter_ns() - start
            self._release(isolated, pinned)
            isolated, pinned = None, None
            code, notes = _waited(pid, wait_status, timed_out, timeout, sweep)
        finally:
            self._release(isolated, pinned)  # the wait was interrupted
            escaped = self._ended(pid, token, own, sweep=sweep, shared=shared)
        if escaped:
            notes.append(f"killed {escaped} process(es) the command left running outside its process group")
        if timed_out:
            return "timeout", None, wall_ns, usage, notes
        return ("failed" if code != 0 else "ok"), code, wall_ns, usage, notes

    def _environment(self, added: Mapping[str, str]) -> tuple[str, dict[bytes, bytes]]:
        """The run's containment token, and the environment with it and ``added``, encoded."""
        token = self.containment.next_token(self._base_env)
        # Encoded here, not by posix_spawn between the timestamps; the base environment was encoded once.
        encoded = self._encoded_env.copy()
        encoded.update(_encode(added))
        encoded[_TOKEN_KEY] = token.encode("ascii")
        return token, encoded

    def _path(self, name: str) -> str:
        """Where ``name`` is (resolved once)."""
        path = self._paths.get(name)
        if path is None:
            path = self._paths[name] = resolve(name)
        return path

    @staticmethod
    def _release(isolated: Isolation | None, pinned: set[int] | None) -> None:
        """Out of the isolated cpuset (--isolate), back to abstat's own CPUs (--cpus)."""
        if isolated is not None:
            isolated.leave()
        if pinned is not None:
            os.sched_setaffinity(0, pinned)

    def _ended(self, pid: int, token: str, own: str | None, *, sweep: bool, shared: bool) -> int:
        """After the wait: leave the command's cgroup, end what it left; how many processes escaped."""
        self.containment.leave(own)
        escaped = 0
        if not sweep:  # a hook's daemon lives in its cgroup until the run ends
            if own is not None:
                cgroup.remove(own)  # only when empty
        elif shared:
            escaped = self.containment.end_command(pid)
        else:
            escaped = self.containment.sweep(token)
        if not shared:
            self.containment.ended(pid)
        return escaped

    def _stderr_tail(self) -> str:
        size = self._err.seek(0, os.SEEK_END)
        self._err.seek(max(0, size - 8192))
        return tail(self._err.read())

    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        argv = self._argvs.get(command)
        if argv is None:
            argv = self._argvs[command] = command.argv()
        argv = list(argv)
        if self.perf is not None and self._perf_path is not None:
            argv = perf_mod.wrap(argv, self.perf, self._perf_path)
        for collector in self.collectors:
            argv = collector.wrap(argv, context)
        status, code, wall_ns, usage, notes = self._execute(argv, context.env(), timeout)
        wall = wall_ns / 1e9
        measurement = Measurement(status, code, wall, notes=notes)
        if status != "ok":
            measurement.stderr_tail = self._stderr_tail()
        else:
            assert usage is not None
            self._values(measurement, usage)
        for collector in self.collectors:
            collector.collect(measurement, context)
        return measurement

    def _values(self, measurement: Measurement, usage: resource.struct_rusage) -> None:
        """The metrics of a successful run: rusage, perf counters, what its output holds."""
        wall, notes = measurement.wall_s, measurement.notes
        values = measurement.values
        values["wall"] = [wall]
        values["user"] = [usage.ru_utime]
        values["sys"] = [usage.ru_stime]
        # abstat's peak RSS only grows: at or below the last value read, the run's peak says nothing
        # and /proc/self/status need not be read again (it is, for a peak above it).
        floor: int | None = self._rss_floor
        if usage.ru_maxrss > self._rss_floor:
            floor = own_peak_rss_kib()
            self._rss_floor = max(self._rss_floor, floor or 0)
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
            counters, units, missing, running = perf_mod.read_output(self._perf_path)
            for event, value in counters.items():
                values[event] = [value]
                measurement.units[event] = units.get(event, "count")
            if missing:
                notes.append("perf: not counted: " + ", ".join(missing))
            multiplexed = perf_mod.multiplexing_note(running)
            if multiplexed:
                notes.append(multiplexed)
        # A command that printed nothing has no JSON lines to read (the usual micro-benchmark: 10 µs a run).
        if self.patterns or (self.json_lines and self._out.seek(0, os.SEEK_END) > 0):
            self._out.seek(0)
            scanner = MetricScanner(self.patterns, json_lines=self.json_lines, reserved=values.keys())
            measurement.stdout = scan_output(self._out, scanner)
            notes.extend(scanner.json_notes())
            for name, numbers in scanner.json_values.items():
                values.setdefault(name, []).extend(numbers)
            for name, unit in scanner.json_units.items():  # perf stat -j lines: msec for task-clock
                measurement.units.setdefault(name, unit)
            for pattern in self.patterns:
                if pattern.unit:
                    measurement.units[pattern.name] = pattern.unit
            values.update(scanner.regex_values)
            # A benchmark that did not print its result (or printed JSON too deep to read) did not succeed.
            failures = scanner.json_errors() + (scanner.regex_notes() if self.patterns else [])
            if failures:
                measurement.status = "failed"
                measurement.stderr_tail = self._stderr_tail()
            notes.extend(failures)

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        env = context.env()
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


def _waited(pid: int, wait_status: int, timed_out: bool, timeout: float | None, sweep: bool) -> tuple[int, list[str]]:
    """The exit code and the notes of a command waited for; what it left in its process group killed."""
    notes: list[str] = []
    if timed_out:
        notes.append(f"timed out after {timeout:g} s: process group killed")
    code = os.waitstatus_to_exitcode(wait_status)
    if code != 0 and not timed_out:
        notes.append(describe_status(wait_status))
    # A hook's group is not killed when its shell exits: a daemon it starts (`server &`, or
    # daemon(3): fork, the parent exits, the child calls setsid) may still be in the group
    # at that moment, and the benchmark needs it.  What a hook starts ends with the run.
    if sweep and group_alive(pid):
        left = live_group_members(pid)
        kill_group(pid)
        if left:
            notes.append("killed processes the command left running in its process group")
    return code, notes
