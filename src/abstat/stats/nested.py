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
from abstat.stats.medians import median


@dataclass(frozen=True)
class VarianceComponents:
    between: float  # variance of the run offsets
    within: float  # variance of samples inside a run
    share_between: float  # between / (between + within), 0..1
    f_statistic: float
    p_value: float  # one-way ANOVA F test: do the runs differ?


def variance_components(runs: list[np.ndarray]) -> VarianceComponents | None:
    """ANOVA variance components of a list of runs, None if not estimable."""
    k = len(runs)
    sizes = np.array([r.size for r in runs], dtype=float)
    n = float(sizes.sum())
    if k < 2 or n - k < 1:
        return None
    means = np.array([r.mean() for r in runs])
    grand = float(np.concatenate(runs).mean())
    ssb = float(np.sum(sizes * (means - grand) ** 2))
    ssw = float(sum(np.sum((r - r.mean()) ** 2) for r in runs))
    msb = ssb / (k - 1)
    msw = ssw / (n - k)
    n0 = (n - float(np.sum(sizes**2)) / n) / (k - 1)
    between = max(0.0, (msb - msw) / n0)
    total = between + msw
    share = between / total if total > 0 else 0.0
    from scipy import special

    if msw > 0:
        f = msb / msw
        p = float(special.fdtrc(k - 1, n - k, f))
    else:
        f = float("inf") if msb > 0 else float("nan")
        p = 0.0 if msb > 0 else 1.0
    return VarianceComponents(between, msw, share, f, p)


def run_centres(runs: list[np.ndarray], center: str) -> np.ndarray:
    """One value per run: its median (``center="median"``) or mean."""
    if center == "mean":
        return np.array([float(r.mean()) for r in runs])
    return np.array([median(r) for r in runs])
