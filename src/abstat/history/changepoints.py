"""Change points in a series of revisions, each measured one or more times.

Detector (chosen by ``benchmarks/changepoints.py``, see docs/history.md); the numbers
under it are in :mod:`abstat.history.segment`:

1. **Revisions, weighted**: each revision's centre (the 20% trimmed mean of its samples;
   with several runs, of the run means) with the weight
   ``1 / (tau^2 + s^2 / n)``: a revision measured 8 times counts for up to 8 of
   one measured once, as far as the revision-to-revision noise ``tau`` allows.
   Centres far (``CLIP`` SDs) from a running median of 5 are pulled back: one
   spike cannot make or move a change.
2. **Candidates** (:mod:`abstat.history.candidates`): binary segmentation of the weighted
   least-squares cost (the gain of a split is the squared z of its difference of means),
   splitting while the gain exceeds the BIC penalty ``2 log n``, plus the best split of every
   seeded interval (lengths n, n/2, ...) over the same penalty, so short bumps are proposed:
   O(n log n), no quadratic cost.
3. **Confirmation**: every candidate must pass a weighted two-sample t test
   (weighted least squares of the centres on a step) between its neighbouring
   segments, each clipped to ``window`` revisions, at ``max_pvalue``, with at least
   ``min_segment`` revisions on each side (shorter is a spike) and a relative size
   of at least ``min_magnitude``.  Serially correlated residuals (a smooth curve rather
   than noise: lag-1 r above ``SERIAL_GATE / sqrt(n)``) widen the test by ``(1 + r) / (1 - r)``,
   and the change must then also stand beyond a local line through it (``CURVE_LINE``).
   The weakest failing one is dropped first and its neighbours re-tested on the merged segments.
4. **Location**: each change is moved to the split of the span between its
   neighbours (at most ``window`` each side) with the largest gain, then tested again
   there.  Two close changes that both pass are both reported.
5. **Step, not drift**: per run of changes in one direction, between the changes of
   the other direction around it, two explanations are compared by BIC: the steps
   alone, or a straight line (a quadratic or cubic curve for a run of 3 or 4 or more
   pieces: ``DRIFT_DEGREE``, ``CURVE_PIECES``; a curve on 2 pieces took clean steps) plus the steps that stand beyond it (t test at
   ``max_pvalue`` in the fit of both, weakest dropped first).  Each step costs two
   parameters (its level and its position), the curve one per degree.  A ramp cut into
   pieces is a line (its pieces do not stand beyond it, and the line is cheaper); a
   clean step, which the steps fit far better, is never dropped for it; a step on top
   of a drift stands beyond the line and stays.  ``drift=False`` turns the check off.

6. **Decision** (:mod:`abstat.history.decide`): a change is reported only when one model, a
   level, a common slope (both sides with ``SIZE_SLOPE_SIDE`` revisions) and a step fitted over
   at most ``SIZE_WINDOW`` revisions each side, gives p <= ``max_pvalue`` and a confidence interval
   of the step (the union over the locations a likelihood-ratio test keeps) that excludes 0;
   serially correlated residuals (a wandering level) widen it.  The reported p-value and interval
   are that model's (the p-value at the chosen split: optimistic).  A change below ``min_change``
   of the level before is listed in ``Detection.small``, not reported.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_SEGMENT = 5
DEFAULT_WINDOW = 100
SIZE_WINDOW = 100              # revisions on each side for the decision's model (at most --window)
DEFAULT_MIN_MAGNITUDE = 0.0    # relative |shift| / |level before|
DEFAULT_MIN_CHANGE = 0.0       # practical floor: smaller changes are listed as small, not alerted
DEFAULT_PENALTY = 2.0          # candidates: splits that gain more than this times log n (BIC)
DRIFT_DEGREE = 3               # drifts: lines, or curves up to cubics
SERIAL_GATE = 5.0              # a confirmation test sees serially correlated residuals when their lag-1 r > this / sqrt(n)
STEP_PARAMS = 2.0              # a step's parameters in the drift check's BIC: its level and its position
CURVE_LINE = True              # with serially correlated residuals a step must also stand beyond a local line
CURVE_PIECES = 1               # a curve of degree d needs d + CURVE_PIECES pieces in its run (a line: 1)


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
    samples_before: int = 0    # samples (or runs) of the revisions tested on each side
    samples_after: int = 0

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
    # candidates that did not stand: (index, reason, value) with reason "pvalue" (value: its p),
    # "drift" (the p of its step beyond a line) or "magnitude" (its relative size)
    dropped: list[tuple[int, str, float]] = field(default_factory=list)
    # changes that stand but are smaller than the practical floor (min_change): listed, not alerted
    small: list[ChangePoint] = field(default_factory=list)



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


def detect(points: Sequence[object], *, max_pvalue: float = DEFAULT_MAX_PVALUE,
           min_magnitude: float = DEFAULT_MIN_MAGNITUDE, min_segment: int = DEFAULT_MIN_SEGMENT,
           window: int = DEFAULT_WINDOW, drift: bool = True,
           penalty: float | None = None, settle: int | None = None, confidence: float = 0.95,
           min_change: float = DEFAULT_MIN_CHANGE) -> Detection:
    """Change points of ``points`` (in order): each a number, or one revision's samples, or a
    list of its runs (lists of samples).  ``settle`` (default ``2 * min_segment``, at least 10):
    a change point with fewer revisions after it is provisional.  ``penalty``: the gain a
    candidate split needs (default ``DEFAULT_PENALTY log n``)."""
    import numpy as np

    from abstat.history import segment
    from abstat.history.decide import Judgement, judge
    from abstat.stats.distributions import stdtr

    def t_two_sided_p(t: float, df: int) -> float:
        return 0.0 if math.isinf(t) else min(1.0, 2.0 * stdtr(df, -abs(t)))

    if min_segment < 2:
        raise ValueError("min_segment must be at least 2")
    n = len(points)
    settle = settle if settle is not None else max(2 * min_segment, 10)
    if n < 2 * min_segment:
        warnings = [f"{n} revisions: too few to find a change (at least {2 * min_segment}; "
                    "or lower --min-segment)"] if n else []
        centre = float(np.median(np.concatenate([segment.revision_samples(p) for p in points]))) if n else 0.0
        return Detection([], [(0, n, centre)] if n else [], warnings)
    data = segment.prepare(points)
    x = data.clipped
    sums = segment.Sums(x, data.weight)
    reasons: dict[int, tuple[str, float]] = {}

    def neighbours(position: int, kept: list[int]) -> tuple[int, int]:
        i = kept.index(position)
        return (kept[i - 1] if i > 0 else 0), (kept[i + 1] if i + 1 < len(kept) else n)

    def spans(position: int, kept: list[int], reach: int) -> tuple[int, int]:
        lo, hi = neighbours(position, kept)
        return max(lo, position - reach), min(hi, position + reach)

    def direction(position: int, kept: list[int]) -> float:
        a, b = spans(position, kept, window)
        left, right = sums.window(a, position), sums.window(position, b)
        return math.copysign(1.0, right[1] / right[0] - left[1] / left[0])

    def bic(sse: float, count: int, parameters: int) -> float:
        return count * math.log(max(sse, 1e-300) / count) + parameters * math.log(count)

    def drift_selection(kept: list[int]) -> list[int]:
        """Per run of changes of one direction, between the changes of the other direction
        around it: steps, or a line plus the steps that stand beyond it (at ``max_pvalue``),
        whichever has the lower BIC (each step costs its level and its position)."""
        if not drift or not kept:
            return kept
        signs = [direction(p, kept) for p in kept]
        result = list(kept)
        start = 0
        while start < len(kept):
            end = start
            while end + 1 < len(kept) and signs[end + 1] == signs[start]:
                end += 1
            run = kept[start:end + 1]
            a = kept[start - 1] if start > 0 else 0
            b = kept[end + 1] if end + 1 < len(kept) else n
            start = end + 1
            sse_steps, _, _ = sums.fit(a, b, run, 0)
            count = b - a
            best = bic(sse_steps, count, 1 + STEP_PARAMS * len(run))
            chosen = list(run)
            for degree in range(1, max(1, min(DRIFT_DEGREE, len(run) - CURVE_PIECES)) + 1):  # a curve needs pieces
                survivors = list(run)
                while survivors:
                    _, ts, df = sums.fit(a, b, survivors, degree)
                    ps = [t_two_sided_p(t, df) if df > 0 else 1.0 for t in ts]
                    worst = max(range(len(ps)), key=ps.__getitem__)
                    if ps[worst] <= max_pvalue:
                        break
                    del survivors[worst]
                sse_drift, _, df = sums.fit(a, b, survivors, degree)
                if df <= 0:
                    break
                score = bic(sse_drift, count, 1 + degree + STEP_PARAMS * len(survivors))
                if score <= best:
                    best, chosen = score, survivors
            for position in run:
                if position not in chosen:
                    result.remove(position)
                    reasons[position] = ("drift", 0.0)
        return result

    def too_small(a: int, k: int, b: int) -> float | None:
        """The relative size when it is below ``min_magnitude``, else None."""
        if min_magnitude <= 0:
            return None
        left, right = sums.window(a, k), sums.window(k, b)
        before = data.value(left[1] / left[0])
        after = data.value(right[1] / right[0])
        relative = abs(after - before) / abs(before) if before else math.inf
        return relative if relative < min_magnitude else None

    def weakness(position: int, kept: list[int]) -> float:
        lo, hi = neighbours(position, kept)
        if position - lo < min_segment or hi - position < min_segment:
            return math.inf
        a, b = spans(position, kept, window)
        small = too_small(a, position, b)
        if small is not None:
            reasons[position] = ("magnitude", small)
            return math.inf
        _, t, df = sums.step_test(a, position, b)
        if SERIAL_GATE and df > 0 and not math.isinf(t):
            factor = sums.serial_factor(a, position, b, SERIAL_GATE)
            t /= math.sqrt(factor)
            if factor > 1.0 and CURVE_LINE:
                # a smooth curve: the step must also stand beyond a local line through it
                sa, sb = spans(position, kept, min(window, SIZE_WINDOW))
                if min(position - sa, sb - position) >= 3:
                    diff, se, df_line = segment.step_size(sums, sa, position, sb, True)
                    if df_line > 0 and se > 0 and t_two_sided_p(diff / se, df_line) > t_two_sided_p(t, df):
                        t, df = diff / se, df_line
        p = t_two_sided_p(t, df) if df > 0 else 1.0
        if p > max_pvalue:
            reasons[position] = ("pvalue", p)
            return p / max_pvalue
        return 0.0

    def relocated(kept: list[int]) -> list[int]:
        moved = []
        for position in kept:
            lo, hi = neighbours(position, kept)
            a, b = spans(position, kept, window)
            ks, gain = sums.gains(a, b, 1)
            allowed = (ks - lo >= min_segment) & (hi - ks >= min_segment)
            if not allowed.any():
                moved.append(position)
                continue
            gain = np.where(allowed, gain, -1.0)
            moved.append(int(ks[int(np.argmax(gain))]))
        return sorted(set(moved))

    pen = penalty if penalty is not None else DEFAULT_PENALTY * math.log(max(n, 3))
    from abstat.history.candidates import propose

    candidates = propose(sums, n, min_segment, pen)

    def gain_weakness(position: int, kept: list[int]) -> float:
        lo, hi = neighbours(position, kept)
        if position - lo < min_segment or hi - position < min_segment:
            return math.inf
        left, right = sums.window(lo, position), sums.window(position, hi)
        diff = right[1] / right[0] - left[1] / left[0]
        gain = diff * diff / (1.0 / left[0] + 1.0 / right[0])
        return pen / gain if gain < pen else 0.0

    kept = _prune(_prune(candidates, gain_weakness), weakness)
    for _ in range(4):
        located = _prune(drift_selection(_prune(relocated(kept), weakness)), weakness)
        if located == kept:
            break
        kept = located
    kept = located
    size_window = min(window, SIZE_WINDOW)

    def judged(position: int, kept: list[int]) -> Judgement:
        sa, sb = spans(position, kept, size_window)
        return judge(sums, sa, position, sb, min_segment, confidence)

    def undecided(position: int, kept: list[int]) -> float:
        """The decision rule: the weakness of the window's test, then the one model's p and interval."""
        failing = weakness(position, kept)
        if failing:
            return failing
        verdict = judged(position, kept)
        if verdict.stands(max_pvalue):
            return 0.0
        reasons[position] = ("pvalue", verdict.p_value)
        return max(verdict.p_value / max_pvalue, 1.0 + 1e-9)

    kept = _prune(kept, undecided)
    found: list[ChangePoint] = []
    small: list[ChangePoint] = []
    for position in kept:
        a, b = spans(position, kept, window)
        verdict = judged(position, kept)
        sa, _ = spans(position, kept, size_window)
        left = sums.window(sa, position)
        before = left[1] / left[0]
        after_count = n - position
        change = ChangePoint(
            index=position, p_value=verdict.p_value, shift=data.shift(verdict.diff),
            low=data.shift(verdict.low), high=data.shift(verdict.high),
            before=data.value(before), after=data.value(before + verdict.diff),
            left_n=position - a, right_n=b - position,
            provisional=after_count < settle, points_to_settle=max(0, settle - after_count),
            samples_before=int(data.counts[a:position].sum()), samples_after=int(data.counts[position:b].sum()),
        )
        relative = change.relative
        (small if min_change > 0 and (relative is None or abs(relative) < min_change) else found).append(change)
    bounds = [0, *kept, n]
    segments = [(lo, hi, data.value(float(np.median(data.centre[lo:hi])))) for lo, hi in itertools.pairwise(bounds)]
    dropped = sorted((p, why, value) for p, (why, value) in reasons.items()  # not a reported one, moved
                     if all(abs(p - k) >= min_segment for k in kept))
    return Detection(found, segments, [], dropped, small)
