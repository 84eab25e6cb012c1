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
as they are.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from abstat.stats.distributions import stdtr, t_quantile


@dataclass(frozen=True)
class Spread:
    """A sorted sample with its ties spread over their cells."""

    values: np.ndarray  # ascending
    groups: np.ndarray | None  # index of each value's tie group (None: no ties)
    counts: np.ndarray | None  # the size of each tie group

    def group_means(self, per_value: np.ndarray) -> np.ndarray:
        """``per_value`` averaged within each tie group (as it is when there are none)."""
        if self.groups is None:
            return per_value
        return (np.bincount(self.groups, weights=per_value) / self.counts)[self.groups]


def spread_ties(sorted_values: np.ndarray) -> Spread:
    """The tied values of each level spread evenly over ``[v - h, v + h]``,
    ``h`` half the gap to the nearest other level (no spread for a constant sample)."""
    s = sorted_values
    n = s.size
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    if starts.size == n:
        return Spread(s, None, None)
    counts = np.diff(np.append(starts, n))
    groups = np.repeat(np.arange(starts.size), counts)
    if starts.size == 1:
        return Spread(s, groups, counts)
    levels = s[starts]
    gaps = np.diff(levels)
    half = np.minimum(np.append(np.inf, gaps), np.append(gaps, np.inf)) / 2.0
    position = (np.arange(n) - starts[groups] + 0.5) / counts[groups]  # in (0, 1)
    values = levels[groups] + half[groups] * (2.0 * position - 1.0)
    return Spread(values, groups, counts)


@dataclass(frozen=True)
class BMStat:
    """Brunner-Munzel's statistic for ``x`` against ``y - delta``."""

    p_hat: float  # P(X < Y - delta) + P(=) / 2
    se: float  # its standard error
    df: float

    @property
    def t(self) -> float:
        return (self.p_hat - 0.5) / self.se if self.se > 0 else math.copysign(math.inf, self.p_hat - 0.5)


def _below(sorted_values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``#{i: positions_i <= j}`` for every index ``j`` of ``sorted_values``."""
    return np.cumsum(np.bincount(positions, minlength=sorted_values.size + 1))[:sorted_values.size]


def _sum_squares(values: np.ndarray) -> float:
    centred = values - values.mean()
    return float(np.dot(centred, centred))


def bm_statistic(x: Spread, y: Spread, delta: float, inflate: tuple[float, float] = (1.0, 1.0)) -> BMStat:
    """Brunner-Munzel at shift ``delta`` (``inflate``: factors on each
    variance component, for serial correlation; 1 for independent samples)."""
    xs, ys = x.values, y.values
    nx, ny = xs.size, ys.size
    target = xs + delta
    left = np.searchsorted(ys, target, side="left")  # y_j - delta < x_i
    at = ys.take(left, mode="clip")
    equal = at == target
    equal &= left < ny
    if equal.any():
        right = left.copy()
        right[equal] = np.searchsorted(ys, target[equal], side="right")
        placements_x = (left + right) * 0.5  # of x_i among y - delta (ties count half)
        placements_y = (_below(ys, right) + _below(ys, left)) * 0.5
    else:
        placements_x = left.astype(float)
        placements_y = _below(ys, left).astype(float)
    p_hat = float(placements_y.sum()) / (nx * ny)
    vx = _sum_squares(x.group_means(placements_x)) / (nx - 1) * inflate[0] if nx > 1 else 0.0
    vy = _sum_squares(y.group_means(placements_y)) / (ny - 1) * inflate[1] if ny > 1 else 0.0
    a, b = nx * vx, ny * vy
    se = math.sqrt(a + b) / (nx * ny)
    denominator = (a * a / (nx - 1) if nx > 1 else 0.0) + (b * b / (ny - 1) if ny > 1 else 0.0)
    df = (a + b) ** 2 / denominator if denominator > 0 else math.inf
    return BMStat(p_hat, se, df)


def bm_p_value(stat: BMStat, nx: int, ny: int) -> float:
    """Two-sided p-value; when neither sample overlaps the other (no variance
    to estimate), the exact permutation probability of so extreme an order,
    ``2 / C(nx + ny, nx)``, rather than 0."""
    if stat.se > 0:
        return min(1.0, 2.0 * stdtr(stat.df, -abs(stat.t)))
    if stat.p_hat == 0.5:
        return 1.0
    return min(1.0, 2.0 / math.comb(nx + ny, nx))


@dataclass(frozen=True)
class HLResult:
    estimate: float  # the Hodges-Lehmann shift (analysis scale)
    low: float
    high: float
    p_value: float
    df: float
    centres: tuple[float, float]  # each sample's pseudo-median (analysis scale)


def _end(x: Spread, y: Spread, start: float, here: BMStat, step: float, sign: int, confidence: float,
         inflate: tuple[float, float]) -> float:
    """The end of the acceptance region beyond ``start`` (where the test
    accepts, ``here`` its statistic) in direction ``sign`` (-1 lower, +1
    upper).  The statistic changes only where the shift passes a pairwise
    difference, so the end is a difference: it is bracketed (steps growing
    fourfold), then narrowed by Illinois regula falsi until one difference is
    left in the bracket (or, with very many pairs, the bracket is a
    billionth of the interval)."""
    from abstat.stats.pairwise import differences

    level = 0.5 + confidence / 2.0
    pairs = differences(x.values, y.values)
    n_pairs = pairs.size

    def g(stat: BMStat) -> float:  # < 0 where the test accepts, >= 0 where it rejects
        return -sign * (stat.p_hat - 0.5) - t_quantile(stat.df, level) * stat.se

    inner, s_in = start, here
    g_in = g(here)
    if g_in >= 0.0:  # the estimate itself is rejected (tiny samples): a point interval
        return start
    extreme = float(pairs.a[-1] + pairs.b[-1]) if sign > 0 else float(pairs.a[0] + pairs.b[0])
    outer = start + sign * step
    s_out = bm_statistic(x, y, outer, inflate)
    g_out = g(s_out)
    while g_out < 0.0:
        if sign * (outer - extreme) > 0:
            return sign * math.inf  # accepted beyond every difference: unbounded
        inner, s_in, g_in = outer, s_out, g_out
        step *= 4.0
        outer = start + sign * step
        s_out = bm_statistic(x, y, outer, inflate)
        g_out = g(s_out)
    kept = 0
    for _ in range(200):
        between = abs(s_in.p_hat - s_out.p_hat) * n_pairs  # differences between inner and outer
        if between <= 1.5 or abs(outer - inner) <= 1e-7 * abs(inner - start):
            break
        d = outer - g_out * (outer - inner) / (g_out - g_in)
        if not min(inner, outer) < d < max(inner, outer):
            d = (inner + outer) / 2.0
        s_d = bm_statistic(x, y, d, inflate)
        g_d = g(s_d)
        if g_d >= 0.0:
            outer, s_out, g_out = d, s_d, g_d
            if kept == 1:
                g_in /= 2.0
            kept = 1
        else:
            inner, s_in, g_in = d, s_d, g_d
            if kept == -1:
                g_out /= 2.0
            kept = -1
    lo, hi = sorted((inner, outer))
    if abs(s_in.p_hat - s_out.p_hat) * n_pairs > 1.5:
        return inner  # many pairs: the bracket is far below the interval's precision
    # The end is the difference between inner and outer.
    if sign < 0:
        found = pairs.next_above(lo)
        return found if found <= hi else hi
    return _largest_at_most(pairs, hi, lo)


def _largest_at_most(pairs, hi: float, lo: float) -> float:
    """The largest difference in ``(lo, hi]`` (``hi`` if there is none)."""
    rows = pairs._row_counts(hi, "right")
    start = pairs._row_counts(lo, "right")
    ok = rows > start
    if not ok.any():
        return hi
    return float(np.max(pairs.a[rows[ok] - 1] + pairs.b[ok]))


SMALL = 200_000  # up to this many pairs, the differences are formed and sorted


def _small(x: Spread, y: Spread, confidence: float, inflate: tuple[float, float]) -> tuple[float, float, float]:
    """Estimate and interval from the sorted distinct differences ``U``
    (``C_k`` of them up to ``U_k``).  Between ``U_k`` and ``U_(k+1)`` the
    share of differences above the shift is ``1 - C_k / N``, so the lower end
    is about where ``C_k = N (1/2 - q se)``, the upper where ``C_k = N (1/2 + q
    se)``, ``se`` (and ``q``) the test's there: a fixed point, reached in a
    few steps; then the gaps next to it are tested until the test's verdict
    changes, which places the end exactly."""
    d = np.sort(np.subtract.outer(y.values, x.values).ravel())
    n = d.size
    estimate = float(d[n // 2]) if n % 2 else (float(d[n // 2 - 1]) + float(d[n // 2])) / 2.0
    last = np.flatnonzero(np.append(d[1:] != d[:-1], True))
    u, below = d[last], last + 1  # distinct differences, and how many are <= each
    m = u.size
    level = 0.5 + confidence / 2.0

    def gap_point(k: int) -> float:  # a shift inside gap k, between u[k] and u[k+1]
        if k < 0:
            return float(u[0]) - 1.0 - abs(float(u[0]))
        if k >= m - 1:
            return float(u[-1]) + 1.0 + abs(float(u[-1]))
        return (float(u[k]) + float(u[k + 1])) / 2.0

    memo: dict[int, BMStat] = {}

    def at_gap(k: int) -> BMStat:
        if k not in memo:
            memo[k] = bm_statistic(x, y, gap_point(k), inflate)
        return memo[k]

    def accepted(k: int) -> bool:
        s = at_gap(k)
        return abs(s.p_hat - 0.5) <= t_quantile(s.df, level) * s.se

    centre = int(np.searchsorted(u, estimate, side="right")) - 1  # the gap holding the estimate
    stat = bm_statistic(x, y, estimate, inflate)
    ends = []
    for sign in (-1, 1):
        s, k = stat, centre
        for _ in range(6):  # the fixed point: the gap whose share matches the test's bound
            target = n * (0.5 + sign * t_quantile(s.df, level) * s.se)  # differences at or below the end
            k_new = int(np.searchsorted(below, target, side="left" if sign < 0 else "right")) - (sign > 0)
            k_new = min(max(k_new, -1), m - 1)
            if k_new == k:
                break
            k = k_new
            s = at_gap(k)
        if sign < 0:  # the first accepted gap from below
            if accepted(k):
                while k >= 0 and accepted(k - 1):
                    k -= 1
            else:
                while k < centre and not accepted(k + 1):
                    k += 1
                k += 1
            ends.append(-math.inf if k < 0 else float(u[k]))
        else:  # the last accepted gap from above
            if accepted(k):
                while k < m - 1 and accepted(k + 1):
                    k += 1
            else:
                while k > centre and not accepted(k - 1):
                    k -= 1
                k -= 1
            ends.append(math.inf if k >= m - 1 else float(u[k + 1]))
    low, high = min(ends[0], estimate), max(ends[1], estimate)
    return estimate, low, high


def hodges_lehmann(x: np.ndarray, y: np.ndarray, confidence: float,
                   inflate: tuple[float, float] = (1.0, 1.0), centres: bool = True) -> HLResult:
    """Hodges-Lehmann shift of ``y`` against ``x`` (analysis scale, e.g.
    logarithms), the inverted Brunner-Munzel interval and the p-value at 0;
    ties spread over their cells (module documentation)."""
    from abstat.stats.pairwise import hodges_lehmann_shift

    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    at_zero = bm_statistic(sx, sy, 0.0, inflate)
    p = bm_p_value(at_zero, x.size, y.size)
    if x.size * y.size <= SMALL:
        estimate, low, high = _small(sx, sy, confidence, inflate)
    else:
        estimate = hodges_lehmann_shift(sx.values, sy.values)
        here = bm_statistic(sx, sy, estimate, inflate)
        step = _first_step(sx.values, sy.values, confidence)
        low = _end(sx, sy, estimate, here, step, -1, confidence, inflate)
        high = _end(sx, sy, estimate, here, step, +1, confidence, inflate)
    if p < 1.0 - confidence and low <= 0.0 <= high:
        p = 1.0 - confidence  # the accepted shifts straddle 0 after all: the interval decides
    elif not p < 1.0 - confidence and not low <= 0.0 <= high:
        low, high = min(low, 0.0), max(high, 0.0)  # 0 is accepted: it belongs in the interval
    mid = (_pseudo_median(sx.values), _pseudo_median(sy.values)) if centres else (math.nan, math.nan)
    return HLResult(estimate, low, high, p, at_zero.df, mid)


def centre(values: np.ndarray) -> float:
    """A sample's Hodges-Lehmann centre as the default comparison computes it:
    the pseudo-median of its (tie-spread) values, on the analysis scale."""
    return _pseudo_median(spread_ties(np.sort(values)).values)


def _pseudo_median(sorted_values: np.ndarray) -> float:
    from abstat.stats.pairwise import pseudo_median

    n = sorted_values.size
    if n * (n + 1) // 2 <= SMALL:
        walsh = np.add.outer(sorted_values, sorted_values)[np.triu_indices(n)]
        return float(np.median(walsh)) / 2.0
    return pseudo_median(sorted_values)


def _first_step(xs: np.ndarray, ys: np.ndarray, confidence: float) -> float:
    """A first guess of the interval's half-width, to bracket its ends: the
    normal-theory one, ``q sqrt(pi / 3) sigma sqrt(1/n1 + 1/n2)``, with sigma
    from the interquartile ranges (any positive guess is corrected by the search)."""
    def iqr(s: np.ndarray) -> float:
        n = s.size
        return float(s[(3 * n) // 4] - s[n // 4]) if n > 1 else 0.0

    sigma = max(iqr(xs), iqr(ys)) / 1.349
    if not sigma > 0:
        sigma = float(max(np.ptp(xs), np.ptp(ys))) or max(abs(float(xs[0])), abs(float(ys[0])), 1.0)
    q = t_quantile(math.inf, 0.5 + confidence / 2.0)
    return q * 1.0233 * sigma * math.sqrt(1.0 / xs.size + 1.0 / ys.size)
