"""Change points for every series of a history, with their stability against earlier reports."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from abstat.history.changepoints import (
    DEFAULT_MAX_PVALUE,
    DEFAULT_MIN_CHANGE,
    DEFAULT_MIN_SEGMENT,
    DEFAULT_PENALTY,
    DEFAULT_WINDOW,
    ChangePoint,
    Detection,
    detect,
)
from abstat.history.series import History, Series
from abstat.history.state import reconcile, record
from abstat.stats.warnings import StatWarning


@dataclass
class Settings:
    max_pvalue: float = DEFAULT_MAX_PVALUE
    min_magnitude: float = 0.0  # fraction of the level before the change
    min_segment: int = DEFAULT_MIN_SEGMENT
    window: int = DEFAULT_WINDOW
    confidence: float = 0.95
    drift: bool = True  # a ramp is a line, not steps
    penalty: float = DEFAULT_PENALTY  # candidates: splits that gain more than penalty * log(n)
    min_change: float = DEFAULT_MIN_CHANGE  # practical floor (fraction of the level): smaller ones are "small"


@dataclass
class SeriesResult:
    series: Series
    detection: Detection
    status: dict[int, str] = field(default_factory=dict)  # change point index -> new / kept / moved from
    notes: list[StatWarning] = field(default_factory=list)  # stability and why candidates fell

    @property
    def revisions(self) -> list[str]:
        return self.series.revisions()

    def describe(self, change: ChangePoint) -> dict[str, Any]:
        relative = change.relative
        interval = change.relative_interval()
        return {
            "rev": self.revisions[change.index],
            "previous_rev": self.revisions[change.index - 1],
            "index": change.index,
            "before": change.before,
            "after": change.after,
            "shift": change.shift,
            "shift_low": change.low,
            "shift_high": change.high,
            "relative": relative,
            "relative_low": interval[0] if interval else None,
            "relative_high": interval[1] if interval else None,
            "p_value": change.p_value,
            "points_before": change.left_n,
            "points_after": change.right_n,
            "provisional": change.provisional,
            "points_to_settle": change.points_to_settle,
            "samples_before": change.samples_before,
            "samples_after": change.samples_after,
            "status": self.status.get(change.index, "new"),
        }


def _dropped_notes(detection: Detection, order: list[str], settings: Settings) -> list[StatWarning]:
    """One note per reason a candidate fell, naming the option that would report it."""
    notes: list[StatWarning] = []
    close = [(i, p) for i, why, p in detection.dropped if why == "pvalue" and p <= max(10 * settings.max_pvalue, 0.01)]
    if close:
        i, p = min(close, key=lambda item: item[1])
        notes.append(
            StatWarning(
                "above-max-pvalue",
                f"{len(close)} possible change(s) above {{max_pvalue}} "
                f"{settings.max_pvalue:g} (the closest at {order[i][:12]}, p = {p:.2g}): "
                "raise {max_pvalue} to report them",
                fields=["max_pvalue"],
            )
        )
    drift = [i for i, why, _ in detection.dropped if why == "drift"]
    if drift:
        notes.append(
            StatWarning(
                "read-as-drift",
                f"{len(drift)} possible change(s) read as part of a drift, a line "
                f"fitting them better (first at {order[drift[0]][:12]}): {{no_drift_check}} reports "
                "them as steps",
                fields=["no_drift_check"],
            )
        )
    small = [(i, r) for i, why, r in detection.dropped if why == "magnitude"]
    if small:
        i, r = max(small, key=lambda item: item[1])
        notes.append(
            StatWarning(
                "below-min-magnitude",
                f"{len(small)} change(s) smaller than {{min_magnitude}} "
                f"{settings.min_magnitude * 100:g}% (the largest at {order[i][:12]}, "
                f"{r * 100:.2g}%): lower {{min_magnitude}} to report them",
                fields=["min_magnitude"],
            )
        )
    if detection.small:
        largest = max(detection.small, key=lambda c: abs(c.relative or 0.0))
        notes.append(
            StatWarning(
                "below-min-change",
                f"{len(detection.small)} change(s) below {{min_change}} "
                f"{settings.min_change * 100:g}% listed as small, not alerted (the largest at "
                f"{order[largest.index][:12]}, {(largest.relative or 0.0) * 100:+.2g}%)",
                fields=["min_change"],
            )
        )
    return notes


def _undefined_notes(detection: Detection, order: list[str], settings: Settings, unit: str | None) -> list[StatWarning]:
    """One note per change whose size relative to the level before is undefined (that level 0, negative or not
    clearly away from 0: ``ChangePoint.baseline_issue``): why, and the difference of the levels with its interval in
    the data's unit instead, as compare says of a baseline centre."""
    shown = f" {unit}" if unit else ""
    return [
        StatWarning(
            "relative-undefined",
            f"{order[c.index][:12]}: {issue}, so a relative change is undefined; the difference of the levels is "
            f"{c.shift:+.4g} [{c.low:+.4g}, {c.high:+.4g}]{shown} ({settings.confidence * 100:g}%)",
        )
        for c in detection.change_points
        if (issue := c.baseline_issue())
    ]


@dataclass
class HistoryReport:
    results: list[SeriesResult]
    ordering: str
    settings: Settings
    subjects: dict[str, str] = field(default_factory=dict)
    warnings: list[StatWarning] = field(default_factory=list)  # about the inputs and their order


def analyse(
    history: History, settings: Settings, previous: Mapping[str, list[dict[str, Any]]] | None = None
) -> tuple[HistoryReport, dict[str, list[dict[str, Any]]]]:
    """Detect change points in each series; compare with ``previous`` (sidecar contents).

    Returns the report and the updated sidecar contents."""
    state = dict(previous or {})
    results: list[SeriesResult] = []
    from abstat.history.centres import from_points

    for series in history.series:
        points = series.points
        detection = detect(
            (from_points(points) or [p.measurements for p in points])
            if isinstance(points, list)
            else points.measured(),
            max_pvalue=settings.max_pvalue,
            min_magnitude=settings.min_magnitude,
            min_segment=settings.min_segment,
            window=settings.window,
            drift=settings.drift,
            penalty=settings.penalty * math.log(max(len(series.points), 3)),
            confidence=settings.confidence,
            min_change=settings.min_change,
        )
        result = SeriesResult(series, detection)
        order = result.revisions
        current = [order[c.index] for c in detection.change_points]
        status, notes = reconcile(state.get(series.key, []), current, order, near=settings.min_segment)
        by_rev = {order[c.index]: c.index for c in detection.change_points}
        result.status = {by_rev[rev]: text for rev, text in status.items()}
        result.notes = (
            notes
            + _undefined_notes(detection, order, settings, series.unit)
            + _dropped_notes(detection, order, settings)
        )
        state[series.key] = record(detection.change_points, order)
        results.append(result)
    report = HistoryReport(results, history.ordering, settings, history.subjects, list(history.warnings))
    return report, state
