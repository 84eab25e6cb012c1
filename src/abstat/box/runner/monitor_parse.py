"""The monitors' parsers: the counters of a reading of ``/proc/interrupts``, ``/proc/softirqs``,
``/proc/vmstat``, ``/proc/schedstat`` and ``/proc/pressure/*`` (:mod:`abstat.box.runner.monitor` reads the files).

Standard library only: on a lab run the box parses its own files.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

_FIELD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

if TYPE_CHECKING:  # the runner also runs on Python 3.8, where dict[...] cannot be evaluated
    Counters = dict[str, int]


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
VMSTAT_EVENTS = frozenset(
    {
        "pgfault",
        "pgmajfault",
        "pgfree",
        "pgactivate",
        "pgdeactivate",
        "pglazyfree",
        "pgrotated",
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
        "pgalloc_dma",
        "pgalloc_dma32",
        "pgalloc_normal",
        "pgalloc_movable",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "allocstall_normal",
        "allocstall_movable",
        "compact_stall",
        "compact_fail",
        "compact_success",
        "pgmigrate_success",
        "pgmigrate_fail",
        "numa_hit",
        "numa_miss",
        "numa_foreign",
        "numa_local",
        "numa_other",
        "numa_hint_faults",
        "numa_hint_faults_local",
        "numa_pages_migrated",
        "numa_pte_updates",
        "thp_fault_alloc",
        "thp_fault_fallback",
        "thp_collapse_alloc",
        "thp_split_page",
        "thp_split_pmd",
        "workingset_refault_anon",
        "workingset_refault_file",
        "slabs_scanned",
        "oom_kill",
        "nr_tlb_remote_flush",
        "nr_tlb_remote_flush_received",
        "nr_tlb_local_flush_all",
        "nr_tlb_local_flush_one",
        "unevictable_pgs_mlocked",
        "drop_pagecache",
        "drop_slab",
    }
)


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


def _pressure(text: str) -> Counters:
    """``/proc/pressure/{cpu,memory,io}`` one after the other, each headed ``# RESOURCE`` (as
    :func:`abstat.box.runner.monitor.snapshot` joins them): the ``some`` and ``full`` stall totals as
    ``RESOURCE_some``, ``RESOURCE_full``."""
    counters: Counters = {}
    resource = "cpu"
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "#":
            resource = rest.strip()
            continue
        for item in rest.split():
            key, _, value = item.partition("=")
            if key == "total" and value.isdigit():
                counters[f"{resource}_{kind}"] = int(value)
    return counters


_PARSERS: dict[str, Callable[[str], Counters]] = {
    "interrupts": _per_cpu_rows,
    "softirqs": _per_cpu_rows,
    "vmstat": _vmstat,
    "schedstat": _schedstat,
    "pressure": _pressure,
}


def parse(name: str, data: bytes) -> Counters:
    return _PARSERS[name](data.decode("ascii", errors="replace"))
