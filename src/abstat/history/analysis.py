"""Change points for every series of a history, with their stability against earlier reports."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from abstat.history.changepoints import ChangePoint, Detection, detect
from abstat.history.series import History, Series
from abstat.history.state import reconcile, record


@dataclass
class Settings:
    max_pvalue: float = 0.001
    min_magnitude: float = 0.0      # fraction of the level before the change
    min_segment: int = 5
    window: int = 50
    confidence: float = 0.95


@dataclass
class SeriesResult:
    series: Series
    detection: Detection
    status: dict[int, str] = field(default_factory=dict)   # change point index -> new / kept / moved from
    notes: list[str] = field(default_factory=list)

    @property
    def revisions(self) -> list[str]:
        return [p.rev for p in self.series.points]

    def describe(self, change: ChangePoint) -> dict[str, Any]:
        relative = change.relative
        interval = change.relative_interval()
        return {
            "rev": self.revisions[change.index], "previous_rev": self.revisions[change.index - 1],
            "index": change.index, "before": change.before, "after": change.after, "shift": change.shift,
            "shift_low": change.low, "shift_high": change.high,
            "relative": relative, "relative_low": interval[0] if interval else None,
            "relative_high": interval[1] if interval else None,
            "p_value": change.p_value, "points_before": change.left_n, "points_after": change.right_n,
            "provisional": change.provisional, "points_to_settle": change.points_to_settle,
            "status": self.status.get(change.index, "new"),
        }


@dataclass
class HistoryReport:
    results: list[SeriesResult]
    ordering: str
    settings: Settings
    subjects: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def analyse(history: History, settings: Settings, previous: Mapping[str, list[dict[str, Any]]] | None = None
            ) -> tuple[HistoryReport, dict[str, list[dict[str, Any]]]]:
    """Detect change points in each series; compare with ``previous`` (sidecar contents).

    Returns the report and the updated sidecar contents."""
    state = dict(previous or {})
    results: list[SeriesResult] = []
    for series in history.series:
        centres = [p.centre for p in series.points]
        detection = detect(centres, max_pvalue=settings.max_pvalue, min_magnitude=settings.min_magnitude,
                           min_segment=settings.min_segment, window=settings.window,
                           confidence=settings.confidence)
        result = SeriesResult(series, detection)
        order = result.revisions
        current = [order[c.index] for c in detection.change_points]
        status, notes = reconcile(state.get(series.key, []), current, order, near=settings.min_segment)
        by_rev = {order[c.index]: c.index for c in detection.change_points}
        result.status = {by_rev[rev]: text for rev, text in status.items()}
        result.notes = notes
        state[series.key] = record(detection.change_points, order)
        results.append(result)
    report = HistoryReport(results, history.ordering, settings, history.subjects, list(history.warnings))
    return report, state
