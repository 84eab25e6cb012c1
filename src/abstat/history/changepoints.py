"""Change points in a series of revisions, each measured one or more times.

Detector (chosen by ``benchmarks/changepoints.py``, see docs/history.md; numbers in :mod:`.segment`):

1. **Revisions, weighted**: each revision's centre (the 20% trimmed mean of its samples;
   with several runs, of the run means) with the weight ``1 / (tau^2 + s^2 / n)``: a revision
   measured 8 times counts for up to 8 of one measured once, as far as the revision-to-revision
   noise ``tau`` allows.  Centres far (``CLIP`` SDs) from a running median of 5 are pulled back.
2. **Candidates** (:mod:`abstat.history.candidates`): binary segmentation of the weighted
   least-squares cost (a split's gain: the squared z of its difference of means) while the gain
   exceeds the BIC penalty ``2 log n``, plus the best split of every seeded interval (lengths n,
   n/2, ...) over it, so short bumps are proposed, and of the short intervals that end or start at a
   strong candidate (``candidates.AROUND``: a bump's other edge): O(n log n).
3. **Confirmation**: every candidate must pass a weighted two-sample t test between its
   neighbouring segments, each clipped to ``window`` revisions, at ``max_pvalue``, with at least
   ``min_segment`` revisions on each side and a relative size of at least ``min_magnitude``.  Serially correlated residuals (a smooth curve rather
   than noise: lag-1 r above ``SERIAL_GATE / sqrt(n)``) widen the test by ``(1 + r) / (1 - r)``,
   and the change must then also stand beyond a local line through it (``CURVE_LINE``).
   The weakest failing one is dropped first and its neighbours re-tested on the merged segments.
4. **Location**: each change is moved to the split of the span between its neighbours (at
   most ``window`` each side) with the largest gain, then tested again there.
5. **Step, not drift**: per run of changes in one direction, between the changes of the other
   direction around it, two explanations are compared by BIC: the steps alone, or a line (a
   quadratic or cubic curve for a run of 3 or 4 or more pieces: ``drift.DRIFT_DEGREE``,
   ``drift.CURVE_PIECES``) plus the steps that stand beyond it (t test at ``max_pvalue`` in the fit of
   both, weakest dropped first).  Each step costs two parameters (its level and its position),
   the curve one per degree.  A ramp cut into pieces is a line; a clean step is never dropped
   for it; a step on top of a drift stands beyond the line and stays.  Then the same comparison
   over the whole series and all its steps with a curve of degree ``drift.WHOLE_CURVE`` (a quadratic
   drift turns: its pieces are runs of both directions).  ``drift=False`` turns the check off.
6. **Decision** (:mod:`abstat.history.decide`): a change is reported only when one model, a
   level, a common slope (when both sides have ``SIZE_SLOPE_SIDE`` revisions and its t exceeds
   ``SLOPE_T``) and a step fitted over at most ``SIZE_WINDOW`` revisions each side, gives
   p <= ``max_pvalue`` and a confidence interval of the step (the union over the locations a
   joint likelihood-ratio region of location and size keeps) that excludes 0; serially correlated residuals (a wandering
   level) widen it.  The reported p-value and interval are that model's (the p-value at the
   chosen split: optimistic).  A change below ``min_change`` of the level before is listed in
   ``Detection.small``, not reported.  One that fails is dropped and its neighbours re-judged, except
   a revert's edge in a series without serial correlation (``NUISANCE``): it stays in their models.
   Such an edge (the level returns: ``drift.DriftCheck.reverted``) is judged without the slope
   (``REVERT_FLAT``: on a short bump a slope and a step are one), its interval the union of the
   intervals with and without it (``REVERT_UNION``): valid also where a drift is under the pair.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from abstat.history.detection import ChangePoint, Detection, too_short
from abstat.history.drift import DriftCheck, _two_sided_p
from abstat.history.wander import RHO_CAP, series_rho

if TYPE_CHECKING:
    from abstat.history.centres import Measured
    from abstat.history.decide import Judgement
    from abstat.history.segment import Prepared, Sums

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_SEGMENT = 5
DEFAULT_WINDOW = 100
SIZE_WINDOW = 100  # revisions on each side for the decision's model (at most --window)
DEFAULT_MIN_MAGNITUDE = 0.0  # relative |shift| / |level before|
DEFAULT_MIN_CHANGE = 0.0  # practical floor: smaller changes are listed as small, not alerted
DEFAULT_PENALTY = 2.0  # candidates: splits that gain more than this times log n (BIC)
SERIAL_GATE = 5.0  # a confirmation test sees serially correlated residuals when their lag-1 r > this / sqrt(n)
CURVE_LINE = True  # with serially correlated residuals a step must also stand beyond a local line
AR1_TEST = True  # ... then the step is tested by GLS under AR(1) errors (:mod:`.wander`); False: the
#                                t divided by sqrt((1 + r) / (1 - r)) and the local line (CURVE_LINE), the rule before
AR1_REACH = 2  # ... at the best location within this many revisions (Bonferroni over them)
NUISANCE = True  # a confirmed change the decision does not report stays in its neighbours' models
AR1_RAMPS = True  # ... and also as a ramp of each width of decide.RAMPS
REVERT_FLAT = True  # a revert's edge (drift.DriftCheck.reverted, no serial correlation) is judged without the slope
REVERT_UNION = True  # ... its interval the union of those with and without the slope (docs/history.md)
FLAT_P = False  # ... and so is every change (no serial correlation), with the union; measured, off (docs/history.md)
GUARD = 3  # the confirmation leaves out this many revisions next to a neighbouring change


def _failing(ratio: float) -> float:
    """A test's p-value over its threshold: 0 when it passes, else the ratio (larger: weaker)."""
    return ratio if ratio > 1.0 else 0.0


def _prune(points: list[int], weakness: Callable[[int, list[int]], float]) -> list[int]:
    """Drop the weakest failing point (``weakness`` > 0) and re-judge the two points each side of it
    (their segments merged, or a window widened past a neighbour reaches them), until every point
    left stands: a drift cut into pieces falls piece by piece as the segments around the pieces grow."""
    points = list(points)
    weaknesses = [weakness(p, points) for p in points]
    while points and max(weaknesses) > 0.0:
        weakest = max(range(len(points)), key=weaknesses.__getitem__)
        del points[weakest]
        del weaknesses[weakest]
        for i in range(weakest - 2, weakest + 2):  # a decision window reaches past its neighbour (widened)
            if 0 <= i < len(points):
                weaknesses[i] = weakness(points[i], points)
    return points


@dataclass
class _Search(DriftCheck):
    """One detection: the series, the settings, why candidates fell; its methods are the steps above."""

    data: Prepared
    sums: Sums
    n: int
    max_pvalue: float
    min_magnitude: float
    min_segment: int
    window: int
    drift: bool
    penalty: float
    confidence: float
    reasons: dict[int, tuple[str, float]] = field(default_factory=dict)
    plain: dict[int, bool] = field(default_factory=dict)  # its last decision's residuals not serially correlated

    def neighbours(self, position: int, kept: list[int]) -> tuple[int, int]:
        i = kept.index(position)
        return (kept[i - 1] if i > 0 else 0), (kept[i + 1] if i + 1 < len(kept) else self.n)

    def spans(self, position: int, kept: list[int], reach: int) -> tuple[int, int]:
        lo, hi = self.neighbours(position, kept)
        return max(lo, position - reach), min(hi, position + reach)

    def too_close(self, position: int, kept: list[int]) -> bool:
        lo, hi = self.neighbours(position, kept)
        return position - lo < self.min_segment or hi - position < self.min_segment

    def guarded(self, position: int, kept: list[int], span: tuple[int, int]) -> tuple[int, int]:
        """``span`` without the ``GUARD`` revisions next to a neighbouring change where that side stays
        ``2 * min_segment`` long: a neighbour's transition (a ramp of a few revisions) is not in the test."""
        a, b = span
        lo, hi = self.neighbours(position, kept)
        if GUARD and a == lo and lo > 0 and position - a - GUARD >= 2 * self.min_segment:
            a += GUARD
        if GUARD and b == hi and hi < self.n and b - position - GUARD >= 2 * self.min_segment:
            b -= GUARD
        return a, b

    # step 2's pruning: a candidate's gain between its neighbours must exceed the penalty
    def gain_weakness(self, position: int, kept: list[int]) -> float:
        if self.too_close(position, kept):
            return math.inf
        lo, hi = self.neighbours(position, kept)
        left, right = self.sums.window(lo, position), self.sums.window(position, hi)
        diff = right[1] / right[0] - left[1] / left[0]
        gain = diff * diff / (1.0 / left[0] + 1.0 / right[0])
        return self.penalty / gain if gain < self.penalty else 0.0

    # step 3: confirmation
    def too_small(self, a: int, k: int, b: int) -> float | None:
        """The relative size when it is below ``min_magnitude``, else None."""
        if self.min_magnitude <= 0:
            return None
        left, right = self.sums.window(a, k), self.sums.window(k, b)
        before = self.data.value(left[1] / left[0])
        if before <= 0:  # a size relative to it is undefined (ChangePoint.baseline_issue)
            return None
        relative = abs(self.data.value(right[1] / right[0]) - before) / before
        return relative if relative < self.min_magnitude else None

    def curve_t(self, position: int, kept: list[int], t: float, df: int) -> tuple[float, int]:
        """Serially correlated residuals (a smooth curve): the step's t and df beyond a local line
        through it when that is the weaker test, else ``t`` and ``df``."""
        from abstat.history.segment import step_size

        sa, sb = self.spans(position, kept, min(self.window, SIZE_WINDOW))
        if min(position - sa, sb - position) >= 3:
            diff, se, df_line = step_size(self.sums, sa, position, sb, True)
            if df_line > 0 and se > 0 and _two_sided_p(diff / se, df_line) > _two_sided_p(t, df):
                return diff / se, df_line
        return t, df

    def ar1_t(self, position: int, kept: list[int], a: int, b: int, rho: float) -> tuple[float, int, int]:
        """The AR(1) test's largest |t| over the locations within ``AR1_REACH`` of ``position`` (a
        step spread over a few revisions, its candidate a revision or two off, is one abrupt move
        only at its largest), and how many were tried (a Bonferroni factor on its p)."""
        from abstat.history import decide

        lo, hi = self.neighbours(position, kept)
        first = max(position - AR1_REACH, lo + self.min_segment, a + 2)
        last = min(position + AR1_REACH, hi - self.min_segment, b - 2)
        best, best_df, tried = 0.0, 0, 0
        for k in range(min(first, position), max(last, position) + 1):
            for width in (r for r in (decide.ramps(rho) if AR1_RAMPS else (1,)) if r == 1 or k + r <= b - 2):
                t, df = self.sums.ar1_step_t(a, k, b, rho, width)
                tried += 1
                if abs(t) >= abs(best):
                    best, best_df = t, df
        return best, best_df, max(tried, 1)

    def weakness(self, position: int, kept: list[int]) -> float:
        if self.too_close(position, kept):
            return math.inf
        a, b = self.guarded(position, kept, self.spans(position, kept, self.window))
        small = self.too_small(a, position, b)
        if small is not None:
            self.reasons[position] = ("magnitude", small)
            return math.inf
        _, t, df = self.sums.step_test(a, position, b)
        tried = 1
        if SERIAL_GATE and df > 0 and not math.isinf(t):
            rho = self.sums.serial_rho(a, position, b, SERIAL_GATE)
            if rho and AR1_TEST:
                t, df, tried = self.ar1_t(position, kept, a, b, min(max(rho, self.sums.rho_floor), RHO_CAP))
            elif rho:
                t /= math.sqrt((1.0 + rho) / (1.0 - rho))
                if CURVE_LINE:
                    t, df = self.curve_t(position, kept, t, df)
        p = min(1.0, tried * _two_sided_p(t, df)) if df > 0 else 1.0
        if p > self.max_pvalue:
            self.reasons[position] = ("pvalue", p)
            return p / self.max_pvalue
        return 0.0

    def relocated(self, kept: list[int]) -> list[int]:  # step 4: location
        import numpy as np

        moved = []
        for position in kept:
            lo, hi = self.neighbours(position, kept)
            a, b = self.spans(position, kept, self.window)
            ks, gain = self.sums.gains(a, b, 1)
            allowed = (ks - lo >= self.min_segment) & (hi - ks >= self.min_segment)
            if not allowed.any():
                moved.append(position)
                continue
            gain = np.where(allowed, gain, -1.0)
            moved.append(int(ks[int(np.argmax(gain))]))
        return sorted(set(moved))

    def confirmed(self, candidates: list[int]) -> list[int]:
        """Steps 3-5: candidates pruned by their gain and their test, then relocated, re-tested and
        checked against drift until they stop moving (at most 4 rounds)."""
        kept = _prune(_prune(candidates, self.gain_weakness), self.weakness)
        for _ in range(4):
            located = _prune(self.drift_selection(_prune(self.relocated(kept), self.weakness)), self.weakness)
            if located == kept:
                break
            kept = located
        return located

    # step 6: the decision
    def judged(self, position: int, kept: list[int]) -> Judgement:
        from abstat.history.decide import judge

        reach = min(self.window, SIZE_WINDOW)
        sa, sb = self.spans(position, kept, reach)
        wide = self.widened(position, kept, reach)
        flat = not self.sums.rho_floor and (
            FLAT_P or (REVERT_FLAT and wide is not None and self.reverted(position, kept, self.window))
        )
        verdict = judge(self.sums, sa, position, sb, self.min_segment, self.confidence, wide, not flat)
        if flat and REVERT_UNION:
            sloped = judge(self.sums, sa, position, sb, self.min_segment, self.confidence, wide, True)
            verdict = replace(verdict, low=min(verdict.low, sloped.low), high=max(verdict.high, sloped.high))
        return verdict

    def undecided(self, position: int, kept: list[int]) -> float:
        """The decision rule: the weakness of the window's test, then the one model's p and interval."""
        failing = self.weakness(position, kept)
        if failing:
            return failing
        verdict = self.judged(position, kept)
        self.plain[position] = not verdict.wander
        if verdict.stands(self.max_pvalue):
            return 0.0
        self.reasons[position] = ("pvalue", verdict.p_value)
        return max(verdict.p_value / self.max_pvalue, 1.0 + 1e-9)

    def change_point(self, position: int, kept: list[int], settle: int) -> ChangePoint:
        from abstat.history.decide import level_interval

        a, b = self.spans(position, kept, self.window)
        verdict = self.judged(position, kept)
        sa, sb = self.spans(position, kept, min(self.window, SIZE_WINDOW))
        left = self.sums.window(sa, position)
        before = left[1] / left[0]
        level_low, level_high = level_interval(self.sums, sa, position, sb, self.confidence)
        after_count, data = self.n - position, self.data
        return ChangePoint(
            index=position,
            p_value=verdict.p_value,
            shift=data.shift(verdict.diff),
            low=data.shift(verdict.low),
            high=data.shift(verdict.high),
            before=data.value(before),
            after=_short(data.value(before + verdict.diff)),
            left_n=position - a,
            right_n=b - position,
            provisional=after_count < settle,
            points_to_settle=max(0, settle - after_count),
            samples_before=int(data.counts[a:position].sum()),
            samples_after=int(data.counts[position:b].sum()),
            before_interval=(data.value(level_low), data.value(level_high)),
        )

    def decided(self, kept: list[int]) -> tuple[list[int], list[int]]:
        """Step 6: (the confirmed changes the decision rule reports, the steps of the model they were
        judged in).  Failing ones are dropped, weakest first, their neighbours re-judged (a wander's
        pieces fall one by one), except, with ``NUISANCE``, one judged without serially correlated
        residuals: confirmed, it stays a step of its neighbours' models, not reported (dropping one edge
        of a short revert leaves the other judged against the unmodelled bump: both fell)."""
        failing: dict[int, bool] = {}

        def weakness(position: int, points: list[int]) -> float:
            value = self.undecided(position, points)
            failing[position] = bool(value)
            retained = (
                NUISANCE
                and self.plain.get(position)
                and not self.sums.rho_floor
                and self.reverted(position, points, self.window)
            )
            return 0.0 if value and retained else value

        model = _prune(kept, weakness)
        return [p for p in model if not failing[p]], model

    def detection(self, kept: list[int], settle: int, min_change: float, model: list[int] | None = None) -> Detection:
        """The reported change points ``kept`` (those below ``min_change`` listed as small; each judged
        with the steps at ``model``, default ``kept``), the segments' medians, and the dropped candidates
        not within ``min_segment`` of a reported one."""
        import numpy as np

        model = kept if model is None else model
        found: list[ChangePoint] = []
        small: list[ChangePoint] = []
        for position in kept:
            change = self.change_point(position, model, settle)
            relative = change.relative
            (small if min_change > 0 and relative is not None and abs(relative) < min_change else found).append(change)
        bounds = [0, *kept, self.n]
        segments = [
            (lo, hi, self.data.value(float(np.median(self.data.centre[lo:hi]))))
            for lo, hi in itertools.pairwise(bounds)
        ]
        dropped = sorted(
            (p, why, value)
            for p, (why, value) in self.reasons.items()  # not a reported one, moved
            if all(abs(p - k) >= self.min_segment for k in kept)
        )
        return Detection(found, segments, [], dropped, small)


def detect(
    points: Sequence[object] | Measured,
    *,
    max_pvalue: float = DEFAULT_MAX_PVALUE,
    min_magnitude: float = DEFAULT_MIN_MAGNITUDE,
    min_segment: int = DEFAULT_MIN_SEGMENT,
    window: int = DEFAULT_WINDOW,
    drift: bool = True,
    penalty: float | None = None,
    settle: int | None = None,
    confidence: float = 0.95,
    min_change: float = DEFAULT_MIN_CHANGE,
) -> Detection:
    """Change points of ``points`` (in order): each a number, or one revision's samples, or a
    list of its runs (lists of samples).  ``settle`` (default ``2 * min_segment``, at least 10):
    a change point with fewer revisions after it is provisional.  ``penalty``: the gain a
    candidate split needs (default ``DEFAULT_PENALTY log n``)."""
    from abstat.history import segment
    from abstat.history.candidates import propose

    if min_segment < 2:
        raise ValueError("min_segment must be at least 2")
    n = len(points)
    settle = settle if settle is not None else max(2 * min_segment, 10)
    if n < 2 * min_segment:
        return too_short(points, min_segment)
    data = segment.prepare(points)  # step 1
    search = _Search(
        data,
        segment.Sums(data.clipped, data.weight, series_rho(data.clipped)),
        n,
        max_pvalue,
        min_magnitude,
        min_segment,
        window,
        drift,
        penalty if penalty is not None else DEFAULT_PENALTY * math.log(max(n, 3)),
        confidence,
    )
    candidates = propose(search.sums, n, min_segment, search.penalty)  # step 2
    confirmed = search.confirmed(candidates)  # steps 3-5
    reported, model = search.decided(confirmed)  # step 6
    return search.detection(reported, settle, min_change, model)


def _short(value: float) -> float:
    """``value`` without the float error the model's arithmetic leaves (``6.000000000001`` for a level of 6
    that printed ``6.000`` beside the data's ``6``): the number of 10 significant digits it is within 1e-12 of,
    else ``value`` itself."""
    short = float(f"{value:.10g}")
    return short if abs(short - value) <= 1e-12 * abs(value) else value
