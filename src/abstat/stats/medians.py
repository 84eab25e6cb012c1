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
its standard error is 0.  :func:`median_shift` reports that as unresolvable
(``se == 0``) rather than as an infinitely precise change.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from abstat.stats.distributions import binom_half_cdf, ndtr, ndtri


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


def median_se(sorted_values: np.ndarray) -> float:
    """Distribution-free standard error of the sample median (sorted input)."""
    n = int(sorted_values.size)
    if n < 2:
        return math.nan
    c = max(1, int(round(n / 2.0 - math.sqrt(n))))
    alpha_star = 2.0 * binom_half_cdf(c - 1, n)
    z = ndtri(1.0 - alpha_star / 2.0)
    return float(sorted_values[n - c] - sorted_values[c - 1]) / (2.0 * z)


def sorted_median(sorted_values: np.ndarray) -> float:
    n = sorted_values.size
    half = n // 2
    return float(sorted_values[half]) if n % 2 else float((sorted_values[half - 1] + sorted_values[half]) / 2.0)


def median_shift(x: np.ndarray, y: np.ndarray, confidence: float) -> MedianShift:
    """Bonett-Price comparison of the medians of ``y`` (candidate) and ``x``."""
    sx, sy = np.sort(x), np.sort(y)
    se_x, se_y = median_se(sx), median_se(sy)
    est = sorted_median(sy) - sorted_median(sx)
    se = math.hypot(se_x, se_y)
    if not se > 0.0:
        p = 1.0 if est == 0.0 else math.nan
        return MedianShift(est, est, est, p, 0.0 if se == 0.0 else math.nan, se_x, se_y)
    z = ndtri(0.5 + confidence / 2.0)
    p = min(1.0, 2.0 * ndtr(-abs(est / se)))
    return MedianShift(est, est - z * se, est + z * se, p, se, se_x, se_y)
