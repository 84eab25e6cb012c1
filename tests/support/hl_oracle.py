"""Brute-force references for the default comparison (docs/statistics.md):
tie spreading, the Hodges-Lehmann ratio over all pairs, pseudo-medians over
all Walsh averages, and the Brunner-Munzel test from scipy.  Written
independently of abstat's code, with plain loops and numpy over every pair."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def spread(values) -> np.ndarray:
    """Each group of k equal values as k points evenly inside [v - h, v + h],
    h half the distance to the nearest other distinct value (sorted output)."""
    v = np.sort(np.asarray(values, dtype=float))
    levels, counts = np.unique(v, return_counts=True)
    out = []
    for i, (level, k) in enumerate(zip(levels, counts)):
        gaps = [level - levels[i - 1]] if i > 0 else []
        gaps += [levels[i + 1] - level] if i + 1 < len(levels) else []
        h = min(gaps) / 2 if gaps and k > 1 else 0.0
        out += [level - h + 2 * h * (j + 0.5) / k for j in range(k)]
    return np.array(out)


def hl_ratio_pct(x, y) -> float:
    """The Hodges-Lehmann ratio in percent: the median of all pairwise differences of the
    logarithms, ties spread on that scale."""
    lx, ly = spread(np.log(np.asarray(x, dtype=float))), spread(np.log(np.asarray(y, dtype=float)))
    return 100 * math.expm1(float(np.median(np.subtract.outer(ly, lx))))


def pseudo_median(values) -> float:
    """exp of the median of all Walsh averages (i <= j) of the logarithms, ties spread on that scale."""
    logs = spread(np.log(np.asarray(values, dtype=float)))
    walsh = [(logs[i] + logs[j]) / 2 for i in range(logs.size) for j in range(i, logs.size)]
    return math.exp(float(np.median(walsh)))


def bm_accepts(x, y, ratio_pct: float, alpha: float = 0.05) -> bool:
    """Does scipy's Brunner-Munzel test accept the ratio (x against y / ratio, untied data)?"""
    shifted = np.log(np.asarray(y, dtype=float)) - math.log1p(ratio_pct / 100)
    return bool(stats.brunnermunzel(np.log(np.asarray(x, dtype=float)), shifted).pvalue >= alpha)
