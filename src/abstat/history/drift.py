"""Step 5 of the detector (:mod:`abstat.history.changepoints`): step, not drift.

Per run of changes in one direction, between the changes of the other direction around it, two
explanations are compared by BIC: the steps alone, or a line (a quadratic or cubic curve for a run
of 3 or 4 or more pieces: ``DRIFT_DEGREE``, ``CURVE_PIECES``) plus the steps that stand beyond it
(t test at ``max_pvalue`` in the fit of both, weakest dropped first).  Each step costs two
parameters (``STEP_PARAMS``: its level and its position), the curve one per degree.  A run's span
that ends closer than ``BUMP_SIDE`` to it (a short bump's other edge) is extended past that edge,
the edge a step of both explanations.  Then the same comparison over the whole series and all its
steps with a curve of degree ``WHOLE_CURVE``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from abstat.history.segment import Sums

BUMP_SIDE = 45  # a decision window's side shorter than this is extended past its neighbour
#                                (0: never; 30 before: reverts 0.892 -> 0.903, normal 0.439 -> 0.454, docs/history.md)
REVERT_Z = 2.0  # a revert's edge: the levels outside its pair within this many SEs (NUISANCE)
DRIFT_DEGREE = 3  # drifts: lines, or curves up to cubics
STEP_PARAMS = 2.0  # a step's parameters in the drift check's BIC: its level and its position
WHOLE_CURVE = 2  # then a curve of this degree over the whole series against all its steps (0: none)
CURVE_PIECES = 1  # a curve of degree d needs d + CURVE_PIECES pieces in its run (a line: 1)
DRIFT_REVERTS = True  # per run, a revert's edge (the level returns) is a step of both explanations (False: before)


def _two_sided_p(t: float, df: int) -> float:
    from abstat.stats.distributions import stdtr

    return 0.0 if math.isinf(t) else min(1.0, 2.0 * stdtr(df, -abs(t)))


def _bic(sse: float, count: int, parameters: float) -> float:
    return count * math.log(max(sse, 1e-300) / count) + parameters * math.log(count)


class DriftCheck:
    """Step 5 as methods of the detector's search (``changepoints._Search`` inherits them), and the
    short bumps that step 6 (the decision) widens its window past or keeps in the model."""

    sums: Sums
    n: int
    window: int
    max_pvalue: float
    drift: bool
    reasons: dict[int, tuple[str, float]]
    spans: Callable[[int, list[int], int], tuple[int, int]]

    def direction(self, position: int, kept: list[int]) -> float:
        a, b = self.spans(position, kept, self.window)
        left, right = self.sums.window(a, position), self.sums.window(position, b)
        return math.copysign(1.0, right[1] / right[0] - left[1] / left[0])

    def widened(self, position: int, kept: list[int], reach: int) -> tuple[int, int, tuple[int, ...]] | None:
        """The decision's window with each side that ends at a change of the other direction closer
        than ``BUMP_SIDE`` (a short bump's other edge) extended past that change, to the next
        one or ``reach``, the edge a step of the model: the slope is then seen on both sides of the
        bump (on the bump alone a slope and a step are one; it cost short reverts their power).  A
        neighbour of the same direction is not passed: a staircase past it reads as a slope."""
        if not BUMP_SIDE:
            return None
        i = kept.index(position)
        a, b = self.spans(position, kept, reach)
        sign = self.direction(position, kept)
        others: list[int] = []
        if 0 < position - a < BUMP_SIDE and i > 0 and a == kept[i - 1] and self.direction(a, kept) != sign:
            a, others = max(kept[i - 2] if i > 1 else 0, position - reach), [kept[i - 1]]
        if 0 < b - position < BUMP_SIDE and i + 1 < len(kept) and b == kept[i + 1] and self.direction(b, kept) != sign:
            b = min(kept[i + 2] if i + 2 < len(kept) else self.n, position + reach)
            others.append(kept[i + 1])
        return (a, b, tuple(others)) if others else None

    def reverted(self, position: int, kept: list[int], reach: int) -> bool:
        """Whether the change at ``position`` is one edge of a revert: a neighbour of the other direction
        closer than ``BUMP_SIDE``, the levels on the two outer sides of the pair (at most ``reach``
        long) within ``REVERT_Z`` standard errors of each other (the level returns)."""
        i = kept.index(position)
        bounds = [0, *kept, self.n]  # kept[i] = bounds[i + 1]
        sign = self.direction(position, kept)
        for j in (i - 1, i + 1):
            if not 0 <= j < len(kept) or abs(kept[j] - position) >= BUMP_SIDE or self.direction(kept[j], kept) == sign:
                continue
            first, last = min(i, j), max(i, j)  # the bump: bounds[first + 1] to bounds[last + 1]
            before = self.sums.window(max(bounds[first], bounds[first + 1] - reach), bounds[first + 1])
            after = self.sums.window(bounds[last + 1], min(bounds[last + 2], bounds[last + 1] + reach))
            z = (after[1] / after[0] - before[1] / before[0]) / math.sqrt(1.0 / after[0] + 1.0 / before[0])
            if abs(z) < REVERT_Z:
                return True
        return False

    def beyond_curve(self, a: int, b: int, run: list[int], degree: int, fixed: tuple[int, ...] = ()) -> list[int]:
        """The steps of ``run`` that stand beyond a curve of ``degree`` on [a, b) in the fit of both
        (and of steps at ``fixed``; t test at ``max_pvalue``), the weakest dropped first."""
        survivors = list(run)
        while survivors:
            _, ts, df = self.sums.fit(a, b, [*survivors, *fixed], degree)
            ps = [_two_sided_p(t, df) if df > 0 else 1.0 for t in ts[: len(survivors)]]
            worst = max(range(len(ps)), key=ps.__getitem__)
            if ps[worst] <= self.max_pvalue:
                break
            del survivors[worst]
        return survivors

    def run_choice(
        self, a: int, b: int, run: list[int], degrees: range | None = None, fixed: tuple[int, ...] = ()
    ) -> list[int]:
        """The steps of one run on [a, b) that its lowest-BIC explanation keeps: all of them, or
        those that stand beyond a line or curve (each step costs its level and its position);
        steps at ``fixed`` are in both explanations."""
        sse_steps, _, _ = self.sums.fit(a, b, [*run, *fixed], 0)
        count = b - a
        best = _bic(sse_steps, count, 1 + STEP_PARAMS * (len(run) + len(fixed)))
        chosen = list(run)
        if degrees is None:  # a curve needs pieces
            degrees = range(1, max(1, min(DRIFT_DEGREE, len(run) - CURVE_PIECES)) + 1)
        for degree in degrees:
            survivors = self.beyond_curve(a, b, run, degree, fixed)
            sse_drift, _, df = self.sums.fit(a, b, [*survivors, *fixed], degree)
            if df <= 0:
                break
            score = _bic(sse_drift, count, 1 + degree + STEP_PARAMS * (len(survivors) + len(fixed)))
            if score <= best:
                best, chosen = score, survivors
        return chosen

    def run_span(self, kept: list[int], start: int, end: int) -> tuple[int, int, tuple[int, ...]]:
        """The span of the run ``kept[start:end + 1]``, between the changes of the other direction
        around it; an end closer than ``BUMP_SIDE`` to the run (a short bump's other edge) is
        extended to the change after it, that edge a step of both explanations (on the bump alone
        a line reads its edge as the line's end)."""
        a = kept[start - 1] if start > 0 else 0
        b = kept[end + 1] if end + 1 < len(kept) else self.n
        fixed: list[int] = []
        if BUMP_SIDE and start > 0 and kept[start] - a < BUMP_SIDE:
            fixed.append(a)
            a = kept[start - 2] if start > 1 else 0
        if BUMP_SIDE and end + 1 < len(kept) and b - kept[end] < BUMP_SIDE:
            fixed.append(b)
            b = kept[end + 2] if end + 2 < len(kept) else self.n
        return a, b, tuple(fixed)

    def held(self, kept: list[int]) -> set[int]:
        """With ``DRIFT_REVERTS``, in a series without serial correlation: the changes that are a revert's
        edge (:meth:`reverted`: the level returns), steps of both explanations (a drift does not return)."""
        if not DRIFT_REVERTS or self.sums.rho_floor:
            return set()
        return {p for p in kept if self.reverted(p, kept, self.window)}

    def drift_selection(self, kept: list[int]) -> list[int]:
        """Per run of changes of one direction, between the changes of the other direction
        around it: steps, or a line plus the steps that stand beyond it (``run_choice``); a revert's
        edge (:meth:`held`) is a step of both.  Then the whole series' curve (``WHOLE_CURVE``) against
        all the steps left (a held edge too: a quadratic drift's turn reads as a revert)."""
        if not self.drift or not kept:
            return kept
        signs = [self.direction(p, kept) for p in kept]
        held = self.held(kept)
        result = list(kept)
        start = 0
        while start < len(kept):
            end = start
            while end + 1 < len(kept) and signs[end + 1] == signs[start]:
                end += 1
            a, b, fixed = self.run_span(kept, start, end)
            run = [p for p in kept[start : end + 1] if p not in held]
            fixed = tuple(sorted({*fixed, *held.intersection(kept[start : end + 1])}))
            start = end + 1
            for position in set(run) - set(self.run_choice(a, b, run, None, fixed) if run else run):
                result.remove(position)
                self.reasons[position] = ("drift", 0.0)
        if WHOLE_CURVE and result:
            chosen = self.run_choice(0, self.n, result, range(WHOLE_CURVE, WHOLE_CURVE + 1))
            for position in set(result) - set(chosen):
                self.reasons[position] = ("drift", 0.0)
            result = chosen
        return result
