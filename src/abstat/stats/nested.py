"""Nested samples: several independent runs (boots, processes) per variant.

Samples taken within one run share that run's offset, so they are not
independent observations of the variant.  abstat therefore treats the *run*
as the experimental unit: each run is reduced to one centre and the centres
are compared (Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time",
ISMM 2013; the classical "analysis of cluster means", e.g. Donner & Klar 2000).

The between-run share of the variance is the one-way random-effects ANOVA
estimate (method of moments; Searle, Casella & McCulloch, *Variance
Components*, 1992, ch. 3) with the unbalanced-design ``n0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VarianceComponents:
    between: float  # variance of the run offsets
    within: float  # variance of samples inside a run
    share_between: float  # between / (between + within), 0..1
    f_statistic: float
    p_value: float  # one-way ANOVA F test: do the runs differ?


@dataclass(frozen=True)
class RunStats:
    """Per-run n, mean, standard deviation (NaN for one sample) and median,
    computed for all runs at once (thousands of short runs cost no Python
    loop per run)."""

    sizes: np.ndarray
    means: np.ndarray
    stddevs: np.ndarray
    medians: np.ndarray
    grand_mean: float
    ss_within: float


def run_stats(runs: list[np.ndarray]) -> RunStats:
    sizes = np.fromiter((r.size for r in runs), dtype=np.int64, count=len(runs))
    flat = np.concatenate(runs)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    means = np.add.reduceat(flat, starts) / sizes
    deviations = flat - np.repeat(means, sizes)
    squares = np.add.reduceat(deviations * deviations, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        stddevs = np.where(sizes > 1, np.sqrt(squares / np.maximum(sizes - 1, 1)), np.nan)
    ordered = flat[np.lexsort((flat, np.repeat(np.arange(sizes.size), sizes)))]
    medians = (ordered[starts + (sizes - 1) // 2] + ordered[starts + sizes // 2]) / 2.0
    return RunStats(sizes, means, stddevs, medians, float(np.mean(flat)), float(np.sum(squares)))


def variance_components(runs: list[np.ndarray], stats: RunStats | None = None) -> VarianceComponents | None:
    """ANOVA variance components of a list of runs, None if not estimable."""
    k = len(runs)
    stats = stats or run_stats(runs)
    sizes = stats.sizes.astype(float)
    n = float(sizes.sum())
    if k < 2 or n - k < 1:
        return None
    means = stats.means
    grand = stats.grand_mean
    ssb = float(np.sum(sizes * (means - grand) ** 2))
    ssw = stats.ss_within
    msb = ssb / (k - 1)
    msw = ssw / (n - k)
    n0 = (n - float(np.sum(sizes**2)) / n) / (k - 1)
    between = max(0.0, (msb - msw) / n0)
    total = between + msw
    share = between / total if total > 0 else 0.0
    from abstat.stats.distributions import fdtrc

    if msw > 0:
        f = msb / msw
        p = fdtrc(k - 1, n - k, f)
    else:
        f = float("inf") if msb > 0 else float("nan")
        p = 0.0 if msb > 0 else 1.0
    return VarianceComponents(between, msw, share, f, p)


def run_centres(runs: list[np.ndarray], center: str) -> np.ndarray:
    """One value per run: its median (``center="median"``; ties at it read as spread over their grid
    cell, :mod:`abstat.stats.run_medians`) or mean."""
    if center == "mean":
        return run_stats(runs).means
    from abstat.stats.run_medians import spread_medians

    return spread_medians(runs)
