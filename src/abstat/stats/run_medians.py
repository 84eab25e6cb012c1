"""The median of each run, its ties read as spread over their grid cell.

A run of a quantized metric (TSC cycles on a 20-cycle grid, clock ticks,
counts) nearly always has its median on a level that many of its values
share, so plain run medians move in whole grid steps: 20 runs of a
benchmark whose true centre moved by a third of a step mostly have the same
medians before and after, and a comparison of them sees no change (or cannot
judge at all when every run median is one value).  As the default estimator
does (:mod:`abstat.stats.hodges_lehmann`), the ``c`` values of the median's
level ``v`` are read as spread evenly over the level's cell ``[v - h, v + h]``
(``h`` half the grid step: the smallest gap between distinct values of all
the runs), and the run's median is the median of the values so read:

    v - h + 2 h (n/2 - b) / c        (b values of the run below v)

the classical median of grouped data.  It equals the plain median whenever
the median's level holds a single value (untied, continuous data), and it
moves continuously with the share of a run's values on each side of the
level, which a change smaller than a step shifts.
"""

from __future__ import annotations

import numpy as np


def spread_medians(runs: list[np.ndarray]) -> np.ndarray:
    """Each run's median with the ties at it spread over their cell (module documentation); runs
    given as arrays, none empty."""
    sizes = np.fromiter((r.size for r in runs), dtype=np.int64, count=len(runs))
    flat = np.concatenate(runs)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    run_of = np.repeat(np.arange(sizes.size), sizes)
    ordered = flat[np.lexsort((flat, run_of))]
    low = ordered[starts + (sizes - 1) // 2]
    high = ordered[starts + sizes // 2]
    medians = (low + high) / 2.0
    tied = low == high  # the median is a value of the run (for an even n: two equal middle values)
    if not tied.any():
        return medians
    level = low[run_of]
    below = np.add.reduceat((ordered < level).astype(np.int64), starts)
    count = np.add.reduceat((ordered == level).astype(np.int64), starts)
    half = _half_step(np.sort(flat))
    spread = low - half + 2.0 * half * (sizes / 2.0 - below) / np.maximum(count, 1)
    return np.where(tied & (count > 1), spread, medians)


def _half_step(sorted_values: np.ndarray) -> float:
    """Half the grid step: half the smallest gap between distinct values of ``sorted_values``; 0 when
    every value is one level or the gap is not finite (continuous data: a negligible step)."""
    gaps = np.diff(sorted_values)
    gaps = gaps[gaps > 0]
    step = float(gaps.min()) if gaps.size else 0.0
    return step / 2.0 if np.isfinite(step) else 0.0
