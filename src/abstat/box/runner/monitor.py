"""Monitors beside the runs: ``--monitor interrupts,softirqs,vmstat,schedstat,pressure``.

In a kernel patch, what else changed is half the argument: context
switches, IPIs, TLB shootdowns, page faults.  A monitor reads one of the
kernel's counter files just before a measured command starts and again once
it has ended (outside the timed part: :meth:`MonitorCollector.wrap` runs
before the first timestamp, :meth:`MonitorCollector.collect` after the
last), and stores the differences as metrics named
``monitor.NAME.FIELD``, one value per run:

- ``interrupts``: ``/proc/interrupts``, each named row summed over the CPUs
  (``LOC`` timer, ``RES`` rescheduling, ``CAL`` function-call IPIs, ``TLB``
  shootdowns, ...) and the numbered device interrupts as ``device``;
- ``softirqs``: ``/proc/softirqs``, each row summed over the CPUs;
- ``vmstat``: ``/proc/vmstat``'s event counters of what a run does to
  memory (:data:`~abstat.box.runner.monitor_parse.VMSTAT_EVENTS`: ``pgfault``, ``pgmajfault``, page
  allocation, reclaim, compaction, NUMA, THP, ``nr_tlb_*`` where the kernel
  counts TLB flushes); its gauges of current state left out;
- ``schedstat``: ``/proc/schedstat``'s run time, wait time (ns) and time
  slices summed over the CPUs (a kernel with ``CONFIG_SCHEDSTATS``);
- ``pressure``: ``/proc/pressure/{cpu,memory,io}``'s ``some`` and ``full``
  stall totals (µs).

The counters are the whole machine's: what any other process does during a
run is counted too (as ``doctor`` and ``noise`` say of a busy machine).
Standard library only: on a lab run the box reads its own files.
"""

from __future__ import annotations

import contextlib
import os

from abstat.box.runner.model import FieldError, Measurement, RunContext
from abstat.box.runner.monitor_parse import parse

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

MONITORS = ("interrupts", "softirqs", "vmstat", "schedstat", "pressure")
_FILES = {
    "interrupts": "/proc/interrupts",
    "softirqs": "/proc/softirqs",
    "vmstat": "/proc/vmstat",
    "schedstat": "/proc/schedstat",
    "pressure": "/proc/pressure/cpu",
}
_WHY = {
    "schedstat": " (a kernel built with CONFIG_SCHEDSTATS has it)",
    "pressure": " (a kernel with CONFIG_PSI, not booted with psi=0, has it)",
}
MAX_FILE_BYTES = 4 << 20  # /proc/interrupts on a 1000-CPU machine is a few hundred KB
UNITS = {"schedstat.run": "ns", "schedstat.wait": "ns"}  # pressure's are set per field below

if TYPE_CHECKING:  # the runner also runs on Python 3.8, where dict[...] cannot be evaluated
    Counters = dict[str, int]


def _read(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return _pread_all(fd, 65536).decode("ascii", errors="replace")
    finally:
        os.close(fd)


def _pread_all(fd: int, size: int) -> bytes:
    """The whole file from its start, at most :data:`MAX_FILE_BYTES`: one ``pread`` where ``size`` covers it."""
    data = os.pread(fd, size, 0)
    if len(data) < size:
        return data
    chunks, total = [data], len(data)
    while total < MAX_FILE_BYTES:
        chunk = os.pread(fd, 65536, total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


class _File:
    """A counter file kept open for the whole run: a reading is one ``pread`` from its start (the kernel
    formats it anew), parsed only after the run."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self._size = 65536

    def read(self) -> bytes:
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        data = _pread_all(self._fd, self._size)
        while len(data) >= self._size and self._size < MAX_FILE_BYTES:
            self._size *= 2  # the next reading in one call
        return data

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


_PRESSURE = ("cpu", "memory", "io")


def parse_names(text: str) -> tuple[str, ...]:
    """``--monitor``'s ``NAME[,NAME]`` (ValueError naming an unknown one)."""
    names: list[str] = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        if name not in MONITORS:
            raise FieldError(f"{{monitor}} {name!r}: unknown monitor (known: {', '.join(MONITORS)})", "monitor")
        if name not in names:
            names.append(name)
    if not names:
        raise FieldError(f"{{monitor}}: name one or more of {', '.join(MONITORS)}", "monitor")
    return tuple(names)


def check(names: tuple[str, ...]) -> None:
    """ValueError (one line) naming a monitor whose file this kernel does not have or lets no one read."""
    for name in names:
        path = _FILES[name]
        try:
            _read(path)
        except OSError as err:
            raise FieldError(
                f"{{monitor}} {name}: cannot read {path}: {err.strerror or err}{_WHY.get(name, '')}", "monitor"
            ) from None


class _Reader:
    """One monitor's files, kept open: :meth:`read` takes their bytes (the part next to the timed window),
    :func:`parse` makes counters of them afterwards."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "pressure":
            self._files = [(f"# {r}\n".encode(), _File(f"/proc/pressure/{r}")) for r in _PRESSURE]
        else:
            self._files = [(b"", _File(_FILES[name]))]

    def read(self) -> bytes:
        """OSError where the monitor's main file cannot be read (pressure's memory and io may be missing)."""
        if len(self._files) == 1:
            return self._files[0][1].read()
        parts = []
        for index, (head, file) in enumerate(self._files):
            try:
                parts.append(head + file.read())
            except OSError:
                if index == 0:
                    raise
        return b"\n".join(parts)

    def close(self) -> None:
        for _, file in self._files:
            file.close()


def snapshot(name: str) -> Counters:
    """One monitor's counters now."""
    reader = _Reader(name)
    try:
        return parse(name, reader.read())
    finally:
        reader.close()


def unit_of(name: str, key: str) -> str | None:
    if name == "pressure":
        return "us"
    return UNITS.get(f"{name}.{key}")


class MonitorCollector:
    """Reads the monitors' files before each measured command and again after it (one ``pread`` each on a
    descriptor kept open), parses both readings once the command has ended, and stores the differences."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._readers = [_Reader(name) for name in names]
        self._before: dict[str, bytes] = {}

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        before: dict[str, bytes] = {}
        for reader in self._readers:
            with contextlib.suppress(OSError):  # said in collect
                before[reader.name] = reader.read()
        self._before = before
        return argv

    def collect(self, measurement: Measurement, context: RunContext) -> None:
        before, self._before = self._before, {}
        after: dict[str, bytes] = {}
        for reader in self._readers:
            try:
                after[reader.name] = reader.read()
            except OSError as err:
                measurement.notes.append(
                    f"--monitor {reader.name}: cannot read {_FILES[reader.name]}: {err.strerror or err}"
                )
        if not measurement.ok:
            return
        for name, data in after.items():
            if name in before:
                _store(measurement, name, differences(name, before[name], data))

    def close(self) -> list[str]:
        for reader in self._readers:
            reader.close()
        return []


def differences(name: str, before: bytes, after: bytes) -> Counters:
    """Each counter's change from ``before`` to ``after`` (two readings of one monitor's files), leaving out a
    counter that appeared or went backwards (wrapped).  Only the lines that differ are parsed: every counter
    is a line's own or a sum over lines, so the change of a sum is the change over the lines that changed,
    and a counter on no changed line changed by 0 (the names parsed once per layout: lines and CPUs)."""
    old, new = before.split(b"\n"), after.split(b"\n")
    head = 1 if name in ("interrupts", "softirqs") else 0  # the CPUs' names, which every row needs
    if name == "pressure" or len(old) != len(new) or old[:head] != new[:head]:
        return _subtract(parse(name, before), parse(name, after))  # a new layout, or lines that all move
    was, now = _changed_lines(name, old, new, head)
    counters: Counters = {}
    for key in _keys(name, before, len(old), old[:head]):
        change = now.get(key, 0) - was.get(key, 0)
        if change >= 0 and (key in now) == (key in was):
            counters[key] = change
    return counters


def _changed_lines(name: str, old: list[bytes], new: list[bytes], head: int) -> tuple[Counters, Counters]:
    """The counters of the lines that differ between two readings of one layout (each with its head)."""
    changed = [i for i in range(head, len(old)) if old[i] != new[i]]
    was = parse(name, b"\n".join(old[:head] + [old[i] for i in changed]))
    now = parse(name, b"\n".join(new[:head] + [new[i] for i in changed]))
    return was, now


_KEYS: dict[tuple[str, int, tuple[bytes, ...]], tuple[str, ...]] = {}


def _keys(name: str, reading: bytes, lines: int, head: list[bytes]) -> tuple[str, ...]:
    """The counters of a reading of this layout (its number of lines and CPUs), parsed once per layout."""
    layout = (name, lines, tuple(head))
    keys = _KEYS.get(layout)
    if keys is None:
        if len(_KEYS) >= 64:
            _KEYS.clear()
        keys = _KEYS[layout] = tuple(parse(name, reading))
    return keys


def _subtract(old: Counters, new: Counters) -> Counters:
    return {key: value - old[key] for key, value in new.items() if key in old and value >= old[key]}


_METRICS: dict[tuple[str, str], tuple[str, str | None]] = {}


def _store(measurement: Measurement, name: str, changes: Counters) -> None:
    values, units, metrics = measurement.values, measurement.units, _METRICS
    for key, change in changes.items():
        known = metrics.get((name, key))
        if known is None:
            if len(metrics) >= 4096:
                metrics.clear()
            known = metrics[name, key] = (f"monitor.{name}.{key}", unit_of(name, key))
        values[known[0]] = [float(change)]
        if known[1]:
            units[known[0]] = known[1]
