"""One-sample location: the distribution-free confidence interval of the median.

The interval is the pair of order statistics ``[x_(k), x_(n-k+1)]`` with the
largest ``k`` such that ``P(Bin(n, 1/2) <= k - 1) <= (1 - confidence) / 2``;
its coverage is at least ``confidence`` for any continuous distribution
(Conover, *Practical Nonparametric Statistics*, 3rd ed., section 3.2;
the same interval as ``scipy.stats.quantile_test(...).confidence_interval``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from abstat.stats.distributions import binom_half_cdf, ndtri


@lru_cache(maxsize=256)  # (both variants of a comparison, every cell of a report: the same few sizes)
def median_ci_ranks(n: int, confidence: float) -> tuple[int, int] | None:
    """1-based ranks ``(k, n - k + 1)`` of the interval, or None if n is too small."""
    alpha = 1.0 - confidence
    # k = number of j in 0..n with P(Bin(n, 1/2) <= j) <= alpha / 2; only a
    # window around the normal approximation needs evaluating.
    z = ndtri(1.0 - alpha / 2.0)
    start = max(0, int(n / 2.0 - z * math.sqrt(n) / 2.0) - 10)
    stop = min(n, int(n / 2.0 - z * math.sqrt(n) / 2.0) + 12)
    # the CDF rises with j: bisect for the last j with P <= alpha / 2 (a few evaluations, not the window's 23)
    lo, hi = start - 1, max(stop, start) + 1  # P(lo) <= alpha / 2 (or lo below the window), P(hi) > alpha / 2 assumed
    if binom_half_cdf(start, n) > alpha / 2.0:
        hi = start
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if binom_half_cdf(mid, n) <= alpha / 2.0 else (lo, mid)
    k = lo + 1 if lo >= start else 0
    if k == 0:
        return None
    return k, n - k + 1


def median_ci(values: Sequence[float] | np.ndarray, confidence: float) -> tuple[float, float] | None:
    """Distribution-free interval for the median, None when ``n`` is too small."""
    return median_ci_of_sorted(np.sort(np.asarray(values, dtype=float)), confidence)


def median_ci_of_sorted(s: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """:func:`median_ci` of values already in ascending order (float64)."""
    ranks = median_ci_ranks(s.size, confidence)
    if ranks is None:
        return None
    return float(s[ranks[0] - 1]), float(s[ranks[1] - 1])


def min_n_for_median_ci(confidence: float) -> int:
    """Smallest sample with a distribution-free median interval at ``confidence``.

    It exists once both extremes together are unlikely enough:
    ``2 * 0.5**n <= 1 - confidence``.
    """
    return max(1, math.ceil(math.log2(2.0 / (1.0 - confidence)) - 1e-12))
