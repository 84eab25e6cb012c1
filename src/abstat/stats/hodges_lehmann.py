"""The Hodges-Lehmann shift with the interval of the inverted Brunner-Munzel test.

The default comparison of ``abstat compare`` (on logarithms: the
*Hodges-Lehmann ratio*, the median of the candidate/baseline ratios over all
pairs).

- **Estimate**: the median of the pairwise differences ``y_j - x_i``
  (Hodges & Lehmann 1963), found without forming them
  (:mod:`abstat.stats.pairwise`).
- **Test**: Brunner & Munzel's (2000) test of ``p = P(X < Y) + P(X = Y) / 2
  = 1/2``, whose variance comes from each sample's placements separately, so
  that unequal spreads and unequal n keep it valid (the Mann-Whitney test is
  not: Fagerland & Sandvik 2009), with Welch-Satterthwaite degrees of freedom
  and Student's t (as ``scipy.stats.brunnermunzel``).
- **Interval**: every shift ``d`` at which the test of ``x`` against ``y -
  d`` does not reject.  ``p(d)`` is one minus the share of differences below
  ``d``, so the ends are differences themselves; they are found by
  interpolation on the test statistic, which changes only where ``d`` passes
  a difference.  The estimate (``p = 1/2``) always lies inside.

**Ties** (quantized values, counts, clock ticks): the ``k`` equal values of a
level are read as spread evenly over that level's cell, ``k`` points at the
quantiles of a uniform distribution over ``[v - h, v + h]``, ``h`` half the
gap to the nearest other value of the same variant.  A value measured on a
grid stands for an interval of true values; read so, the shift moves
continuously when the share of values on each level changes, instead of
sticking at a grid step (the plain median of pairwise differences of values
on one grid is nearly always 0 or a whole step).  The variance of the test
averages the placements of each tie group (the influence of one
observation is the mean over its cell), so that at shift 0, on one grid, the
statistic is exactly Brunner-Munzel's with mid-ranks.  Untied data are left
as they are.  A level holding more than :data:`POINTS` values is represented
by that many evenly spaced points, each weighted (their positions differ
from the full set's by less than 1/POINTS of the cell, so the estimate and
the interval's ends move by about ``h / POINTS`` at most on the analysis
scale: 1.1e-5 (0.001%) on a 20-cycle grid at 440, 4.5e-5 for counts of 5
and 6, attack18 L3); that keeps 10^6 TSC samples on a few grid levels as
cheap as 10^4.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from abstat.fastdataclass import dataclass
from abstat.stats.brunner_munzel import (  # noqa: F401 (re-exported: the comparison's sizing)
    POINTS,
    BMStat,
    Spread,
    bm_p_value,
    bm_statistic,
    separated_p,
    spread_ties,
)
from abstat.stats.constant_side import sign_floor
from abstat.stats.distributions import t_quantile
from abstat.stats.levels import level_starts
from abstat.stats.tie_cells import cell_limit, seen, spread_levels

if TYPE_CHECKING:
    from abstat.stats.pairwise import SortedSums

SMALL = 200_000  # up to this many pairs, the differences are formed and sorted
EXACT_STEPS = 8  # an interval walk's first gaps are tested one by one, the rest swept (hl_sweep.Sweep)


@dataclass(frozen=True)
class HLResult:
    estimate: float  # the Hodges-Lehmann shift (analysis scale)
    low: float
    high: float
    p_value: float
    df: float
    centres: tuple[float, float]  # each sample's pseudo-median (analysis scale)
    spread: bool = False  # tied values were spread over their cells (the estimand is of the spread values)
    some: bool = False  # only some tied levels were spread (the others, further apart than the limit, as they are)


def _quantile(df: float, level: float, fixed: float | None) -> float:
    """The test's critical ``|T|``: the permutation one when given, else Student's t at ``df``."""
    return t_quantile(df, level) if fixed is None else fixed


def _bound(s: BMStat, level: float, fixed: float | None) -> float:
    """The largest ``|p - 1/2|`` the test accepts at ``s`` (inf when every shift is accepted)."""
    return math.inf if fixed == math.inf else _quantile(s.df, level, fixed) * s.se


def _large(
    x: Spread, y: Spread, confidence: float, inflate: tuple[float, float], fixed: float | None = None
) -> tuple[float, float, float]:
    """Estimate and interval without forming the differences.  The share of
    differences above a shift is ``p(d)``, so the lower end is the difference
    of rank ``N (1/2 - q se)``, the upper of rank ``N (1/2 + q se)``, with
    ``se`` and ``q`` the test's at that end: select there, evaluate the test,
    select again until ``q se`` settles (to 1e-3 of itself, which moves the
    end by less than 1e-3 of the interval's half-width)."""
    from abstat.stats.hl_binned import Guided
    from abstat.stats.hl_sweep import outermost
    from abstat.stats.pairwise import median_of

    pairs = _pairs(x, y)
    guided = isinstance(pairs, Guided)
    n = pairs.size
    estimate = median_of(pairs)
    level = 0.5 + confidence / 2.0
    here = bm_statistic(x, y, estimate, inflate, pairs.rows_near(estimate))
    known = {estimate: here}  # the statistic at each shift evaluated (a step often selects the same end again)

    def at(d: float) -> BMStat:
        if d not in known:
            known[d] = bm_statistic(x, y, d, inflate, pairs.rows_near(d))
        return known[d]

    def accepted(d: float) -> bool:
        return abs(at(d).p_hat - 0.5) <= _bound(at(d), level, fixed)

    ends = []
    density = pairs.density  # entries per unit about the estimate: where the ends should lie
    for sign in (-1, 1):
        s, end, half, guess = here, estimate, None, None
        first = _bound(here, level, fixed) * n / density if math.isfinite(density) and density > 0 else 0
        if math.isfinite(first) and first > 0 and not guided:  # (guided: from the binned differences)
            guess = (estimate + sign * first, 0.05 * first)
        for _ in range(6):
            bound = _bound(s, level, fixed)
            if half is not None and abs(bound - half) <= 1e-3 * half:
                break
            half = bound
            rank = n * (0.5 + sign * half)
            if rank < 0 or rank >= n:  # (the bound at the last shift is beyond every difference)
                end = outermost(pairs, sign, accepted)
                break
            end = pairs.kth(rank, guess)
            guess = None if guided else (end, max(abs(end - estimate) * 1e-3, 1e-12 * pairs.scale))
            s = at(end)
        else:  # no fixed point (the bound swings between ends far apart): the verdict's change, bisected
            end = outermost(pairs, sign, accepted)
        ends.append(end)
    return estimate, min(ends[0], estimate), max(ends[1], estimate)


GUIDE_FROM = 2_000  # from this many candidate points, brackets from the binned differences


def _pairs(x: Spread, y: Spread) -> SortedSums:
    """The pairwise differences, guided by :class:`~abstat.stats.hl_binned.Binned` brackets for
    large samples (a count costs a search per candidate value; the baseline's values make the
    histogram).  Weighted points (spread ties) too since wave 14: the order statistics are the same
    whatever brackets the search starts from; on grid data the binned ones save about a third of
    :func:`_large` (4.0 -> 2.6 ms at 10^4 a side) against sampled ones."""
    from abstat.stats.hl_binned import guided_differences
    from abstat.stats.pairwise import differences

    if y.values.size >= GUIDE_FROM <= 10 * x.values.size:
        return guided_differences(x.values, y.values, x.weights, y.weights)
    return differences(x.values, y.values, x.weights, y.weights)


def _small(
    x: Spread, y: Spread, confidence: float, inflate: tuple[float, float], fixed: float | None = None
) -> tuple[float, float, float]:
    """Estimate and interval from the sorted distinct differences ``U``
    (``C_k`` of them up to ``U_k``).  Between ``U_k`` and ``U_(k+1)`` the
    share of differences above the shift is ``1 - C_k / N``, so the lower end
    is about where ``C_k = N (1/2 - q se)``, the upper where ``C_k = N (1/2 + q
    se)``, ``se`` (and ``q``) the test's there: a fixed point, reached in a
    few steps; then the gaps next to it are tested until the test's verdict
    changes, which places the end exactly (the gaps a walk reaches evaluated
    in batches: :class:`~abstat.stats.hl_gaps.Gaps`)."""
    from abstat.stats.hl_gaps import Gaps
    from abstat.stats.hl_sweep import Sweep

    d = np.sort(np.subtract.outer(y.values, x.values).ravel())
    n = d.size
    estimate = float(d[n // 2]) if n % 2 else (float(d[n // 2 - 1]) + float(d[n // 2])) / 2.0
    last = np.flatnonzero(np.append(d[1:] != d[:-1], True))
    u, below = d[last], last + 1  # distinct differences, and how many are <= each
    m = u.size
    level = 0.5 + confidence / 2.0
    gaps = Gaps(x, y, u, inflate)

    def accepted(k: int, step: int) -> bool:  # (step: the direction of the walk that tests gap k)
        s = gaps.at(k, step)
        return abs(s.p_hat - 0.5) <= _bound(s, level, fixed)

    sweep: list[Sweep] = []

    def walk(span: tuple[int, int, int], target: bool) -> int | None:  # the first gap of range(*span) so judged
        start, stop, step = span
        for k in range(start, stop, step)[:EXACT_STEPS]:  # (most walks end here)
            if accepted(k, step) == target:
                return k
        start += step * EXACT_STEPS
        if (stop - start) * step <= 0:
            return None
        if not sweep:
            sweep.append(Sweep(x, y, below, inflate))
        return sweep[0].first((start, stop, step), target, lambda k: accepted(k, step), (level, fixed))

    centre = int(np.searchsorted(u, estimate, side="right")) - 1  # the gap holding the estimate
    stat = bm_statistic(x, y, estimate, inflate)
    ends = []
    for sign in (-1, 1):
        s, k = stat, centre
        for _ in range(6):  # the fixed point: the gap whose share matches the test's bound
            target = n * (0.5 + sign * _bound(s, level, fixed))  # differences at or below the end
            k_new = int(np.searchsorted(below, target, side="left" if sign < 0 else "right")) - (sign > 0)
            k_new = min(max(k_new, -1), m - 1)
            if k_new == k:
                break
            k = k_new
            s = gaps.at(k)
        if sign < 0:  # the first accepted gap from below
            if accepted(k, 0):
                j = walk((k - 1, -2, -1), False)
                k = -1 if j is None else j + 1
            else:
                j = walk((k + 1, centre + 1, 1), True)
                k = max(k, centre) + 1 if j is None else j
            ends.append(-math.inf if k < 0 else float(u[k]) if k < m else estimate)  # none accepted: the estimate
        else:  # the last accepted gap from above
            if accepted(k, 0):
                j = walk((k + 1, m, 1), False)
                k = m - 1 if j is None else j - 1
            else:
                j = walk((k - 1, centre - 1, -1), True)
                k = min(k, centre) - 1 if j is None else j
            ends.append(math.inf if k >= m - 1 else float(u[k + 1]))
    low, high = min(ends[0], estimate), max(ends[1], estimate)
    return estimate, low, high


def _estimate(x: Spread, y: Spread) -> float:
    """The Hodges-Lehmann shift of the spread samples (as :func:`_small` and :func:`_large` find it)."""
    if x.values.size * y.values.size <= SMALL and x.weights is None and y.weights is None:
        from abstat.stats.medians import median  # np.median imports numpy.ma: 10 ms of start-up

        return median(np.subtract.outer(y.values, x.values).ravel())
    from abstat.stats.pairwise import differences, median_of

    return median_of(differences(x.values, y.values, x.weights, y.weights))


PERMUTE_MAX = 50  # up to this many values in the smaller sample, the permutation reference
OPEN = 1e-300  # an interval's end open at 0 (wave 11: 20 v 20 run medians, 9 of 12 test/interval disagreements)


def hodges_lehmann(
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
    inflate: tuple[float, float] = (1.0, 1.0),
    centres: bool = True,
    seed: int = 0,
    permute: bool | None = None,
) -> HLResult:
    """Hodges-Lehmann shift of ``y`` against ``x`` (analysis scale, e.g.
    logarithms), the inverted Brunner-Munzel interval and the p-value at 0;
    ties spread over their cells (module documentation).  With at most
    :data:`PERMUTE_MAX` values in either sample (or ``permute``) the test's
    reference is its permutation distribution
    (:mod:`abstat.stats.permutation`, drawn reproducibly from ``seed``):
    the observed samples' for the p-value (exact when they are
    exchangeable), the samples aligned at the estimate for the interval
    (exact coverage under a pure shift); the two are reconciled below as
    for the t reference.  Else Student's t."""
    sx, sy = spread_pair(x, y)
    at_zero = bm_statistic(sx, sy, 0.0, inflate)
    alpha = 1.0 - confidence
    fixed = None
    if permute if permute is not None else min(x.size, y.size) <= PERMUTE_MAX:
        from abstat.stats.permutation import bm_permutation, interval_critical

        p = bm_permutation(x, y, alpha, seed, inflate).p_value  # the test of no change: exact when exchangeable
        # the interval's reference: the samples aligned at the estimate (exact coverage under a pure shift);
        # untied samples take their sizes' law (T is a function of the ranks): aligned at an estimate that is
        # a pairwise difference (m n odd), one pair ties, an artefact that sent 15 v 15 to other draws until
        # session 21 (the plain draws' critical value, not the rank-sum-weighted one of the test)
        pooled = np.sort(np.concatenate((x, y)))  # (np.unique imports numpy.ma: start-up)
        untied = bool(np.all(pooled[1:] != pooled[:-1]))
        fixed = (
            interval_critical(x, y if untied else y - _estimate(sx, sy), alpha, seed)
            if separated_p(x.size, y.size) < alpha
            else math.inf
        )  # else no shift can be rejected
    else:
        p = bm_p_value(at_zero, x.size, y.size)
    if sx.values.size * sy.values.size <= SMALL and sx.weights is None and sy.weights is None:
        estimate, low, high = _small(sx, sy, confidence, inflate, fixed)
    else:
        estimate, low, high = _large(sx, sy, confidence, inflate, fixed)
    floor = sign_floor(x, y, alpha)  # one side constant: the sign test's p-value and interval at least
    if floor is not None:
        p, low, high = max(p, floor[0]), min(low, floor[1]), max(high, floor[2])
    tied = (sx, sy), (x, y)
    p, low, high = _reconcile(p, low, high, at_zero, confidence, fixed, (estimate, tied))
    if centres:  # each sample's pseudo-median as the pair spreads it (hl_centre.centre: one computation)
        from abstat.stats.hl_centre import pseudo_median

        mid = (pseudo_median(sx), pseudo_median(sy))
    else:
        mid = (math.nan, math.nan)
    spread = sx.spread or sy.spread
    some = spread and any(tied > wide for tied, wide in map(spread_levels, (sx, sy)))
    return HLResult(estimate, low, high, p, at_zero.df, mid, spread, some)


def spread_pair(x: np.ndarray, y: np.ndarray) -> tuple[Spread, Spread]:
    """Both samples sorted, their ties spread over cells no wider than either's resolution allows
    (:mod:`abstat.stats.tie_cells`): what the comparison and ``plan``'s sizing read."""
    xs, ys = np.sort(x), np.sort(y)
    starts = level_starts(xs), level_starts(ys)
    levels = [v if k.size == v.size else v[k] for v, k in zip((xs, ys), starts, strict=True)]  # (untied: all)
    limit = cell_limit(*levels)  # (the gaps between distinct values are those between the levels)
    sx = spread_ties(xs, limit, starts[0])
    seen(limit, sx)
    return sx, spread_ties(ys, limit, starts[1])


def _reconcile(
    p: float,
    low: float,
    high: float,
    at_zero: BMStat,
    confidence: float,
    fixed: float | None,
    data: tuple[float, tuple[tuple[Spread, Spread], tuple[np.ndarray, np.ndarray]]],
) -> tuple[float, float, float]:
    """The p-value and interval made to agree on 0 (a result is significant iff its interval excludes 0)."""
    alpha = 1.0 - confidence
    if (
        p < alpha
        and low < high
        and 0.0 in (low, high)
        and abs(at_zero.p_hat - 0.5) > _bound(at_zero, 0.5 + confidence / 2, fixed)
    ):
        # an end is a difference of exactly 0 (equal values on both sides), which the test at 0 itself
        # rejects: the accepted shifts are open there, (0, high] or [low, 0); the end is put just off 0
        low, high = (OPEN, high) if low == 0.0 else (low, -OPEN)
    elif p < alpha and low <= 0.0 <= high:
        low, high, p = _straddling(data[0], (low, high), p, alpha, *data[1])
    elif not p < alpha and not low <= 0.0 <= high:
        low, high = min(low, 0.0), max(high, 0.0)  # 0 is accepted: it belongs in the interval
    return p, low, high


def _straddling(
    estimate: float,
    ends: tuple[float, float],
    p: float,
    alpha: float,
    spread: tuple[Spread, Spread],
    raw: tuple[np.ndarray, np.ndarray],
) -> tuple[float, float, float]:
    """The test rejects no change but the inverted interval holds 0.  Untied data: the interval decides
    (``p`` raised to ``alpha``).  Tied data: the test decides, and the interval keeps the accepted shifts
    on the estimate's side of 0 (``(0, high]`` or ``[low, 0)``; its end at 0 is open, held as
    :data:`OPEN`).  At 0 both use the same statistic (Brunner-Munzel's with
    mid-ranks), but the test refers it to the permutation law of the observed table of counts per level
    (exact for no change, mid-p), the interval to that of the samples aligned at the estimate, off the
    grid (about twice the levels), whose critical value is larger; calling only what both call cost a
    grid sub-step change 1.6 points of power (docs/statistics.md, wave 11).
    Coverage loses only draws whose true shift lies on the other side of 0 from a significant estimate.
    Samples on different grids (:func:`_one_grid`) keep the old rule: their raw values are not comparable
    step by step (grid 20 against 21, one latent law: the test alone called 100% of 400 A/A draws, the
    spread interval 7%)."""
    low, high = ends
    tied = spread[0].groups is not None or spread[1].groups is not None
    if not tied or estimate == 0.0 or not _one_grid(*raw):
        return low, high, alpha
    return (OPEN, high, p) if estimate > 0.0 else (low, -OPEN, p)


def _one_grid(x: np.ndarray, y: np.ndarray) -> bool:
    """The two samples' distinct values lie on one grid: no two of the pooled distinct values are closer
    than half the smallest gap between one sample's own distinct values (grid 20 against 21: 440 and 441)."""
    levels = [np.unique(v) for v in (x, y)]
    inner = min((float(np.diff(v).min()) for v in levels if v.size > 1), default=math.inf)
    pooled = np.unique(np.concatenate(levels))
    return pooled.size < 2 or float(np.diff(pooled).min()) >= 0.5 * inner
