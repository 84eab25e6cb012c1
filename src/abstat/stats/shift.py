"""Two-sample location-shift estimators with confidence intervals and p-values.

Every function takes the baseline ``x`` and the candidate ``y`` as 1-D numpy
float arrays (already on the analysis scale, e.g. logarithms) and returns a
:class:`Shift`: the estimated shift ``y - x``, its confidence interval, a
two-sided p-value for "no shift" and an equivalent standard error (the
interval's half-width divided by the normal quantile).  ``abstat compare``
itself compares medians (:mod:`abstat.stats.medians`) or means
(:mod:`abstat.stats.ratio`); these estimators remain for the library's users.

- :func:`welch`: difference of means, Welch-Satterthwaite t (Welch 1947).
- :func:`yuen`: difference of trimmed means with winsorized variances
  (Yuen 1974; ``trim=0`` is Welch).
- :func:`hodges_lehmann`: median of the pairwise differences with the
  distribution-free interval obtained by inverting the Mann-Whitney-Wilcoxon
  test (Hodges & Lehmann 1963; Bauer 1972), tie-corrected; the p-value is the
  Mann-Whitney test's (exact when either sample has at most 8 values and
  there are no ties, as ``scipy.stats.mannwhitneyu(method="auto")``; normal
  approximation with tie and continuity correction otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class Shift:
    """A shift estimate ``candidate - baseline`` on the analysis scale."""

    estimate: float
    low: float
    high: float
    p_value: float
    se: float
    method: str
    df: float | None = None


def _t_quantile(df: float, confidence: float) -> float:
    return float(special.stdtrit(df, 0.5 + confidence / 2.0))


def _t_two_sided_p(t: float, df: float) -> float:
    if math.isnan(t):
        return 1.0
    return float(2.0 * special.stdtr(df, -abs(t)))


def _z_quantile(confidence: float) -> float:
    return float(special.ndtri(0.5 + confidence / 2.0))


def trimmed_parts(a: np.ndarray, trim: float) -> tuple[float, float, int]:
    """Trimmed mean, winsorized variance (n-1 denominator) and the number kept.

    ``g = floor(trim * n)`` values are cut from each end, as in
    ``scipy.stats.trim_mean`` and Yuen's test.
    """
    s = np.sort(a)
    n = s.size
    g = int(math.floor(trim * n))
    h = n - 2 * g
    tmean = float(s[g : n - g].mean())
    if g:
        w = s.copy()
        w[:g] = s[g]
        w[n - g :] = s[n - g - 1]
    else:
        w = s
    wvar = float(w.var(ddof=1)) if n > 1 else 0.0
    return tmean, wvar, h


def yuen(x: np.ndarray, y: np.ndarray, confidence: float, trim: float = 0.2) -> Shift:
    """Yuen's trimmed-means test (Welch's when ``trim`` is 0)."""
    mx, vx, hx = trimmed_parts(x, trim)
    my, vy, hy = trimmed_parts(y, trim)
    nx, ny = x.size, y.size
    dx = (nx - 1) * vx / (hx * (hx - 1))
    dy = (ny - 1) * vy / (hy * (hy - 1))
    est = my - mx
    se = math.sqrt(dx + dy)
    name = "Welch t" if trim == 0 else f"Yuen {trim:.0%}-trimmed t"
    if se == 0.0:
        p = 1.0 if est == 0.0 else 0.0
        return Shift(est, est, est, p, 0.0, name, None)
    df = (dx + dy) ** 2 / (dx * dx / (hx - 1) + dy * dy / (hy - 1))
    q = _t_quantile(df, confidence)
    p = _t_two_sided_p(est / se, df)
    return Shift(est, est - q * se, est + q * se, p, se, name, df)


def welch(x: np.ndarray, y: np.ndarray, confidence: float) -> Shift:
    """Welch's unequal-variances t for the difference of means."""
    return yuen(x, y, confidence, trim=0.0)


def _tie_term(values: np.ndarray) -> float:
    """Sum of t^3 - t over the groups of tied values."""
    _, counts = np.unique(values, return_counts=True)
    counts = counts[counts > 1].astype(float)
    return float(np.sum(counts**3 - counts))


def _has_ties(values: np.ndarray) -> bool:
    s = np.sort(values)
    return bool(np.any(s[1:] == s[:-1]))


def mwu_exact_pmf(n1: int, n2: int) -> np.ndarray:
    """Null distribution of the Mann-Whitney U (no ties), U = 0 .. n1*n2.

    Coefficients of the Gaussian binomial coefficient [n1+n2 choose n1]_q,
    built by multiplying (1 - q^(m+i)) / (1 - q^i) for i = 1..k, with k the
    smaller and m the larger sample size (the distribution is symmetric in
    the two); dividing by (1 - q^i) is a running sum with stride i.
    """
    m, k = max(n1, n2), min(n1, n2)
    size = n1 * n2 + 1
    poly = np.zeros(size)
    poly[0] = 1.0
    for i in range(1, k + 1):
        shifted = np.zeros(size)
        shifted[m + i :] = poly[: size - (m + i)]
        poly = poly - shifted  # times (1 - q^(m+i))
        rows = -(-size // i)
        padded = np.zeros(rows * i)
        padded[:size] = poly
        poly = np.cumsum(padded.reshape(rows, i), axis=0).ravel()[:size]  # divided by (1 - q^i)
    return poly / poly.sum()


PAIRWISE_LIMIT = 4_000_000  # beyond this many pairs, order statistics by bisection


class _PairwiseDifferences:
    """The n1 * n2 differences ``y_j - x_i``: counts and order statistics.

    Small problems materialise the differences (a partial sort finds the
    order statistics in O(N)); large ones never do: the number of
    differences above a value is a sum of binary searches in the sorted
    ``x`` (O(n log n)), and an order statistic is found by bisection on
    that count, then snapped to the nearest actual difference.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x = np.sort(x)
        self.y = np.sort(y)
        self.n_pairs = x.size * y.size
        self.raw = np.subtract.outer(y, x).ravel() if self.n_pairs <= PAIRWISE_LIMIT else None

    def _row_counts(self, d: float, strict: bool) -> np.ndarray:
        """Per y_j: #{i: y_j - x_i > d} (or >= d), with the differences
        computed exactly as the materialised ones: for each j, ``y_j - x_i``
        falls as i grows, so a vectorised binary search over i finds it."""
        n1 = self.x.size
        lo = np.zeros(self.y.size, dtype=np.int64)
        hi = np.full(self.y.size, n1, dtype=np.int64)
        for _ in range(int(n1).bit_length() + 1):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            diff = self.y - self.x[np.minimum(mid, n1 - 1)]
            right = active & ((diff > d) if strict else (diff >= d))
            lo = np.where(right, mid + 1, lo)
            hi = np.where(active & ~right, mid, hi)
        return lo

    def count_greater(self, d: float) -> int:
        if self.raw is not None:
            return int(np.count_nonzero(self.raw > d))
        return int(self._row_counts(d, strict=True).sum())

    def count_equal(self, d: float) -> int:
        if self.raw is not None:
            return int(np.count_nonzero(self.raw == d))
        return int(self._row_counts(d, strict=False).sum() - self._row_counts(d, strict=True).sum())

    def order_statistics(self, ranks: list[int]) -> dict[int, float]:
        """1-based order statistics of the differences."""
        if self.raw is not None:
            part = np.partition(self.raw, sorted({r - 1 for r in ranks}))
            return {r: float(part[r - 1]) for r in ranks}
        return {r: self._kth(r) for r in ranks}

    def _kth(self, k: int) -> float:
        """k-th smallest difference: bisect on the value until few enough
        differences lie in (lo, hi], then gather those and select exactly."""
        n1, n_pairs = self.x.size, self.n_pairs
        lo = float(self.y[0] - self.x[-1])
        hi = float(self.y[-1] - self.x[0])
        g_lo = self._row_counts(lo, strict=True)  # differences > lo per row
        if n_pairs - int(g_lo.sum()) >= k:
            return lo  # the minimum itself
        g_hi = np.zeros(self.y.size, dtype=np.int64)  # nothing exceeds the maximum
        limit = max(4 * (n1 + self.y.size), 100_000)
        while int(g_lo.sum() - g_hi.sum()) > limit:
            # Heavy ties: if no difference lies strictly between lo and hi,
            # the k-th one (in (lo, hi]) equals hi.
            if int(g_lo.sum() - self._row_counts(hi, strict=False).sum()) == 0:
                return hi
            mid = lo + (hi - lo) / 2.0
            if not lo < mid < hi:
                break
            g_mid = self._row_counts(mid, strict=True)
            if n_pairs - int(g_mid.sum()) >= k:  # at least k differences <= mid
                hi, g_hi = mid, g_mid
            else:
                lo, g_lo = mid, g_mid
        # Differences in (lo, hi] of row j: i in [g_hi[j], g_lo[j]).
        counts = g_lo - g_hi
        total = int(counts.sum())
        rows = np.repeat(np.arange(self.y.size), counts)
        starts = np.repeat(g_hi - (np.cumsum(counts) - counts), counts)
        cols = starts + np.arange(total)
        values = self.y[rows] - self.x[cols]
        below = n_pairs - int(g_lo.sum())  # differences <= lo
        return float(np.partition(values, k - below - 1)[k - below - 1])


EXACT_LIMIT = 8  # scipy.stats.mannwhitneyu: exact when either sample has at most 8 values (no ties)


def hodges_lehmann(x: np.ndarray, y: np.ndarray, confidence: float) -> Shift:
    """Hodges-Lehmann shift with the Mann-Whitney-inverted interval."""
    n1, n2 = x.size, y.size
    n_pairs = n1 * n2
    pairs = _PairwiseDifferences(x, y)
    both = np.concatenate([x, y])
    ties = _has_ties(both)
    alpha = 1.0 - confidence
    if not ties and min(n1, n2) <= EXACT_LIMIT:
        pmf = mwu_exact_pmf(n1, n2)
        cdf = np.cumsum(pmf)
        # Largest c with P(U <= c - 1) <= alpha / 2: accept U in [c, N - c].
        c = int(np.searchsorted(cdf, alpha / 2.0 + 1e-12, side="right"))
        m_lo, m_hi = c, n_pairs - c
        u = float(pairs.count_greater(0.0))  # U of y over x (no ties here)
        k = min(u, n_pairs - u)
        p = float(min(1.0, 2.0 * cdf[int(k)]))
        method = "Hodges-Lehmann / Mann-Whitney (exact)"
    else:
        n = n1 + n2
        # Within-sample ties only: between the pairwise differences no value of
        # the other sample coincides, so this is the variance the test uses
        # at every shift inside the interval's search range.
        tie_within = _tie_term(x) + _tie_term(y)
        var = n1 * n2 / 12.0 * ((n + 1) - tie_within / (n * (n - 1)))
        sigma = math.sqrt(max(var, 0.0))
        z = _z_quantile(confidence)
        m_lo = int(math.ceil(n_pairs / 2.0 - z * sigma - 0.5))
        m_hi = int(math.floor(n_pairs / 2.0 + z * sigma + 0.5))
        # p-value at zero shift, pooled ties included (scipy's convention).
        greater = float(pairs.count_greater(0.0))
        equal = float(pairs.count_equal(0.0))
        u = greater + 0.5 * equal
        var0 = n1 * n2 / 12.0 * ((n + 1) - _tie_term(both) / (n * (n - 1)))
        if var0 <= 0:
            p = 1.0
        else:
            zstat = (abs(u - n_pairs / 2.0) - 0.5) / math.sqrt(var0)
            p = float(min(1.0, 2.0 * special.ndtr(-max(zstat, 0.0))))
        method = "Hodges-Lehmann / Mann-Whitney"
    # Accepted shifts: between D_(m_lo) and D_(m_hi + 1) (1-based order statistics).
    half = n_pairs // 2
    wanted = [half + 1] if n_pairs % 2 else [half, half + 1]
    if m_lo >= 1:
        wanted.append(m_lo)
    if m_hi < n_pairs:
        wanted.append(m_hi + 1)
    order = pairs.order_statistics(wanted)
    est = order[half + 1] if n_pairs % 2 else (order[half] + order[half + 1]) / 2.0
    low = order[m_lo] if m_lo >= 1 else -math.inf
    high = order[m_hi + 1] if m_hi < n_pairs else math.inf
    z = _z_quantile(confidence)
    se = (high - low) / (2.0 * z) if math.isfinite(high - low) else math.inf
    return Shift(est, low, high, p, se, method, None)
