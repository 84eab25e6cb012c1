"""The machine record: what the results were measured on (stdlib only).

:func:`collect` reads ``/proc`` and ``/sys``; a field that cannot be read
is recorded as ``None`` (missing), never an exception.  :func:`differing_fields`
names what differs between two records (another boot, microcode, governor,
mitigations, kernel...) so a comparison can warn about it.  ``abstat run``
adds ``doctor``: each ``abstat doctor`` check's status and evidence.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

RECORD_VERSION = 1

# record key -> the name used in warnings; order = order of the warning.
_COMPARED_FIELDS: tuple[tuple[str, str], ...] = (
    ("hostname", "host"),
    ("boot_id", "boot"),
    ("cpu_model", "CPU model"),
    ("cpu_family", "CPU family"),
    ("cpu_model_number", "CPU model number"),
    ("cpu_stepping", "CPU stepping"),
    ("microcode", "microcode"),
    ("cpus", "CPUs"),
    ("cores", "cores"),
    ("smt", "SMT"),
    ("kernel_release", "kernel"),
    ("kernel_cmdline", "kernel command line"),
    ("hypervisor_type", "hypervisor"),
    ("hypervisor_version", "hypervisor version"),
    ("vulnerabilities", "mitigations"),
    ("governor", "governor"),
    ("scaling_driver", "frequency driver"),
    ("boost", "boost"),
)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _safe(function: Callable[[], Any]) -> Any:
    try:
        return function()
    except Exception:  # a machine record never crashes the run
        return None


def _cpuinfo(text: str | None) -> list[dict[str, str]]:
    if not text:
        return []
    blocks: list[dict[str, str]] = []
    for chunk in text.split("\n\n"):
        entry: dict[str, str] = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                entry[key.strip()] = value.strip()
        if entry:
            blocks.append(entry)
    return blocks


def _distinct(values: list[str]) -> str | None:
    """One value, or 'a (cpu0-3), b (cpu4)'-like text when CPUs disagree."""
    if not values:
        return None
    unique = sorted(set(values))
    if len(unique) == 1:
        return unique[0]
    return ", ".join(f"{value} ({values.count(value)} CPUs)" for value in unique)


def _smt(root: str, physical: set[Any], blocks: list[dict[str, str]]) -> str | None:
    smt_control = _read(f"{root}/sys/devices/system/cpu/smt/control")
    smt_active = _read(f"{root}/sys/devices/system/cpu/smt/active")
    if smt_active is not None:
        smt = "on" if smt_active == "1" else "off"
        if smt_control and smt_control not in ("on", "off"):
            smt += f" ({smt_control})"
        return smt
    if physical and blocks:
        return "on" if len(physical) < len(blocks) else "off"
    return None


def _cpu_fields(root: str) -> dict[str, Any]:
    blocks = _cpuinfo(_read(f"{root}/proc/cpuinfo"))
    first = blocks[0] if blocks else {}
    physical = _cores(blocks)
    sockets = {b.get("physical id") for b in blocks if "physical id" in b}
    smt = _smt(root, physical, blocks)
    return {
        **_cpu_identity(first),
        "microcode": _distinct([b["microcode"] for b in blocks if "microcode" in b]),
        "cpus": len(blocks) or os.cpu_count(),
        "cores": len(physical) or None,
        "sockets": len(sockets) or None,
        "smt": smt,
        "hypervisor_flag": _hypervisor_flag(first),
        "online_cpus": _read(f"{root}/sys/devices/system/cpu/online"),
    }


def _cores(blocks: list[dict[str, str]]) -> set[tuple[str | None, str | None]]:
    """The physical cores: (socket, core) of each CPU that names its core."""
    return {(b.get("physical id"), b.get("core id")) for b in blocks if "core id" in b}


def _hypervisor_flag(first: dict[str, str]) -> bool | None:
    """Whether the first CPU has the ``hypervisor`` flag (None: no flags listed)."""
    flags = set(first.get("flags", "").split())
    return ("hypervisor" in flags) if flags else None


def _cpu_identity(first: dict[str, str]) -> dict[str, Any]:
    """Vendor, model (as x86, ARM or MIPS name it), family, model number and stepping of the first CPU."""
    return {
        "cpu_vendor": first.get("vendor_id"),
        "cpu_model": first.get("model name") or first.get("Processor") or first.get("cpu model"),
        "cpu_family": first.get("cpu family"),
        "cpu_model_number": first.get("model"),
        "cpu_stepping": first.get("stepping"),
    }


def _hypervisor_fields(root: str, cpu_flag: bool | None) -> dict[str, Any]:
    kind = _read(f"{root}/sys/hypervisor/type")
    version = _hypervisor_version(root)
    if kind is None and os.path.exists(f"{root}/proc/xen"):
        kind = "xen"
    if kind is None:
        kind = _flagged_hypervisor(root, cpu_flag)
    return {"hypervisor_type": kind, "hypervisor_version": version}


def _hypervisor_version(root: str) -> str | None:
    """MAJOR.MINOR[EXTRA] from /sys/hypervisor/version (Xen), or None."""
    major = _read(f"{root}/sys/hypervisor/version/major")
    minor = _read(f"{root}/sys/hypervisor/version/minor")
    if major is None:
        return None
    version = major + (f".{minor}" if minor is not None else "")
    extra = _read(f"{root}/sys/hypervisor/version/extra")
    return version + extra if extra else version


def _flagged_hypervisor(root: str, cpu_flag: bool | None) -> str | None:
    """With the CPU's hypervisor flag set: the machine's DMI vendor and product, or "unknown"; else None."""
    vendor = _read(f"{root}/sys/class/dmi/id/sys_vendor")
    product = _read(f"{root}/sys/class/dmi/id/product_name")
    if cpu_flag and (vendor or product):
        return " ".join(x for x in (vendor, product) if x)
    if cpu_flag:
        return paravirt_clock(root) or "unknown (hypervisor CPU flag set)"
    return None


# The hypervisors whose paravirtual clock a guest is offered, by clock source.
CLOCKSOURCES = {
    "kvm-clock": "KVM (kvm-clock)",
    "xen": "Xen (xen clocksource)",
    "hyperv_clocksource_tsc_page": "Hyper-V (hyperv clocksource)",
    "vmware-tsc": "VMware",
}


def paravirt_clock(root: str = "") -> str | None:
    """The hypervisor named by the paravirtual clock source the kernel is offered, if one is."""
    available = _read(f"{root}/sys/devices/system/clocksource/clocksource0/available_clocksource") or ""
    return next((CLOCKSOURCES[source] for source in available.split() if source in CLOCKSOURCES), None)


def hypervisor(root: str = "", cpu_flag: bool | None = None) -> dict[str, Any]:
    """``hypervisor_type`` and ``hypervisor_version`` (used by ``abstat doctor`` too)."""
    return _hypervisor_fields(root, cpu_flag)


def _vulnerabilities(root: str) -> dict[str, str] | None:
    paths = sorted(glob.glob(f"{root}/sys/devices/system/cpu/vulnerabilities/*"))
    if not paths:
        return None
    found = {os.path.basename(p): _read(p) for p in paths}
    return {name: value for name, value in found.items() if value is not None} or None


def _frequency_fields(root: str) -> dict[str, Any]:
    base = f"{root}/sys/devices/system/cpu"
    governors = [g for g in (_read(p) for p in sorted(glob.glob(f"{base}/cpu[0-9]*/cpufreq/scaling_governor"))) if g]
    drivers = [d for d in (_read(p) for p in sorted(glob.glob(f"{base}/cpu[0-9]*/cpufreq/scaling_driver"))) if d]
    return {
        "governor": _distinct(governors),
        "scaling_driver": _distinct(drivers),
        "boost": _boost(base),
        "energy_perf_bias": _read(f"{base}/cpu0/power/energy_perf_bias"),
    }


def _boost(base: str) -> str | None:
    """Turbo/boost "on" or "off", from cpufreq's ``boost`` or else intel_pstate's ``no_turbo``; None: neither."""
    value = _read(f"{base}/cpufreq/boost")
    if value is not None:
        return "on" if value == "1" else "off"
    no_turbo = _read(f"{base}/intel_pstate/no_turbo")
    if no_turbo is not None:
        return "off" if no_turbo == "1" else "on"
    return None


def _loadavg(root: str) -> list[float] | None:
    text = _read(f"{root}/proc/loadavg")
    if not text:
        return None
    return [float(x) for x in text.split()[:3]]


def collect(root: str = "") -> dict[str, Any]:
    """The machine record of this host (``root`` prefixes /proc and /sys, for tests)."""
    record: dict[str, Any] = {"record_version": RECORD_VERSION}
    # os.uname() rather than socket.gethostname() and platform: the same values, without importing
    # those modules (abstat run's start-up)
    record["hostname"] = _safe(lambda: os.uname().nodename)
    record["collected_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    cpu = _safe(lambda: _cpu_fields(root)) or {}
    record.update(cpu)
    record["arch"] = _safe(lambda: os.uname().machine)
    record["kernel_release"] = _read(f"{root}/proc/sys/kernel/osrelease") or _safe(lambda: os.uname().release)
    record["kernel_version"] = _read(f"{root}/proc/sys/kernel/version")
    record["kernel_cmdline"] = _read(f"{root}/proc/cmdline")
    record.update(_safe(lambda: _hypervisor_fields(root, cpu.get("hypervisor_flag"))) or {})
    record["vulnerabilities"] = _safe(lambda: _vulnerabilities(root))
    record.update(_safe(lambda: _frequency_fields(root)) or {})
    record["loadavg"] = _safe(lambda: _loadavg(root))
    record["boot_id"] = _read(f"{root}/proc/sys/kernel/random/boot_id")
    record["python"] = _safe(lambda: sys.version.split()[0])
    for key in (
        "cpu_vendor",
        "cpu_model",
        "cpu_family",
        "cpu_model_number",
        "cpu_stepping",
        "microcode",
        "cpus",
        "cores",
        "sockets",
        "smt",
        "hypervisor_flag",
        "online_cpus",
        "hypervisor_type",
        "hypervisor_version",
        "governor",
        "scaling_driver",
        "boost",
        "energy_perf_bias",
    ):
        record.setdefault(key, None)
    return record


def differing_fields(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> list[str]:
    """Names of the fields that differ between two machine records.

    Only fields that affect performance are compared (not the load average
    or the time of collection).  A field missing from both is not a
    difference; missing from one only is.  For mitigations the names of the
    vulnerabilities whose state differs are given in parentheses.
    """
    if not first or not second:
        return []
    names: list[str] = []
    for key, label in _COMPARED_FIELDS:
        a, b = first.get(key), second.get(key)
        if a == b:
            continue
        if key == "vulnerabilities" and isinstance(a, Mapping) and isinstance(b, Mapping):
            changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            names.append(f"{label} ({', '.join(changed)})")
        else:
            names.append(label)
    return names


def differing_fields_among(records: list[Mapping[str, Any]]) -> list[str]:
    """Union of :func:`differing_fields` over every record against the first."""
    names: list[str] = []
    for other in records[1:]:
        for name in differing_fields(records[0], other):
            if name not in names:
                names.append(name)
    return names


def differing_fields_between(
    first: Iterable[Mapping[str, Any] | None], second: Iterable[Mapping[str, Any] | None]
) -> list[str]:
    """The fields that differ between some record of ``first`` and some record of
    ``second``: the union of :func:`differing_fields` over every pair, in its order.

    Each field is compared through its distinct values, so the cost grows with
    the number of records, not with the number of pairs (10^4 invocations of a
    nightly job are 10^8 pairs).  Mitigations are named once, with every
    vulnerability whose state differs in some pair."""
    firsts, seconds = list(filter(None, first)), list(filter(None, second))
    if not firsts or not seconds:
        return []
    names: list[str] = []
    for key, label in _COMPARED_FIELDS:
        ours, theirs = _distinct_values(r.get(key) for r in firsts), _distinct_values(r.get(key) for r in seconds)
        if key == "vulnerabilities":
            names += _differing_mitigations(label, ours, theirs)
        elif any(a != b for a in ours for b in theirs):  # stops at the first differing pair
            names.append(label)
    return names


def _distinct_values(values: Iterable[Any]) -> list[Any]:
    found: dict[Any, Any] = {}
    for value in values:
        found.setdefault(_identity(value), value)
    return list(found.values())


def _identity(value: Any) -> Any:
    """A hashable key equal for equal values (a record's field: text, a number, a mapping of text)."""
    if isinstance(value, Mapping):
        try:
            return ("mapping", frozenset(value.items()))
        except TypeError:
            pass
    elif not isinstance(value, (list, set)):
        try:
            hash(value)
            return ("value", value)  # 1 and 1.0 are one value here as in differing_fields (==)
        except TypeError:
            pass
    import json

    return ("json", json.dumps(value, sort_keys=True, default=str))


def _differing_mitigations(label: str, ours: list[Any], theirs: list[Any]) -> list[str]:
    """As :func:`differing_fields` names mitigations, over every pair of distinct values."""
    plain = _plain_values_differ(ours, theirs)
    changed = _changed_mitigations(
        [a for a in ours if isinstance(a, Mapping)], [b for b in theirs if isinstance(b, Mapping)]
    )
    return ([label] if plain else []) + ([f"{label} ({', '.join(changed)})"] if changed else [])


def _plain_values_differ(ours: list[Any], theirs: list[Any]) -> bool:
    """Whether two values differ where not both are tables of mitigations (None, or a value of another shape)."""
    return any(a != b for a in ours for b in theirs if not (isinstance(a, Mapping) and isinstance(b, Mapping)))


def _changed_mitigations(mine: list[Any], other: list[Any]) -> list[str]:
    """The mitigations whose values differ between two sides' records."""
    if not (mine and other):
        return []
    return [
        name
        for name in sorted({k for record in mine + other for k in record})
        if _mitigation_differs(name, mine, other)
    ]


def _mitigation_differs(name: str, mine: list[Any], other: list[Any]) -> bool:
    """Whether a value of mitigation ``name`` on one side differs from one on the other."""
    return any(
        a != b
        for a in _distinct_values(r.get(name) for r in mine)
        for b in _distinct_values(r.get(name) for r in other)
    )
