"""The power of the studentized permutation Brunner-Munzel test at small n, by simulation.

Up to :data:`abstat.stats.hodges_lehmann.PERMUTE_MAX` values in the smaller
variant, ``abstat compare`` refers Brunner-Munzel's ``T`` to its permutation
distribution (:mod:`abstat.stats.permutation`).  A large-sample power (the
noncentral t of ``(p - 1/2) / se``) overstates what that test delivers
there: at 3 values per side no arrangement reaches a two-sided p below 0.1,
so the test never rejects at 5%, where the noncentral t promised 80% power
at a 3.2% change of N(1000, 10); log-normal data gave 45-61% at the sizes
where it promised 80% from 4 to 30 values.

For untied data ``T`` depends on the ranks alone, so the permutation
reference is the same for every data set of the given sizes: the one
``compare`` uses (every arrangement, or seed 0's two batches of draws weighted
to the exact law of the rank sum, :mod:`abstat.stats.permutation_strata`, or
beyond its size the plain draws), computed once per size pair.  The power is
then the share of simulated data sets whose ``|T|`` the test rejects by that
reference with ``compare``'s own rule (plain draws: the first batch stops at
``2 alpha``; ``p = (1 + hits) / (B + 1) < alpha``).
The data sets are a smoothed bootstrap of the pilot's (log) values: each
drawn value plus Gaussian kernel noise (Silverman's bandwidth), rescaled to
keep the pilot's variance (Efron & Tibshirani 1993, sec. 16.5); the
candidate's pilot recentred at the baseline's by their Hodges-Lehmann shift,
then moved by the change.  The uniforms come from the comparison's
counter-based generator (no ``numpy.random``); the same draws serve every
change, so the power is monotone in the change and ``brentq`` finds the
detectable change on it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from abstat.stats.permutation import EXACT, Pooled, all_subsets, draws_for, random_subsets, statistics, uniforms
from abstat.stats.permutation import unresolved
from abstat.stats.permutation import untied_weighted
from abstat.stats.permutation_strata import stratified

SIMULATIONS = 2000  # data sets per power (Monte Carlo error 0.9 points at 80%)


def _untied(total: int) -> Pooled:
    return Pooled(np.arange(total), np.arange(total + 1), np.ones(total, dtype=np.int64), total)


@lru_cache(maxsize=256)
def reference(n1: int, n2: int, alpha: float) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """The ascending ``|T|`` of the permutation reference ``compare`` uses for
    untied samples of these sizes: (every arrangement, None, True), or (its
    first batch of draws, the second batch, False)."""
    m, total = min(n1, n2), n1 + n2
    pooled = _untied(total)
    log_count = math.lgamma(total + 1) - math.lgamma(m + 1) - math.lgamma(total - m + 1)
    if log_count <= math.log(EXACT) + 1e-9:
        return np.sort(np.abs(statistics(pooled, all_subsets(total, m)))), None, True
    first, most = draws_for(alpha)
    one = np.sort(np.abs(statistics(pooled, random_subsets(total, m, first, 0, stream=1))))
    two = np.sort(np.abs(statistics(pooled, random_subsets(total, m, most - first, 0, stream=2))))
    return one, two, False


def rejects(t: np.ndarray, n1: int, n2: int, alpha: float, u: np.ndarray | None = None) -> np.ndarray:
    """Whether ``compare``'s permutation test rejects at ``alpha`` for each
    untied data set of these sizes whose ``|T|`` is ``t`` and whose smaller variant's sum of placements is
    ``u`` (:func:`statistic_and_sum`: needed where ``compare`` weights its draws to the law of ``u``,
    :func:`abstat.stats.permutation.untied_weighted`)."""
    m, total = min(n1, n2), n1 + n2
    if math.comb(total, m) > EXACT and unresolved(alpha):  # draws capped: p >= 1 / (B + 1) > alpha
        return np.zeros(np.shape(t), dtype=bool)
    if math.comb(total, m) > EXACT and stratified(total, m):
        if u is None:
            raise ValueError("u: the sums of placements are needed where the draws are weighted")
        law = untied_weighted(total, m, *draws_for(alpha), 0)
        return law.p_values(np.abs(t), u) < alpha
    one, two, exact = reference(n1, n2, alpha)
    threshold = np.abs(t) * (1.0 - 1e-9)

    def hits(ref: np.ndarray) -> np.ndarray:
        return ref.size - np.searchsorted(ref, threshold, side="left")

    if exact:
        return hits(one) / one.size < alpha
    first = hits(one)
    assert two is not None
    total_hits = first + hits(two)
    drawn = one.size + two.size
    # no draw as extreme: abstat extrapolates the tail below 1 / (B + 1), always under alpha here
    return (first < 2.0 * alpha * one.size) & ((total_hits == 0) | ((1.0 + total_hits) / (drawn + 1.0) < alpha))


def _normals(seed: int, count: int, stream: int) -> np.ndarray:
    """Standard normal deviates by Box-Muller from the counter-based uniforms."""
    half = (count + 1) // 2
    u = uniforms(seed, 2 * half, stream)
    radius = np.sqrt(-2.0 * np.log1p(-u[:half]))
    angle = 2.0 * math.pi * u[half:]
    return np.concatenate((radius * np.cos(angle), radius * np.sin(angle)))[:count]


def smoothed(pilot: np.ndarray, draws: int, size: int, seed: int, stream: int) -> np.ndarray:
    """``draws`` x ``size`` values of a smoothed bootstrap of ``pilot``
    (variance-preserving, Gaussian kernel with Silverman's bandwidth)."""
    n = pilot.size
    centre, sd = float(pilot.mean()), float(pilot.std(ddof=0))
    q75, q25 = _quartiles(pilot)
    spread = min(sd, float(q75 - q25) / 1.34) or sd
    h = 0.9 * spread * n**-0.2
    pick = np.minimum((uniforms(seed, draws * size, stream) * n).astype(np.int64), n - 1)
    noisy = pilot[pick] + h * _normals(seed, draws * size, stream + 1)
    shrink = 1.0 / math.sqrt(1.0 + h * h / (sd * sd)) if sd > 0 else 1.0
    return (centre + (noisy - centre) * shrink).reshape(draws, size)


def _quartiles(pilot: np.ndarray) -> tuple[float, float]:
    """``np.quantile(pilot, [0.75, 0.25])`` (its default, linear method: the same floats), without its
    ``np.unique``, which imports ``numpy.ma`` (12 ms of ``abstat plan a b``)."""
    s = np.sort(pilot)
    if s.size < 2 or np.isnan(s[-1]):
        q75, q25 = np.quantile(pilot, [0.75, 0.25])
        return float(q75), float(q25)
    return _lerp(s, (s.size - 1) * 0.75), _lerp(s, (s.size - 1) * 0.25)


def _lerp(s: np.ndarray, at: float) -> float:
    """The value at fractional index ``at`` of sorted ``s`` as numpy's quantile interpolates it."""
    low = math.floor(at)
    a, b, t = float(s[low]), float(s[low + 1]), at - low
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


class SmallPower:
    """Power of ``compare``'s permutation test at sizes up to the permutation
    limit, for data like the pilots ``x`` and ``y`` (analysis scale, ``y``
    already recentred at ``x``), by simulation; None-safe: :meth:`usable`
    says when the model applies (both pilots vary: the simulated data are
    untied)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, seed: int = 0, simulations: int = SIMULATIONS) -> None:
        self.x, self.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self.seed, self.simulations = seed, simulations
        self._cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._serial: dict[tuple[int, int, float], np.ndarray | None] = {}

    @property
    def usable(self) -> bool:
        return self.x.size >= 2 and self.y.size >= 2 and float(np.ptp(self.x)) > 0 and float(np.ptp(self.y)) > 0

    def _draws(self, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
        key = (n1, n2)
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = (
                smoothed(self.x, self.simulations, n1, self.seed, 11),
                smoothed(self.y, self.simulations, n2, self.seed, 13),
            )
        return self._cache[key]

    def power(self, shift: float, n1: int, n2: int, alpha: float) -> float:
        """The share of simulated data sets (``n1`` baseline, ``n2`` candidate
        values, the candidate moved by ``shift`` on the analysis scale) that
        ``compare``'s permutation test calls different at ``alpha``."""
        if min(n1, n2) < 2:
            return math.nan
        xs, ys = self._draws(n1, n2)
        t, u = statistic_and_sum(xs, ys + shift)
        key = (n1, n2, alpha)
        if key not in self._serial:
            self._serial[key] = serial_factor_rows(xs, ys, 1.0 - alpha)  # the order, not the shift, decides
        t = serial_deflated(t, xs, ys + shift, self._serial[key])
        called = rejects(t, n1, n2, alpha, u)
        if min(n1, n2) <= JOIN_MAX:  # compare also asks Yuen's trimmed t on the logarithms there
            called &= trimmed_rejects(xs, ys + shift, alpha)
        return float(np.mean(called))


JOIN_MAX = 5  # up to this many values on a side compare's test is joined with Yuen's trimmed t on the logarithms
# (4 until wave 7: alone, the permutation test called 8.1-8.3% of 5 values 3x as wide as 30 or 500 others, same median)
# (abstat.comparison.estimands._join_trimmed: the permutation test alone is liberal there when the small side is wider)
TRIM = 0.1  # as abstat.comparison.estimands.TRIM


def partner_df(welch_df: np.ndarray | float, h1: int, h2: int) -> np.ndarray | float:
    """The partner test's degrees of freedom: Welch-Satterthwaite's, but at most
    ``(h - 1) + (h - 2) / 2`` for the smaller kept count ``h`` (1 at 2 values, 2.5 at
    3, 4 at 4, 5.5 at 5).  Welch's df is computed from the sample variances: when the
    few values happen to lie close together their variance is small, the df rises
    towards the big side's, and the t quantile falls just when ``|t|`` is large, so
    Welch's t is liberal with 2-4 values against more.  Joined with the permutation
    test, small side 3x to 5x as wide (same centre; 20,000 normal draws each against
    6-100 values) it called up to 8.9% different at 2 values, 6.4% at 3 and 5.9% at
    4; with this cap at most 4.1%, 5.6% and 5.6% (docs/statistics.md, wave 9).
    Hsu's ``h - 1`` (always conservative) cost 8 points of power at 3 against 30."""
    h = min(h1, h2)
    return np.minimum(welch_df, (h - 1) + (h - 2) / 2.0)


def _trimmed(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Per row: the trimmed mean, the squared standard error term
    ``(n - 1) s_w^2 / (h (h - 1))`` and the count kept ``h``."""
    s = np.sort(v, axis=1)
    n = s.shape[1]
    g = int(math.floor(TRIM * n))
    h = n - 2 * g
    w = np.clip(s, s[:, [g]], s[:, [n - g - 1]])
    return s[:, g : n - g].mean(axis=1), (n - 1) * w.var(axis=1, ddof=1) / (h * (h - 1)), h


def trimmed_rejects(xs: np.ndarray, ys: np.ndarray, alpha: float) -> np.ndarray:
    """Whether Yuen's :data:`TRIM`-trimmed t rejects at ``alpha`` (two-sided) for each row pair."""
    from abstat.stats.t_quantile_rows import stdtr_rows

    (mx, a1, h1), (my, a2, h2) = _trimmed(xs), _trimmed(ys)
    se = np.sqrt(a1 + a2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(my - mx) / se
        df = np.asarray(partner_df((a1 + a2) ** 2 / (a1 * a1 / (h1 - 1) + a2 * a2 / (h2 - 1)), h1, h2))
    out = np.zeros(t.size, dtype=bool)
    rows = np.flatnonzero(np.isfinite(t) & np.isfinite(df))
    tails = stdtr_rows([float(v) for v in df[rows]], [-float(v) for v in t[rows]])  # (together: stdtr's floats)
    out[rows] = [2.0 * tail < alpha for tail in tails]
    return out


def serial_factor_rows(xs: np.ndarray, ys: np.ndarray, confidence: float) -> np.ndarray | None:
    """Each data set's variance factors ``(fx, fy)`` from ``compare``'s pre-test for serial correlation
    (:func:`abstat.stats.dependence.serial_factors`, the simulated values in their drawn order); None
    below :data:`abstat.stats.dependence.MIN_N` values, where it never fires."""
    from abstat.stats.dependence import MIN_N, PRETEST_Z, ROUGH_N, SMALL_PRETEST_Z, serial_factors_many

    n1, n2 = xs.shape[1], ys.shape[1]
    if min(n1, n2) < MIN_N:
        return None
    rx, ry = _lag1_ranks(xs), _lag1_ranks(ys)
    # serial_factors' own gate, for every row at once: only the rows it could fire on (a tenth of i.i.d.
    # ones) or whose order is a sort's (which it reads apart) are asked one by one (8,000 calls were 0.4 s
    # of `abstat plan a b`'s 0.5), their t quantiles computed together
    z = (n1 * rx + n2 * ry + 2.0) / (n1 + n2) * math.sqrt(n1 + n2)
    gate = PRETEST_Z if (n1 + n2) / 2 >= ROUGH_N else SMALL_PRETEST_Z
    out = np.ones((xs.shape[0], 2))
    sorted_x, sorted_y = _monotone(xs), _monotone(ys)  # (is_sorted's, for every row at once)
    asked = np.flatnonzero((z > gate - 1e-9) | sorted_x | sorted_y)  # (its own z decides)
    pairs = [(xs[i], ys[i], (float(rx[i]), float(ry[i])), (not sorted_x[i], not sorted_y[i])) for i in asked]
    if pairs:
        out[asked] = serial_factors_many(pairs, confidence)
    return out


def _monotone(v: np.ndarray) -> np.ndarray:
    """Each row is in ascending or descending order, not all equal (:func:`abstat.stats.dependence.is_sorted`)."""
    steps = v[:, 1:] - v[:, :-1]
    return np.any(steps != 0, axis=1) & (np.all(steps >= 0, axis=1) | np.all(steps <= 0, axis=1))


def serial_deflated(t: np.ndarray, xs: np.ndarray, ys: np.ndarray, factors: np.ndarray | None) -> np.ndarray:
    """``t`` as ``compare`` sees it after its pre-test for serial correlation: where the pre-test
    fired on a data set (``factors``: :func:`serial_factor_rows`), its ``T`` takes the variance factors.
    Without this the sizing promised 82% power at 20 values a side where compare, which widened 28 of
    300 i.i.d. data sets, delivered 74% (attack22 A5)."""
    if factors is None:
        return t
    out = t.copy()
    for i in np.flatnonzero(np.any(factors != 1.0, axis=1)):
        fx, fy = float(factors[i, 0]), float(factors[i, 1])
        out[i] = t[i] / math.sqrt(fx) if fx == fy else _inflated_statistic(xs[i], ys[i], (fx, fy))
    return out


def _lag1_ranks(v: np.ndarray) -> np.ndarray:
    """Each row's lag-1 autocorrelation of its ranks (untied rows), as
    :func:`abstat.stats.dependence.lag1_rank_autocorrelation` computes it."""
    ranks = _row_ranks(v).astype(float)
    centred = ranks - ranks.mean(axis=1, keepdims=True)
    spread = np.einsum("ij,ij->i", centred, centred)
    lagged = np.einsum("ij,ij->i", centred[:, 1:], centred[:, :-1])
    return np.divide(lagged, spread, out=np.zeros_like(spread), where=spread > 0)


def _row_ranks(v: np.ndarray) -> np.ndarray:
    """Each row's ranks from 0, equal values in their order: ``argsort(argsort(v))``, the second sort (of a
    permutation) taken as the permutation's inverse (the same integers; 14 ms of ``abstat plan a b``)."""
    order = np.argsort(v, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(v.shape[1]), axis=1)
    return ranks


def _inflated_statistic(x: np.ndarray, y: np.ndarray, factors: tuple[float, float]) -> float:
    """Brunner-Munzel's ``T`` of one untied pair with the variance factors of ``x`` and ``y``."""
    small_first = x.size <= y.size
    z = np.concatenate((x, y) if small_first else (y, x))
    m = min(x.size, y.size)
    positions = np.sort(np.argsort(np.argsort(z, kind="stable"), kind="stable")[:m])
    inflate = factors if small_first else (factors[1], factors[0])
    return float(statistics(_untied(z.size), positions[None, :], inflate)[0])


def statistic(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Brunner-Munzel's ``T`` of each row pair of untied samples, as the
    permutation test computes it (the smaller sample's pooled ranks)."""
    return statistic_and_sum(xs, ys)[0]


def statistic_and_sum(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`statistic` and the smaller sample's sum of placements (its rank sum less ``m (m - 1) / 2``)."""
    small_first = xs.shape[1] <= ys.shape[1]
    z = np.concatenate((xs, ys) if small_first else (ys, xs), axis=1)
    m = min(xs.shape[1], ys.shape[1])
    positions = np.sort(_row_ranks(z)[:, :m], axis=1)
    return statistics(_untied(z.shape[1]), positions), positions.sum(axis=1) - m * (m - 1) // 2
