"""Which CPU-time metric resists load, said when the doctor warned about it (issue 35).

Wall-clock time includes the time a benchmark waits for other work; user and sys CPU time count only
its own.  On a loaded machine a regression that wall time hides shows in them, so when the doctor's
``load`` check warned -- while the runs were recorded (``history``) or as the bisection starts
(``bisect``) -- and the metric analysed is ``wall``, the output says which metric would resist it, as
``abstat run`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from abstat.stats.warnings import StatWarning

LATEST = 50  # the invocations whose machine records are read: the latest ones, a bounded number
RESIST = "wall time includes waiting for other work; user and sys CPU time resist it"


def warned(record: Mapping[str, Any]) -> bool:
    """Whether a machine record's doctor findings hold a load warning."""
    doctor = record.get("doctor")
    load = doctor.get("load") if isinstance(doctor, Mapping) else None
    return isinstance(load, Mapping) and load.get("status") == "warn"


def from_records(records: Iterable[Mapping[str, Any]], available: Iterable[str]) -> StatWarning | None:
    """The advice for a stored ``wall`` series, or None: the records are the latest invocations'."""
    records = list(records)
    loaded = sum(1 for record in records if warned(record))
    others = [m for m in ("user", "sys") if m in set(available)]
    if not loaded or not others:
        return None
    return StatWarning(
        "load",
        f"abstat doctor warned about load in {loaded} of the {len(records)} latest "
        f"invocation(s): {RESIST} ({{metrics}} {','.join(others)})",
        fields=["metrics"],
    )


def now(metric: str, root: str = "") -> StatWarning | None:
    """The advice for a bisection measuring ``metric`` here, when this machine is loaded now (``root``: the
    file-system root the doctor reads, as ``abstat doctor --root``)."""
    if metric != "wall":
        return None
    from abstat.box.doctor.base import WARN, Context
    from abstat.box.doctor.system import Load

    finding = Load().inspect(Context(root))
    if finding.status != WARN:
        return None
    return StatWarning(
        "load",
        f"abstat doctor warns: {finding.evidence}; {RESIST} ({{metrics}} user or {{metrics}} sys)",
        fields=["metrics"],
    )
