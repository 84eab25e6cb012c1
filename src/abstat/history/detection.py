"""What :func:`abstat.history.changepoints.detect` returns: change points and a detection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence
from dataclasses import dataclass, field

from abstat.stats.warnings import StatWarning

if TYPE_CHECKING:
    from abstat.history.centres import Measured


@dataclass
class ChangePoint:
    """A change between ``index - 1`` and ``index`` (``index`` is the first point after it)."""

    index: int
    p_value: float
    shift: float  # the step, level after minus level before (the decision's model)
    low: float  # its confidence interval
    high: float
    before: float  # level of the left segment (its revisions' weighted mean)
    after: float  # level after it (before + shift)
    left_n: int
    right_n: int
    provisional: bool = False
    points_to_settle: int = 0  # more points after it before it is considered settled
    samples_before: int = 0  # samples (or runs) of the revisions tested on each side
    samples_after: int = 0
    before_interval: tuple[float, float] | None = None  # the level before's confidence interval

    def baseline_issue(self) -> str:
        """Why a change relative to the level before is undefined ("" when it is defined): that level is 0 or
        negative (a percentage would change meaning with its sign), or its interval does not keep clear of 0
        (the relative change's interval is then unbounded), as compare says of a baseline centre."""
        if self.before == 0.0:
            return "the level before is 0"
        if self.before < 0.0:
            return f"the level before is negative ({self.before:.6g})"
        if self.before_interval is not None and not self.before_interval[0] > 0.0:
            low, high = self.before_interval
            return (
                f"the level before ({self.before:.6g}) is not clearly away from 0 "
                f"(its interval {low:.4g} .. {high:.4g})"
            )
        return ""

    @property
    def relative(self) -> float | None:
        return None if self.baseline_issue() else self.shift / self.before

    def relative_interval(self) -> tuple[float, float] | None:
        if self.baseline_issue():
            return None
        return self.low / self.before, self.high / self.before


@dataclass
class Detection:
    change_points: list[ChangePoint]
    segment_medians: list[tuple[int, int, float]]  # (start, end exclusive, median)
    warnings: list[StatWarning] = field(default_factory=list)  # values the renderers draw
    # candidates that did not stand: (index, reason, value) with reason "pvalue" (value: its p),
    # "drift" (the p of its step beyond a line) or "magnitude" (its relative size)
    dropped: list[tuple[int, str, float]] = field(default_factory=list)
    # changes that stand but are smaller than the practical floor (min_change): listed, not alerted
    small: list[ChangePoint] = field(default_factory=list)


def too_short(points: Sequence[object] | Measured, min_segment: int) -> Detection:
    """No change can be found in fewer than ``2 * min_segment`` revisions: one segment, a warning."""
    import numpy as np

    from abstat.history.centres import Measured, unit_samples
    from abstat.history.segment import revision_samples

    if not (n := len(points)):
        return Detection([], [], [])
    samples = unit_samples(points)
    if samples is None:
        assert not isinstance(points, Measured)  # (those are taken)
        samples = np.concatenate([revision_samples(p) for p in points])
    centre = float(np.median(samples))
    return Detection(
        [],
        [(0, n, centre)],
        [
            StatWarning(
                "too-few-revisions",
                f"{n} revisions: too few to find a change (at least {2 * min_segment}; or lower {{min_segment}})",
                fields=["min_segment"],
            )
        ],
    )
