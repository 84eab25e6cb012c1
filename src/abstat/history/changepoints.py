"""Change points in a series of per-revision values.

Detector (chosen by ``benchmarks/changepoints.py``, see docs/history.md):

1. **Candidates**: ruptures' PELT with a least-squares cost on the series
   scaled by a difference-based robust noise estimate, with a low penalty so
   that real steps are rarely missed (it proposes spikes and noise too).
2. **Confirmation**: every candidate is tested with a two-sided
   Mann-Whitney test between its two neighbouring segments (each clipped to
   ``window`` points).  Segments shorter than ``min_segment`` points are not
   segments: the candidate is dropped, which is what removes single spikes.
   The weakest failing candidate is dropped first and the rest re-tested on
   the merged segments until every remaining one passes ``max_pvalue`` and
   ``min_magnitude``.
3. **Location**: each confirmed change point is moved to the position that
   minimises the absolute deviations from the medians of its two sides.

The p-value is the Mann-Whitney p of the two segments around the reported
position; that position was chosen to maximise the statistic, so the
p-value is optimistic (a screening value, not a calibrated one).  The size
is the Hodges-Lehmann shift (right minus left) with its
Mann-Whitney confidence interval, widened by half the grid step for heavily
quantized values, also as a percentage of the left segment's median.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_SEGMENT = 5
DEFAULT_WINDOW = 30
DEFAULT_MIN_MAGNITUDE = 0.0  # relative |shift| / |left median|
CANDIDATE_JUMP = 5           # PELT looks at every 5th position (ruptures' default); step 3 re-locates


@dataclass
class ChangePoint:
    """A change between ``index - 1`` and ``index`` (``index`` is the first point after it)."""

    index: int
    p_value: float
    shift: float               # Hodges-Lehmann shift, right segment minus left
    low: float                 # its confidence interval
    high: float
    before: float              # median of the left segment
    after: float               # median of the right segment
    left_n: int
    right_n: int
    provisional: bool = False
    points_to_settle: int = 0  # more points after it before it is considered settled

    @property
    def relative(self) -> float | None:
        return self.shift / abs(self.before) if self.before else None

    def relative_interval(self) -> tuple[float, float] | None:
        if not self.before:
            return None
        return self.low / abs(self.before), self.high / abs(self.before)


@dataclass
class Detection:
    change_points: list[ChangePoint]
    segment_medians: list[tuple[int, int, float]]   # (start, end exclusive, median)
    warnings: list[str] = field(default_factory=list)


def _robust_sigma(values: Sequence[float]) -> float:
    import numpy as np

    x = np.asarray(values, dtype=float)
    diffs = np.abs(np.diff(x))
    sigma = float(np.median(diffs)) / (0.6745 * math.sqrt(2.0)) if diffs.size else 0.0
    if sigma <= 0:  # quantized series: most neighbours equal
        sigma = float(np.mean(diffs)) / math.sqrt(2.0) if diffs.size else 0.0
    if sigma <= 0:
        sigma = float(np.std(x)) or 1.0
    return sigma


def candidates(values: Sequence[float], *, min_size: int = 2, penalty: float | None = None) -> list[int]:
    """PELT (ruptures, L2 cost) change-point candidates: indices of first points after a change."""
    import numpy as np
    import ruptures

    x = np.asarray(values, dtype=float)
    n = x.size
    if n < 2 * min_size:
        return []
    scaled = (x - float(np.median(x))) / _robust_sigma(x)
    pen = penalty if penalty is not None else 2.0 * math.log(max(n, 3))
    ends = ruptures.Pelt(model="l2", min_size=min_size, jump=CANDIDATE_JUMP).fit(scaled.reshape(-1, 1)).predict(pen=pen)
    return [int(e) for e in ends if e < n]


def _mw_p(left: Sequence[float], right: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    if len(set(left) | set(right)) == 1:
        return 1.0
    return float(mannwhitneyu(left, right, alternative="two-sided", method="asymptotic").pvalue)


def _median(values: Sequence[float]) -> float:
    import numpy as np

    return float(np.median(np.asarray(values, dtype=float)))


def _sides(x: Sequence[float], lo: int, position: int, hi: int, window: int) -> tuple[list[float], list[float]]:
    """The two windows around ``position``, within its neighbours ``lo`` and ``hi``."""
    return list(x[max(lo, position - window):position]), list(x[position:min(hi, position + window)])


def _grid_step(values: Sequence[float]) -> float:
    """The grid of heavily quantized values (fewer distinct values than half the points), else 0:
    shift intervals are widened by half of it, as their ends can only fall on the grid."""
    import numpy as np

    levels = np.unique(np.asarray(values, dtype=float))
    if levels.size < 2 or levels.size * 2 > len(values):
        return 0.0
    return float(np.min(np.diff(levels)))


def _best_split(x: Sequence[float], lo: int, hi: int, min_segment: int) -> int | None:
    """Position in (lo, hi) minimising the absolute deviations from each side's median
    (an L1 cost: robust to outliers, and unlike a standardised rank statistic not drawn
    towards the middle of the window)."""
    import numpy as np

    segment = np.asarray(x[lo:hi], dtype=float)
    n = segment.size
    if n < 2 * min_segment:
        return None
    best, best_cost = None, math.inf
    for k in range(min_segment, n - min_segment + 1):
        left, right = segment[:k], segment[k:]
        cost = float(np.abs(left - np.median(left)).sum() + np.abs(right - np.median(right)).sum())
        if cost < best_cost - 1e-12:
            best, best_cost = lo + k, cost
    return best


def detect(values: Sequence[float], *, max_pvalue: float = DEFAULT_MAX_PVALUE,
           min_magnitude: float = DEFAULT_MIN_MAGNITUDE, min_segment: int = DEFAULT_MIN_SEGMENT,
           window: int = DEFAULT_WINDOW, settle: int | None = None, confidence: float = 0.95) -> Detection:
    """Change points of ``values`` (in order), confirmed and sized.

    ``settle`` (default ``2 * min_segment``, at least 10): a change point
    with fewer points after it is provisional.
    """
    import numpy as np

    if min_segment < 2:
        raise ValueError("min_segment must be at least 2")
    x = [float(v) for v in values]
    n = len(x)
    settle = settle if settle is not None else max(2 * min_segment, 10)
    warnings: list[str] = []
    if n < 2 * min_segment:
        if n:
            warnings.append(f"{n} points: too few to find a change (at least {2 * min_segment})")
        return Detection([], [(0, n, _median(x))] if n else [], warnings)
    kept = candidates(x)

    def neighbours(position: int, points: list[int]) -> tuple[int, int]:
        i = points.index(position)
        lo = points[i - 1] if i > 0 else 0
        hi = points[i + 1] if i + 1 < len(points) else n
        return lo, hi

    def score(position: int, points: list[int]) -> float:
        """p-value of the candidate, or 2.0 when it cannot stand (too short, too small)."""
        lo, hi = neighbours(position, points)
        if position - lo < min_segment or hi - position < min_segment:
            return 2.0
        left, right = _sides(x, lo, position, hi, window)
        before, after = _median(left), _median(right)
        if min_magnitude > 0 and abs(after - before) < min_magnitude * abs(before):
            return 2.0
        return _mw_p(left, right)

    scores = [score(p, kept) for p in kept]
    while kept:
        worst = int(np.argmax(scores))
        if scores[worst] <= max_pvalue:
            break
        del kept[worst]
        del scores[worst]
        for i in (worst - 1, worst):  # only the two neighbours' segments changed
            if 0 <= i < len(kept):
                scores[i] = score(kept[i], kept)
    # re-locate each change between its neighbours, then size it
    located: list[int] = []
    for position in kept:
        lo, hi = neighbours(position, kept)
        lo = max(lo, position - window)
        hi = min(hi, position + window)
        best = _best_split(x, lo, hi, min_segment)
        located.append(best if best is not None else position)
    located = sorted(set(located))
    from abstat.stats.shift import hodges_lehmann

    found: list[ChangePoint] = []
    for position in located:
        lo, hi = neighbours(position, located)
        left, right = _sides(x, lo, position, hi, window)
        if len(left) < min_segment or len(right) < min_segment:
            continue
        p_value = _mw_p(left, right)
        if p_value > max_pvalue:
            continue
        shift = hodges_lehmann(np.asarray(left), np.asarray(right), confidence)
        half_step = _grid_step(x[max(lo, position - window):min(hi, position + window)]) / 2.0
        after_count = n - position
        found.append(ChangePoint(
            index=position, p_value=p_value, shift=shift.estimate, low=shift.low - half_step,
            high=shift.high + half_step,
            before=_median(left), after=_median(right), left_n=len(left), right_n=len(right),
            provisional=after_count < settle, points_to_settle=max(0, settle - after_count),
        ))
    bounds = [0, *[c.index for c in found], n]
    segments = [(a, b, _median(x[a:b])) for a, b in zip(bounds, bounds[1:])]
    return Detection(found, segments, warnings)
