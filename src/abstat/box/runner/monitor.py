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
  memory (:data:`VMSTAT_EVENTS`: ``pgfault``, ``pgmajfault``, page
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
from collections.abc import Callable
from typing import TYPE_CHECKING

from abstat.box.runner.model import FieldError, Measurement, RunContext

MONITORS = ("interrupts", "softirqs", "vmstat", "schedstat", "pressure")
_FILES = {"interrupts": "/proc/interrupts", "softirqs": "/proc/softirqs", "vmstat": "/proc/vmstat",
          "schedstat": "/proc/schedstat", "pressure": "/proc/pressure/cpu"}
_WHY = {"schedstat": " (a kernel built with CONFIG_SCHEDSTATS has it)",
        "pressure": " (a kernel with CONFIG_PSI, not booted with psi=0, has it)"}
MAX_FILE_BYTES = 4 << 20  # /proc/interrupts on a 1000-CPU machine is a few hundred KB
_FIELD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
UNITS = {"schedstat.run": "ns", "schedstat.wait": "ns"}  # pressure's are set per field below

if TYPE_CHECKING:  # the runner also runs on Python 3.8, where dict[...] cannot be evaluated
    Counters = dict[str, int]


def _read(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks, size = [], 0
        while size < MAX_FILE_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks).decode("ascii", errors="replace")
    finally:
        os.close(fd)


def _field(name: str) -> str:
    """A counter's name as a metric name's last part (letters, digits, '_', '-')."""
    return "".join(c if c in _FIELD_CHARS else "_" for c in name)[:64] or "_"


def _per_cpu_rows(text: str) -> Counters:
    """``/proc/interrupts`` and ``/proc/softirqs``: the first line names the CPUs; each row ``NAME:`` then one
    count per CPU (then, for interrupts, a description).  Numbered rows are device interrupts: summed as
    ``device``."""
    lines = text.split("\n")
    cpus = len(lines[0].split())
    counters: Counters = {}
    device = 0
    for line in lines[1:]:
        name, sep, rest = line.partition(":")
        if not sep:
            continue
        total = 0
        for word in rest.split(None, cpus)[:cpus]:
            if not word.isdigit():
                break
            total += int(word)
        name = name.strip()
        if name.isdigit():
            device += total
        else:
            counters[name if name.isalnum() else _field(name)] = total
    if device or len(lines) > 1:
        counters["device"] = device
    return counters


# /proc/vmstat's event counters that say what a run did to memory (its ``nr_*`` gauges say what state the
# machine is in, and most of its ~190 counters never move in a benchmark)
VMSTAT_EVENTS = frozenset({
    "pgfault", "pgmajfault", "pgfree", "pgactivate", "pgdeactivate", "pglazyfree", "pgrotated", "pgpgin", "pgpgout",
    "pswpin", "pswpout", "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable", "pgscan_kswapd",
    "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "allocstall_normal", "allocstall_movable", "compact_stall",
    "compact_fail", "compact_success", "pgmigrate_success", "pgmigrate_fail", "numa_hit", "numa_miss", "numa_foreign",
    "numa_local", "numa_other", "numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated",
    "numa_pte_updates", "thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "thp_split_page",
    "thp_split_pmd", "workingset_refault_anon", "workingset_refault_file", "slabs_scanned", "oom_kill",
    "nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all", "nr_tlb_local_flush_one",
    "unevictable_pgs_mlocked", "drop_pagecache", "drop_slab"})


def _vmstat(text: str) -> Counters:
    counters: Counters = {}
    events = VMSTAT_EVENTS
    for line in text.split("\n"):
        name, _, value = line.partition(" ")
        if name in events and value.isdigit():
            counters[name] = int(value)
    return counters


def _schedstat(text: str) -> Counters:
    """``cpuN`` lines (version 15+): the last three fields are run time (ns), wait time (ns), time slices."""
    run = wait = slices = 0
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("cpu") and len(parts) >= 10 and all(p.isdigit() for p in parts[-3:]):
            run, wait, slices = run + int(parts[-3]), wait + int(parts[-2]), slices + int(parts[-1])
    return {"run": run, "wait": wait, "timeslices": slices}


def _pressure(_: str) -> Counters:
    counters: Counters = {}
    for resource in ("cpu", "memory", "io"):
        try:
            text = _read(f"/proc/pressure/{resource}")
        except OSError:
            continue
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            for item in rest.split():
                key, _, value = item.partition("=")
                if key == "total" and value.isdigit():
                    counters[f"{resource}_{kind}"] = int(value)
    return counters


_PARSERS: dict[str, Callable[[str], Counters]] = {
    "interrupts": _per_cpu_rows, "softirqs": _per_cpu_rows, "vmstat": _vmstat, "schedstat": _schedstat,
    "pressure": _pressure}


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
            raise FieldError(f"{{monitor}} {name}: cannot read {path}: {err.strerror or err}"
                             f"{_WHY.get(name, '')}", "monitor") from None


def snapshot(name: str) -> Counters:
    """One monitor's counters now."""
    return _PARSERS[name]("" if name == "pressure" else _read(_FILES[name]))


def unit_of(name: str, key: str) -> str | None:
    if name == "pressure":
        return "us"
    return UNITS.get(f"{name}.{key}")


class MonitorCollector:
    """Reads the monitors' counters before each measured command and again after it; stores the differences."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._before: dict[str, Counters] = {}

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        self._before = {}
        for name in self.names:
            with contextlib.suppress(OSError):  # said in collect
                self._before[name] = snapshot(name)
        return argv

    def collect(self, measurement: Measurement, context: RunContext) -> None:
        before, self._before = self._before, {}
        for name in self.names:
            try:
                after = snapshot(name)
            except OSError as err:
                measurement.notes.append(f"--monitor {name}: cannot read {_FILES[name]}: {err.strerror or err}")
                continue
            if name not in before or not measurement.ok:
                continue
            old = before[name]
            for key, value in after.items():
                if key not in old or value < old[key]:
                    continue  # a row that appeared during the run (a new device), or a counter that wrapped
                metric = f"monitor.{name}.{key}"
                measurement.values[metric] = [float(value - old[key])]
                unit = unit_of(name, key)
                if unit:
                    measurement.units[metric] = unit

    def close(self) -> list[str]:
        return []
