"""Difference (or ratio) of two medians: the Bonett-Price test and interval.

Each variant's median gets its own distribution-free standard error from the
order statistics around it (McKean & Schrader 1984; Price & Bonett 2001):
with ``c = max(1, round(n/2 - sqrt(n)))`` and ``alpha* = 2 P(Bin(n, 1/2) <=
c - 1)`` the exact non-coverage of ``[x_(c), x_(n-c+1)]``,

    se(median) = (x_(n-c+1) - x_(c)) / (2 z_{1 - alpha*/2}).

The two standard errors are combined as in Welch's test (no common spread is
assumed), and the difference of the medians gets the normal interval and
p-value (Bonett & Price 2002, "Statistical inference for a linear function of
medians", *Psychological Methods* 7(3); Price & Bonett 2002, "Distribution-free
confidence intervals for difference and ratio of medians", *J. Statist.
Comput. Simul.* 72(2)).  On logarithms it is a ratio of medians (the median of
the logarithms is the logarithm of the median).  Because interval and p-value
come from the same statistic, the interval excludes 0 exactly when
``p < 1 - confidence``.

On heavily quantized data the order statistics around the median are often
all one grid value: the median then cannot move by less than a grid step and
its order-statistic standard error is 0.  :func:`median_shift` then takes
half the gap to the neighbouring value (half a grid step) instead: such a
median is known to within a step, not exactly, and a change smaller than a
step cannot show in it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from abstat.stats.distributions import binom_half_cdf, ndtr, ndtri, stdtr, stdtrit
from abstat.stats.ratio import welch_df


@dataclass(frozen=True)
class MedianShift:
    """``median(y) - median(x)`` on the analysis scale, with interval and p."""

    estimate: float
    low: float
    high: float
    p_value: float
    se: float
    se_x: float
    se_y: float
    pinned: bool = False  # a median's order statistics were all one value (grid step used)
    df: float = math.inf  # of the t quantile (inf: the normal one)


def _depth(n: int) -> int:
    """``c``: the median's interval is ``[x_(c), x_(n-c+1)]``."""
    return max(1, int(round(n / 2.0 - math.sqrt(n))))


def median_se(sorted_values: np.ndarray) -> float:
    """Distribution-free standard error of the sample median (sorted input)."""
    n = int(sorted_values.size)
    if n < 2:
        return math.nan
    c = _depth(n)
    alpha_star = 2.0 * binom_half_cdf(c - 1, n)
    z = ndtri(1.0 - alpha_star / 2.0)
    return float(sorted_values[n - c] - sorted_values[c - 1]) / (2.0 * z)


def median(values: np.ndarray) -> float:
    """The sample median (mean of the two middle values for an even n), by
    partial sort: ``np.median`` gives the same value but imports ``numpy.ma``
    (30 ms of start-up)."""
    n = values.size
    half = n // 2
    if n % 2:
        return float(np.partition(values, half)[half])
    part = np.partition(values, [half - 1, half])
    return _midpoint(float(part[half - 1]), float(part[half]))


def _midpoint(low: float, high: float) -> float:
    """``(low + high) / 2`` that does not overflow near the largest double."""
    middle = (low + high) / 2.0
    return middle if math.isfinite(middle) else low / 2.0 + high / 2.0


def sorted_median(sorted_values: np.ndarray) -> float:
    n = sorted_values.size
    half = n // 2
    if n % 2:
        return float(sorted_values[half])
    return _midpoint(float(sorted_values[half - 1]), float(sorted_values[half]))


def grid_gap(sorted_values: np.ndarray) -> float:
    """The gap from the median to the nearest other value of the sample
    (inf when every value is the same)."""
    m = sorted_median(sorted_values)
    below = sorted_values[sorted_values < m]
    above = sorted_values[sorted_values > m]
    gaps = ([m - float(below[-1])] if below.size else []) + ([float(above[0]) - m] if above.size else [])
    return min(gaps) if gaps else math.inf


def median_step(sorted_values: np.ndarray) -> float:
    """The smallest gap between adjacent distinct values in the median's
    order-statistic window ``x_(c-1) .. x_(n-c+2)`` (inf when the window
    holds one value).  On discrete data (counts, clock ticks) the sample
    median moves in such steps: when the population median sits near a step
    of the CDF it takes the values on either side about equally often, so
    its standard error is about half a step however narrow the order
    statistics look; on continuous data the gap is negligible."""
    n = int(sorted_values.size)
    c = _depth(n)
    gaps = np.diff(sorted_values[max(0, c - 2):min(n, n - c + 2)])  # sorted: no np.unique (imports numpy.ma)
    steps = gaps[gaps > 0]
    return float(steps.min()) if steps.size else math.inf


def median_shift(x: np.ndarray, y: np.ndarray, confidence: float, estimate: float | None = None) -> MedianShift:
    """Bonett-Price comparison of the medians of ``y`` (candidate) and ``x``.

    When the order statistics around a median are all one value (quantized
    data), its standard error is taken as half the gap to the nearest other
    value (half a grid step): the median is then known to a grid step, not
    exactly.  A variant whose values are all equal borrows the other's gap;
    if both are constant the standard error is 0 (no noise to judge by).
    ``estimate`` replaces the difference of the sample medians (on
    logarithms: the log of the ratio of the medians of the raw values, which
    differs from the median of the logs for an even n)."""
    sx, sy = np.sort(x), np.sort(y)
    se_x, se_y = median_se(sx), median_se(sy)
    pinned = se_x == 0.0 or se_y == 0.0
    if pinned:
        gap = min(grid_gap(sx), grid_gap(sy))
        if math.isfinite(gap):
            se_x = se_x or gap / 2.0
            se_y = se_y or gap / 2.0
    # Discrete data: a median known only to within a step of the values.
    floor_x, floor_y = median_step(sx) / 2.0, median_step(sy) / 2.0
    if se_x < floor_x < math.inf or se_y < floor_y < math.inf:
        pinned = True
        se_x = max(se_x, floor_x) if math.isfinite(floor_x) else se_x
        se_y = max(se_y, floor_y) if math.isfinite(floor_y) else se_y
    est = sorted_median(sy) - sorted_median(sx) if estimate is None else estimate
    se = math.hypot(se_x, se_y)
    if not se > 0.0:
        p = 1.0 if est == 0.0 else math.nan
        return MedianShift(est, est, est, p, 0.0 if se == 0.0 else math.nan, se_x, se_y, pinned)
    df = small_sample_df(sx.size, se_x, sy.size, se_y)
    if math.isinf(df):
        z = ndtri(0.5 + confidence / 2.0)
        p = min(1.0, 2.0 * ndtr(-abs(est / se)))
    else:
        z = stdtrit(df, 0.5 + confidence / 2.0)
        p = min(1.0, 2.0 * stdtr(df, -abs(est / se)))
    return MedianShift(est, est - z * se, est + z * se, p, se, se_x, se_y, pinned, df)


SMALL_N = 5  # below this a median's order-statistic standard error is itself too uncertain for z


def small_sample_df(n1: int, se1: float, n2: int, se2: float) -> float:
    """Degrees of freedom for the Bonett-Price statistic: infinite (the
    normal quantile) when both variants have at least :data:`SMALL_N`
    values; otherwise Welch-Satterthwaite's with ``n_i - 1`` per variant, as
    if each standard error came from a sample deviation.  With 3 values the
    standard error rests on the range of the sample: the normal quantile gave
    87-91% coverage at 95% for 3 vs 30 (``benchmarks/edge_calibration.py``)."""
    if min(n1, n2) >= SMALL_N:
        return math.inf
    a1, a2 = se1 * se1, se2 * se2
    return welch_df(n1, a1, n2, a2) if a1 + a2 > 0 else math.inf
