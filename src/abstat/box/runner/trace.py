"""A kernel function's calls and time per call during each run: ``--trace``.

For every measured run a bpftrace program is started, waited for until its
probes are attached, and stopped (SIGTERM) once the command has ended; its
aggregates become metrics of that run:

- ``NAME.calls``: calls that began and ended during the run (count);
- ``NAME.ns``: their mean time per call, entry to return (ns); not recorded
  for a run without calls.

A probe is ``FUNC`` (a kernel function: ``kfunc``/``kretfunc`` where the
kernel has BTF and bpftrace supports it, else ``kprobe``/``kretprobe``), or
``tracepoint:GROUP:ENTER,EXIT`` (the time from one tracepoint to the other
on the same thread), optionally named: ``NAME=PROBE``.  Only the measured
process tree is traced: threads forked from abstat while the tracer runs, and
their descendants (``tracepoint:sched:sched_process_fork``); each call is
charged to the child of abstat it descends from, and only children that have
ended by the end of the run count (abstat's own helper processes, still
running, do not).  ``all_cpus`` traces every process instead.

Whether each probe attaches is checked once per process (:func:`check_probe`)
before any run; a probe that cannot attach is a one-line ``ValueError``
naming it and bpftrace's reason.  Standard library only: on a lab run the
box's bpftrace traces the box's kernel.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import tempfile
import time

from abstat.box.runner import cgroup
from abstat.box.runner.btf import BTF_DIR, btf_names
from abstat.box.runner.model import FieldError, Measurement, RunContext, check_metric_name
from abstat.box.runner.reaper import TOKEN_VARIABLE

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

if TYPE_CHECKING:
    import subprocess

READY = "abstat-tracer-ready"
START_TIMEOUT_S = 300.0  # bpftrace compiles its program first: 30-40 s in a TCG guest on a loaded host
STOP_TIMEOUT_S = 30.0
MAP_KEYS = "65536"  # threads one run may fork and trace
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_TRACEPOINT = re.compile(r"tracepoint:([A-Za-z0-9_]{1,64}):([A-Za-z0-9_]{1,128}),([A-Za-z0-9_]{1,128})")
_WHERE = re.compile(r"^stdin:[\d:-]+:\s*")  # where in the generated program: says nothing to the user
_NOISE = ("couldn't set RLIMIT_MEMLOCK",)
_modes: dict[tuple[str, bool], str] = {}  # (probe, all_cpus) -> attach point kind that attached here


def parse_probe(text: str) -> tuple[str, str]:
    """``[NAME=]PROBE`` -> (metric name prefix, probe); ValueError with the user's message."""
    name, sep, probe = text.partition("=")
    if not sep:
        name, probe = "", text
    probe = probe.strip()
    match = _TRACEPOINT.fullmatch(probe)
    if match is None and not _SYMBOL.fullmatch(probe):
        raise FieldError(
            f"{{trace}} {text!r}: expected FUNC (a kernel function) or "
            "tracepoint:GROUP:ENTER,EXIT, optionally NAME=...",
            "trace",
        )
    if not name:
        if match is None:
            name = probe
        else:
            enter, leave = match.group(2), match.group(3)
            name = (
                enter[len("sys_enter_") :]
                if (enter.startswith("sys_enter_") and leave.startswith("sys_exit_") and enter[10:] == leave[9:])
                else enter
            )
    check_metric_name(name)
    return name, probe


def metric_names(name: str) -> tuple[str, str]:
    return f"{name}.calls", f"{name}.ns"


def _points(probe: str, mode: str) -> tuple[str, str]:
    match = _TRACEPOINT.fullmatch(probe)
    if match is not None:
        return f"tracepoint:{match.group(1)}:{match.group(2)}", f"tracepoint:{match.group(1)}:{match.group(3)}"
    return (f"kfunc:{probe}", f"kretfunc:{probe}") if mode == "kfunc" else (f"kprobe:{probe}", f"kretprobe:{probe}")


def script(probes: list[tuple[str, str]], all_cpus: bool) -> str:
    """The bpftrace program for ``(probe, mode)`` pairs; ``$1`` is the pid whose children are traced."""
    lines = [f'BEGIN {{ printf("{READY}\\n"); }}']
    if all_cpus:
        traced, root = "", "0"
    else:
        traced, root = " /@root[tid]/", "@root[tid]"
        lines += [
            "tracepoint:sched:sched_process_fork /pid == $1/ { @root[args->child_pid] = args->child_pid; }",
            "tracepoint:sched:sched_process_fork /pid != $1 && @root[tid]/ { @root[args->child_pid] = @root[tid]; }",
        ]
    for index, (probe, mode) in enumerate(probes):
        enter, leave = _points(probe, mode)
        lines += [
            f"{enter}{traced} {{ @s{index}[tid] = nsecs; }}",
            f"{leave} /@s{index}[tid]/ {{ @n{index}[{root}] = sum(nsecs - @s{index}[tid]); "
            f"@c{index}[{root}] = count(); delete(@s{index}[tid]); }}",
        ]
    if not all_cpus:
        lines.append("tracepoint:sched:sched_process_exit /@root[tid]/ { delete(@root[tid]); }")
    clears = ([] if all_cpus else ["clear(@root);"]) + [f"clear(@s{i});" for i in range(len(probes))]
    lines.append("END { " + " ".join(clears) + " }")
    return "\n".join(lines) + "\n"


def _reason(stderr: str, default: str = "bpftrace exited before its probes were attached") -> str:
    kept = [
        _WHERE.sub("", line.strip())
        for line in stderr.splitlines()
        if line.strip()
        and not any(noise in line for noise in _NOISE)
        and not line.lstrip().startswith("~")
        and ("ERROR" in line or "open(" in line or "FATAL" in line)
    ]
    text = "; ".join(dict.fromkeys(kept)) or default
    return text if len(text) <= 400 else text[:397] + "..."


def _home_cgroup() -> str | None:
    return cgroup.own_directory()


class Tracer:
    """One bpftrace process: :meth:`start` returns once attached (or raises RuntimeError with why)."""

    def __init__(self, program: str, target_pid: int, home: str | None) -> None:
        self.program = program
        self.target = target_pid
        self.home = home  # the cgroup the tracer lives in: not the run's, which is emptied after each command
        self.process: subprocess.Popen[str] | None = None
        self._err = tempfile.TemporaryFile(mode="w+", prefix="abstat-trace-")

    def _child(self) -> None:
        """In the tracer before exec: signals unblocked (abstat may hold SIGINT back), out of the run's cgroup."""
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        if self.home is not None:
            try:
                with open(os.path.join(self.home, "cgroup.procs"), "w") as handle:
                    handle.write("0")
            except OSError:
                pass

    def start(self, bpftrace: str) -> None:
        import subprocess  # here: abstat run imports this module at every start-up

        env = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}  # not swept as the run's
        env["BPFTRACE_MAP_KEYS_MAX"] = MAP_KEYS
        self._err.seek(0)
        self._err.truncate()
        self.process = subprocess.Popen(
            [bpftrace, "-f", "json", "-e", self.program, str(self.target)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
            text=True,
            start_new_session=True,
            preexec_fn=self._child,
        )
        assert self.process.stdout is not None
        # Raw reads, not readline(): a line held in a file object's buffer is invisible to select().
        fd = self.process.stdout.fileno()
        seen = b""
        deadline = time.monotonic() + START_TIMEOUT_S
        while READY.encode() not in seen:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                self.kill()
                raise RuntimeError(f"bpftrace did not attach its probes within {START_TIMEOUT_S:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.process.wait()
                raise RuntimeError(_reason(self.stderr()))
            seen = seen[-256:] + chunk

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read()

    def stop(self) -> dict[str, dict[str, float]]:
        """SIGTERM, wait, and its maps: ``{"@c0": {root: value}}``; RuntimeError when it did not end well
        (its maps are printed last: a bpftrace that did not exit 0 may not have printed them all)."""
        import subprocess  # here: abstat run imports this module at every start-up

        process, self.process = self.process, None
        if process is None:
            return {}
        # bpftrace (0.17) sees the signal between two polls of its buffers: one that lands just before
        # it blocks can be missed, so it is sent again until bpftrace ends.  SIGTERM, not SIGINT: once
        # out of its loop bpftrace resets SIGINT to the default action before it prints its maps, so
        # a SIGINT sent again then killed it with nothing printed, which read as a run without calls
        # (seen in a TCG guest, where its exit takes 1-2 s).  Its SIGTERM handler stays.
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while True:
            process.send_signal(signal.SIGTERM)
            try:
                out, _ = process.communicate(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.communicate()
                    raise RuntimeError(f"bpftrace did not stop within {STOP_TIMEOUT_S:g} s of SIGTERM") from None
        maps: dict[str, dict[str, float]] = {}
        for line in out.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("type") == "map" and isinstance(item.get("data"), dict):
                for key, value in item["data"].items():
                    maps[key] = value if isinstance(value, dict) else {"0": value}
        if process.returncode != 0:
            ended = (
                f"by signal {-process.returncode}" if process.returncode < 0 else f"with status {process.returncode}"
            )
            reason = _reason(self.stderr(), "its counts may not all be printed")
            raise RuntimeError(f"bpftrace ended {ended}: {reason}")
        return maps

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.communicate()

    def close(self) -> None:
        self.kill()
        self._err.close()


def find_bpftrace() -> str:
    path = shutil.which("bpftrace")
    if path is None:
        raise FieldError(
            "{trace}: bpftrace is not installed on this machine (e.g. apt-get install bpftrace); "
            "abstat has no other tracer",
            "trace",
        )
    return path


def check_probe(probe: str, all_cpus: bool) -> str:
    """The attach point kind (``tracepoint``, ``kfunc``, ``kprobe``) with which ``probe`` attaches
    here, checked by starting and stopping bpftrace once (cached); ValueError naming it and why not."""
    key = (probe, all_cpus)
    if key in _modes:
        return _modes[key]
    bpftrace = find_bpftrace()
    if _TRACEPOINT.fullmatch(probe):
        tries = ["tracepoint"]
    else:
        tries = (["kfunc"] if os.path.exists(f"{BTF_DIR}/vmlinux") and btf_names(probe) else []) + ["kprobe"]
    reasons = []
    for mode in tries:
        tracer = Tracer(script([(probe, mode)], all_cpus), os.getpid(), None)
        try:
            tracer.start(bpftrace)
            tracer.stop()
        except RuntimeError as err:
            reasons.append(f"{mode}: {err}" if len(tries) > 1 else str(err))
            continue
        finally:
            tracer.close()
        _modes[key] = mode
        return mode
    raise FieldError(f"{{trace}} {probe}: cannot attach: " + "; ".join(reasons), "trace")


class TraceCollector:
    """Starts the tracer before each measured command; its calls and time per call after it."""

    def __init__(self, probes: list[tuple[str, str]], all_cpus: bool) -> None:
        self.names = [name for name, _ in probes]
        self.all_cpus = all_cpus
        modes = [(probe, check_probe(probe, all_cpus)) for _, probe in probes]
        self.bpftrace = find_bpftrace()
        self.tracer = Tracer(script(modes, all_cpus), os.getpid(), _home_cgroup())
        self._failure: str | None = None

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        try:
            self.tracer.start(self.bpftrace)
            self._failure = None
        except RuntimeError as err:
            self._failure = f"--trace: the tracer did not start: {err}"
        return argv

    def _ended(self, root: str) -> bool:
        return self.all_cpus or not os.path.exists(f"/proc/{root}")

    def collect(self, measurement: Measurement, context: RunContext) -> None:
        try:
            maps = self.tracer.stop() if self._failure is None else {}
        except RuntimeError as err:
            self._failure = f"--trace: the tracer failed: {err}"
        if self._failure is not None:
            if measurement.ok:
                measurement.status = "failed"
            measurement.notes.append(self._failure)
            return
        if not measurement.ok:
            return
        for index, name in enumerate(self.names):
            calls_name, ns_name = metric_names(name)
            roots = [root for root in maps.get(f"@c{index}", {}) if self._ended(root)]
            calls = sum(float(maps[f"@c{index}"][root]) for root in roots)
            total = sum(float(maps.get(f"@n{index}", {}).get(root, 0)) for root in roots)
            measurement.values[calls_name] = [calls]
            measurement.units[calls_name] = "count"
            if calls:
                measurement.values[ns_name] = [total / calls]
                measurement.units[ns_name] = "ns"
            else:
                measurement.notes.append(f"--trace {name}: no calls during the run: no time per call")

    def close(self) -> list[str]:
        self.tracer.close()
        return []
