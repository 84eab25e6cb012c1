"""Two-sample location-shift estimators with confidence intervals and p-values.

Every function takes the baseline ``x`` and the candidate ``y`` as 1-D numpy
float arrays (already on the analysis scale, e.g. logarithms) and returns a
:class:`Shift`: the estimated shift ``y - x``, its confidence interval, a
two-sided p-value for "no shift" and an equivalent standard error (the
interval's half-width divided by the normal quantile) that the adaptive
selector compares across estimators.

- :func:`welch`: difference of means, Welch-Satterthwaite t (Welch 1947).
- :func:`yuen`: difference of trimmed means with winsorized variances
  (Yuen 1974; ``trim=0`` is Welch).
- :func:`hodges_lehmann`: median of the pairwise differences with the
  distribution-free interval obtained by inverting the Mann-Whitney-Wilcoxon
  test (Hodges & Lehmann 1963; Bauer 1972), tie-corrected; the p-value is the
  Mann-Whitney test's (exact for small samples without ties, normal
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
    built by multiplying (1 - q^(n1+i)) / (1 - q^i) for i = 1..n2.
    """
    size = n1 * n2 + 1
    poly = np.zeros(size)
    poly[0] = 1.0
    for i in range(1, n2 + 1):
        shifted = np.zeros(size)
        shifted[n1 + i :] = poly[: size - (n1 + i)]
        poly = poly - shifted  # times (1 - q^(n1+i))
        for k in range(i, size):  # divided by (1 - q^i)
            poly[k] += poly[k - i]
    return poly / poly.sum()


EXACT_LIMIT = 8  # scipy.stats.mannwhitneyu uses the exact distribution up to 8 per side


def hodges_lehmann(x: np.ndarray, y: np.ndarray, confidence: float) -> Shift:
    """Hodges-Lehmann shift with the Mann-Whitney-inverted interval."""
    n1, n2 = x.size, y.size
    n_pairs = n1 * n2
    raw = np.subtract.outer(y, x).ravel()
    both = np.concatenate([x, y])
    ties = _has_ties(both)
    alpha = 1.0 - confidence
    if not ties and n1 <= EXACT_LIMIT and n2 <= EXACT_LIMIT:
        pmf = mwu_exact_pmf(n1, n2)
        cdf = np.cumsum(pmf)
        # Largest c with P(U <= c - 1) <= alpha / 2: accept U in [c, N - c].
        c = int(np.searchsorted(cdf, alpha / 2.0 + 1e-12, side="right"))
        m_lo, m_hi = c, n_pairs - c
        u = float(np.sum(raw > 0))  # U of y over x (no ties here)
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
        greater = float(np.count_nonzero(raw > 0))
        equal = float(np.count_nonzero(raw == 0))
        u = greater + 0.5 * equal
        var0 = n1 * n2 / 12.0 * ((n + 1) - _tie_term(both) / (n * (n - 1)))
        if var0 <= 0:
            p = 1.0
        else:
            zstat = (abs(u - n_pairs / 2.0) - 0.5) / math.sqrt(var0)
            p = float(min(1.0, 2.0 * special.ndtr(-max(zstat, 0.0))))
        method = "Hodges-Lehmann / Mann-Whitney"
    # Accepted shifts: between D_(m_lo) and D_(m_hi + 1) (1-based order
    # statistics); a partial sort finds them and the median in O(N).
    half = n_pairs // 2
    wanted = {half, half - 1 if n_pairs % 2 == 0 else half}
    if m_lo >= 1:
        wanted.add(m_lo - 1)
    if m_hi < n_pairs:
        wanted.add(m_hi)
    diffs = np.partition(raw, sorted(wanted))
    est = float(diffs[half]) if n_pairs % 2 else float((diffs[half - 1] + diffs[half]) / 2.0)
    low = float(diffs[m_lo - 1]) if m_lo >= 1 else -math.inf
    high = float(diffs[m_hi]) if m_hi < n_pairs else math.inf
    z = _z_quantile(confidence)
    se = (high - low) / (2.0 * z) if math.isfinite(high - low) else math.inf
    return Shift(est, low, high, p, se, method, None)
