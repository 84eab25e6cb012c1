"""``abstat doctor``: known sources of benchmark noise on this machine.

:func:`run_checks` returns one :class:`Finding` per check (``ok``, ``warn``
or ``not-available`` with the evidence and the fix); :func:`preflight` is
what ``abstat run`` records in the machine record and warns about.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable

from abstat.box.doctor.base import (
    COUNTERS,
    NOT_AVAILABLE,
    OK,
    STATUSES,
    TIME,
    WARN,
    Change,
    Check,
    Context,
    Finding,
)
from abstat.box.doctor.cpu import SMT, CStates, Governor, Isolation, Thermal, Turbo
from abstat.box.doctor.system import (
    ASLR,
    Hypervisor,
    IRQBalance,
    Load,
    NMIWatchdog,
    PerfCounters,
    Swap,
    TransparentHugePages,
)

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

CHECKS: tuple[type[Check], ...] = (
    Governor,
    Turbo,
    SMT,
    Isolation,
    IRQBalance,
    ASLR,
    TransparentHugePages,
    NMIWatchdog,
    CStates,
    Swap,
    Load,
    Thermal,
    PerfCounters,
    Hypervisor,
)

__all__ = [
    "CHECKS",
    "COUNTERS",
    "NOT_AVAILABLE",
    "OK",
    "STATUSES",
    "TIME",
    "WARN",
    "Change",
    "Check",
    "Context",
    "Finding",
    "on_host",
    "preflight",
    "preflight_into",
    "run_checks",
]  # perf's probe: abstat.box.runner.perf


def run_checks(context: Context | None = None, names: Iterable[str] | None = None) -> list[Finding]:
    """Every check (or those named) against ``context`` (default: this machine)."""
    context = context or Context()
    wanted = set(names) if names is not None else None
    findings = []
    for check_class in CHECKS:
        check = check_class()
        if wanted is not None and check.name not in wanted:
            continue
        try:
            findings.append(check.inspect(context))
        except (OSError, ValueError, IndexError) as err:  # a malformed kernel file: say so, never "ok"
            findings.append(check.unavailable(f"could not be read: {err}"))
    return findings


def preflight(
    kinds: Iterable[str],
    *,
    interval: float = 0.05,
    counters: tuple[bool, str] | None = None,
    context: Context | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """For ``abstat run``: (the findings, for the machine record; warnings for
    the failed checks that matter for these kinds of metric).  ``counters``
    is the run's own perf probe result, when it counts events; ``context`` one
    whose sampling started earlier (:meth:`Context.start_sampling`)."""
    kinds = set(kinds)
    probe = (lambda: counters) if counters is not None else None
    if context is None:
        context = Context(interval=interval)
    context.probe_counters = probe
    findings = run_checks(context)
    record = {finding.name: {"status": finding.status, "evidence": finding.evidence} for finding in findings}
    warnings = [
        f"{finding.name}: {finding.evidence}"
        for finding in findings
        if finding.status == WARN and kinds.intersection(finding.matters_for)
    ]
    return record, warnings


def run_preflight(perf_support: Any, context: Context | None = None) -> tuple[dict[str, Any], list[str]]:
    """``abstat run``'s hook: time metrics always, counters with ``--perf``; ``context``: see :func:`preflight`."""
    if perf_support is None:
        return preflight({TIME}, context=context)
    counters = (perf_support.usable, perf_support.note or f"counts {', '.join(perf_support.supported)}")
    return preflight({TIME, COUNTERS}, counters=counters, context=context)


def on_host(options: dict[str, Any], perf_probe: Any = None) -> list[dict[str, Any]]:
    """What ``abstat doctor --host`` asks of a test box (run there by the shipped
    runner): the findings as dicts, for ``options`` root, cpus, interval, only
    and no_perf, as the local command's ``--root --cpus --interval --only --no-perf``
    (``perf_probe``: :func:`abstat.box.runner.perf.counters_probe`, which the runner passes)."""
    root = options.get("root") or ""
    probe = None if options.get("no_perf") or root else perf_probe
    context = Context(
        root, cpus=options.get("cpus"), interval=float(options.get("interval", 0.5)), probe_counters=probe
    )
    return [finding.to_dict() for finding in run_checks(context, options.get("only"))]


def preflight_into(record: dict[str, Any]) -> list[str]:
    """``abstat run --host``'s hook, on the box: the findings into the machine record
    (as a local ``abstat run`` records them), and the warnings for time metrics.
    A failing check must never stop the runs, so an error is recorded instead."""
    try:
        record["doctor"], warnings = preflight({TIME})
    except Exception as err:  # noqa: BLE001 -- recorded, the runs go on
        record["doctor"] = {"error": f"{type(err).__name__}: {err}"}
        return []
    return warnings
