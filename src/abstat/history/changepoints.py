"""Change points in a series of per-revision values.

Detector (chosen by ``benchmarks/changepoints.py``, see docs/history.md):

1. **Candidates**: PELT (ruptures' ``KernelCPD``, linear kernel: the
   least-squares cost, in C) on the series
   scaled by a difference-based robust noise estimate, with the BIC penalty
   (it proposes spikes, drifts and noise too).
2. **Confirmation**: every candidate is tested with a two-sided
   Mann-Whitney test between its two neighbouring segments (each clipped to
   ``window`` points, default 50).  Segments shorter than ``min_segment`` points are not
   segments: the candidate is dropped, which is what removes single spikes.
   The weakest failing candidate is dropped first and the rest re-tested on
   the merged segments until every remaining one passes ``max_pvalue`` and
   ``min_magnitude``.
3. **Location**: each confirmed change point is moved to the split of its
   window that minimises Huber's loss around each side's centre (with the
   robust noise estimate as scale): least squares for the bulk of the
   values, which locates small steps in Gaussian noise best, and absolute
   deviations for outliers, which then cannot pull it.
4. **Reported test**: the Mann-Whitney test is repeated at the new
   position (same windows), at ``max_pvalue``.
5. **Step, not drift**: a change must also stand beyond a straight line
   through its two neighbouring segments (the step's coefficient in a
   regression of the normal scores on a line plus a step, t test,
   p <= ``TREND_PVALUE``); a slow drift cut into pieces fails this.  (A
   real step inside a drift is still sized over the windows, drift
   included.)

The p-value is the Mann-Whitney p of the two windows around the reported
position (less the guard); that position was chosen to maximise the statistic, so the
p-value is optimistic (a screening value, not a calibrated one).  The size
is the Hodges-Lehmann shift (right minus left) with its Mann-Whitney
confidence interval on at most ``SIZE_WINDOW`` (30) points each side (a
step inside a drift is sized with less of the drift than over the test
windows: 60% coverage on the benchmark's drifts instead of 25%), widened by half the grid step for heavily
quantized values, also as a percentage of the left segment's median.  The
test and the size leave out the one point on each side of the split (the
points whose side is least certain, as the split was chosen on the same
data): without this guard the interval covered the true step in 93% of the
benchmark's normal series instead of 95%, and a false alarm could be placed
next to a spike, which then helped it pass.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_SEGMENT = 5
DEFAULT_WINDOW = 50
GUARD = 1                    # points next to a split left out of its test and size
SIZE_WINDOW = 30             # points on each side for the reported size (at most --window)
TREND_PVALUE = 0.01           # step beyond a line through both neighbouring segments
DEFAULT_MIN_MAGNITUDE = 0.0  # relative |shift| / |left median|


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
    """PELT change-point candidates (least-squares cost): indices of first points after a change.

    ruptures' ``KernelCPD`` with the linear kernel is PELT with exactly the L2 cost, in C:
    20,000 points take about a second where ``Pelt(model="l2")`` (a numpy variance per
    segment tried) takes minutes."""
    import numpy as np
    import ruptures

    x = np.asarray(values, dtype=float)
    n = x.size
    if n < 2 * min_size:
        return []
    scaled = (x - float(np.median(x))) / _robust_sigma(x)
    pen = penalty if penalty is not None else 2.0 * math.log(max(n, 3))
    ends = ruptures.KernelCPD(kernel="linear", min_size=min_size).fit(scaled.reshape(-1, 1)).predict(pen=pen)
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


def _guarded(left: list[float], right: list[float]) -> tuple[list[float], list[float]]:
    """The two sides less the ``GUARD`` points next to the split: the split was chosen on these
    data, so those are the points whose side is least certain, and a spike placed there by the
    choice does not count."""
    return left[:len(left) - GUARD], right[GUARD:]


def _grid_step(values: Sequence[float]) -> float:
    """The grid of heavily quantized values (fewer distinct values than half the points), else 0:
    shift intervals are widened by half of it, as their ends can only fall on the grid."""
    import numpy as np

    levels = np.unique(np.asarray(values, dtype=float))
    if levels.size < 2 or levels.size * 2 > len(values):
        return 0.0
    return float(np.min(np.diff(levels)))


def _normal_scores(values: Sequence[float]):
    """Normal scores of the ranks (van der Waerden; ties get their average rank)."""
    import numpy as np
    from scipy.special import ndtri
    from scipy.stats import rankdata

    x = np.asarray(values, dtype=float)
    return ndtri(rankdata(x) / (x.size + 1))


HUBER_K = 1.345  # Huber's constant: 95% efficiency for Gaussian noise


def _huber_cost(part, threshold: float) -> float:
    """Huber's loss of ``part`` around its one-step Huber centre (the mean after clipping
    at its median +- ``threshold``)."""
    import numpy as np

    median = float(np.median(part))
    centre = float(np.clip(part, median - threshold, median + threshold).mean())
    residuals = np.abs(part - centre)
    return float(np.where(residuals <= threshold, 0.5 * residuals * residuals,
                          threshold * residuals - 0.5 * threshold * threshold).sum())


def _best_split(x: Sequence[float], lo: int, hi: int, min_segment: int, sigma: float) -> int | None:
    """Position in (lo, hi) that minimises Huber's loss of each side around its centre: least
    squares for the bulk of the values (which locates small steps in Gaussian noise best),
    absolute deviations beyond ``HUBER_K * sigma`` (so that outliers cannot pull it)."""
    import numpy as np

    segment = np.asarray(x[lo:hi], dtype=float)
    n = segment.size
    if n < 2 * min_segment:
        return None
    threshold = HUBER_K * sigma
    best, best_cost = None, math.inf
    for k in range(min_segment, n - min_segment + 1):
        cost = _huber_cost(segment[:k], threshold) + _huber_cost(segment[k:], threshold)
        if cost < best_cost:  # the first of equal minima
            best, best_cost = lo + k, cost
    return best


def _step_beyond_line_p(x: Sequence[float], lo: int, position: int, hi: int) -> float:
    """Two-sided p-value of a step at ``position`` beyond a straight line through ``x[lo:hi]``:
    the t test of the step's coefficient in a least-squares fit of the normal scores of the
    ranks on (1, index, step)."""
    import numpy as np
    from scipy.special import stdtr

    y = _normal_scores(x[lo:hi])
    n = y.size
    if n <= 3:
        return 1.0
    index = np.arange(n, dtype=float)
    design = np.column_stack([np.ones(n), index - index.mean(), (index >= position - lo).astype(float)])
    gram = design.T @ design
    if np.linalg.matrix_rank(gram) < 3:
        return 1.0
    coefficients = np.linalg.solve(gram, design.T @ y)
    residuals = y - design @ coefficients
    variance = float(residuals @ residuals) / (n - 3)
    step_variance = variance * float(np.linalg.inv(gram)[2, 2])
    if step_variance <= 0:
        return 0.0 if coefficients[2] else 1.0
    t = float(coefficients[2]) / math.sqrt(step_variance)
    return float(2.0 * stdtr(n - 3, -abs(t)))


def _points_needed(max_pvalue: float, window: int) -> int:
    """The fewest points in which a perfectly clean step in the middle can pass the test at
    ``max_pvalue`` (the sides less their guard points, each at most ``window``)."""
    n = 4
    while n < 2 * window + 2:
        side = min((n - 2 * GUARD) // 2, window - GUARD)
        if side >= 1 and _mw_p([float(i) for i in range(side)], [float(side + i) for i in range(side)]) <= max_pvalue:
            return n
        n += 1
    return n


def _failing(ratio: float) -> float:
    """A test's p-value over its threshold: 0 when it passes, else the ratio (larger: weaker)."""
    return ratio if ratio > 1.0 else 0.0


def _prune(points: list[int], weakness: Callable[[int, list[int]], float]) -> list[int]:
    """Drop the weakest failing point (``weakness`` > 0) and re-judge its two neighbours, whose
    segments merged, until every point left stands: a drift cut into pieces falls piece by piece
    as the segments around the pieces grow."""
    points = list(points)
    weaknesses = [weakness(p, points) for p in points]
    while points and max(weaknesses) > 0.0:
        weakest = max(range(len(points)), key=weaknesses.__getitem__)
        del points[weakest]
        del weaknesses[weakest]
        for i in (weakest - 1, weakest):
            if 0 <= i < len(points):
                weaknesses[i] = weakness(points[i], points)
    return points


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
    # work on the values times a power of two that brings the largest to [0.5, 1): exact, and
    # neither values near the largest double nor subnormal ones overflow or vanish on the way
    peak = max((abs(float(v)) for v in values), default=0.0)
    exponent = math.frexp(peak)[1] if peak > 0 and math.isfinite(peak) else 0
    x = [math.ldexp(float(v), -exponent) for v in values]

    def unscaled(value: float) -> float:
        return math.ldexp(value, exponent)

    n = len(x)
    settle = settle if settle is not None else max(2 * min_segment, 10)
    warnings: list[str] = []
    if n < 2 * min_segment:
        if n:
            warnings.append(f"{n} points: too few to find a change (at least {2 * min_segment})")
        return Detection([], [(0, n, unscaled(_median(x)))] if n else [], warnings)
    sigma = _robust_sigma(x)
    needed = _points_needed(max_pvalue, window)
    if n < needed:
        warnings.append(f"{n} points: too few to confirm any change at p <= {max_pvalue:g}, even a clean step "
                        f"in the middle (at least {needed} points; or raise --max-pvalue)")

    def neighbours(position: int, points: list[int]) -> tuple[int, int]:
        i = points.index(position)
        lo = points[i - 1] if i > 0 else 0
        hi = points[i + 1] if i + 1 < len(points) else n
        return lo, hi

    def magnitude_too_small(left: list[float], right: list[float]) -> bool:
        before, after = _median(left), _median(right)
        return min_magnitude > 0 and abs(after - before) < min_magnitude * abs(before)

    def candidate_weakness(position: int, points: list[int]) -> float:
        """How far a PELT candidate is from standing (0: it stands)."""
        lo, hi = neighbours(position, points)
        if position - lo < min_segment or hi - position < min_segment:
            return math.inf
        left, right = _sides(x, lo, position, hi, window)
        if magnitude_too_small(left, right):
            return math.inf
        return _failing(_mw_p(left, right) / max_pvalue)

    def change_weakness(position: int, points: list[int]) -> float:
        """How far a located change is from standing (0: it stands): its guarded test, and a
        step beyond the straight line through its neighbouring segments."""
        lo, hi = neighbours(position, points)
        left, right = _sides(x, lo, position, hi, window)
        if len(left) < min_segment or len(right) < min_segment or magnitude_too_small(left, right):
            return math.inf
        return _failing(max(_mw_p(*_guarded(left, right)) / max_pvalue,
                            _step_beyond_line_p(x, lo, position, hi) / TREND_PVALUE))

    kept = _prune(candidates(x), candidate_weakness)
    # re-locate each change within its window between its neighbours
    located: list[int] = []
    for position in kept:
        lo, hi = neighbours(position, kept)
        best = _best_split(x, max(lo, position - window), min(hi, position + window), min_segment, sigma)
        located.append(best if best is not None else position)
    located = _prune(sorted(set(located)), change_weakness)
    from abstat.stats.shift import hodges_lehmann

    found: list[ChangePoint] = []
    size_window = min(window, SIZE_WINDOW)
    for position in located:
        lo, hi = neighbours(position, located)
        left, right = _guarded(*_sides(x, lo, position, hi, window))
        p_value = _mw_p(left, right)
        sized_left, sized_right = _guarded(*_sides(x, lo, position, hi, size_window))
        shift = hodges_lehmann(np.asarray(sized_left), np.asarray(sized_right), confidence)
        half_step = _grid_step(x[max(lo, position - size_window):min(hi, position + size_window)]) / 2.0
        after_count = n - position
        found.append(ChangePoint(
            index=position, p_value=p_value, shift=unscaled(shift.estimate),
            low=unscaled(shift.low - half_step), high=unscaled(shift.high + half_step),
            before=unscaled(_median(sized_left)), after=unscaled(_median(sized_right)),
            left_n=len(left), right_n=len(right),
            provisional=after_count < settle, points_to_settle=max(0, settle - after_count),
        ))
    bounds = [0, *[c.index for c in found], n]
    segments = [(a, b, unscaled(_median(x[a:b]))) for a, b in itertools.pairwise(bounds)]
    return Detection(found, segments, warnings)
