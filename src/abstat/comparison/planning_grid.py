"""How far a real change moves the spread run medians of values on a grid (plan on nested pilots, issue 34).

``compare`` on runs compares each run's median with its tied values read as spread over their grid
cell (:mod:`abstat.stats.run_medians`).  On a grid a real change moves the latent values under the
levels, and the spread median moves only as the shares of the median's cell and of the values below it
change: by ``w ((1 - q) f(b_lo) + q f(b_hi)) / s`` per unit of latent shift (``w`` the step, ``s`` the
cell's share, ``q`` the median's place in the cell, ``f`` the latent density at the cell's bounds), less
than the change where the latent is narrow.  On a 20-cycle grid with latent sd 10 (runs of 49, 2%
interrupts) a real 0.5%, 1% and 2% change moved the median run median by 0.70x, 0.76x and 0.96x of
itself (4000 simulated runs), and plan, which sized a change of the spread run medians, advised
designs that reached 54-63% power at the real change instead of 80%
(``benchmarks/calibration_plan_nested.py``).

This model reads the pilot's samples (all runs pooled) as a normal latent rounded to the grid (the
fit of :func:`abstat.comparison.grid_sizing._normal_fit` on the block of adjacent levels around the
most common one, which must hold most values: interrupts and other far values are kept as fixed
shares below and above it) and gives, for a real relative change of the values, the change of the
spread median of that distribution: what plan sizes instead of the change itself.  No grid (too many
levels in the block, too few values, or no normal that fits the levels' shares): None.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIN_VALUES = 40  # pooled samples needed to fit the latent
BODY_SHARE = 0.8  # the block of adjacent levels around the mode holds at least this share of the values
EXTRA = 4  # empty cells added on each side of the block, for the mass a change moves out


def _block(levels: Any, counts: Any) -> tuple[int, int, float] | None:
    """(first, last) indices of the adjacent levels (one grid step apart) around the most common level,
    and the step; None if they are fewer than 2 or more than a normal is fitted to."""
    import numpy as np

    from abstat.comparison.grid_sizing import NORMAL_MAX_LEVELS

    if levels.size < 2:
        return None
    step = float(np.min(np.diff(levels)))
    mode = int(np.argmax(counts))
    first, last = mode, mode

    def adjacent(i: int, j: int) -> bool:
        return bool(abs(levels[j] - levels[i] - step) <= 1e-9 * abs(step) + 1e-12 * abs(levels[j]))

    while first > 0 and adjacent(first - 1, first):
        first -= 1
    while last < levels.size - 1 and adjacent(last, last + 1):
        last += 1
    if not 2 <= last - first + 1 <= NORMAL_MAX_LEVELS or not step > 0:
        return None
    return first, last, step


@dataclass(frozen=True)
class Latent:
    """A normal latent ``N(mu, sd)`` rounded to cells of width ``step`` (``bounds``: the block's cell
    bounds, ``centres`` its levels), with shares ``below`` and ``above`` of far values kept fixed."""

    mu: float
    sd: float
    step: float
    centres: Any
    bounds: Any
    below: float
    above: float


def fit_latent(values: Any) -> Latent | None:
    """The latent model of values on a few grid levels (module documentation), None if they are not."""
    import numpy as np

    from abstat.comparison.grid_sizing import _normal_fit

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < MIN_VALUES or not np.all(v > 0):
        return None
    levels, counts = np.unique(v, return_counts=True)
    block = _block(levels, counts)
    if block is None:
        return None
    first, last, step = block
    body = counts[first : last + 1].astype(float)
    if body.sum() < BODY_SHARE * v.size:
        return None
    centres = levels[first] + step * np.arange(-EXTRA, last - first + 1 + EXTRA)
    bounds = np.concatenate([centres - step / 2.0, [centres[-1] + step / 2.0]])
    shares = np.concatenate([np.zeros(EXTRA), body / body.sum(), np.zeros(EXTRA)])
    fit = _normal_fit(shares, bounds, float(body.sum()))
    if fit is None or bounds[0] <= 0:
        return None
    below = float(counts[:first].sum()) / v.size
    return Latent(fit[0], fit[1], step, centres, bounds, below, 1.0 - below - float(body.sum()) / v.size)


def spread_median_change(values: Any) -> Callable[[float], float] | None:
    """A function from a real change (percent, of every value) to the change (percent) of the spread
    median of the pilot's distribution (module documentation), or None when the values are not on a
    few grid levels that a normal latent fits."""
    import numpy as np

    from abstat.comparison.grid_sizing import _normal_cdf

    latent = fit_latent(values)
    if latent is None:
        return None
    mu, sd, centres, bounds, step = latent.mu, latent.sd, latent.centres, latent.bounds, latent.step
    below, weight = latent.below, 1.0 - latent.below - latent.above

    def median(factor: float) -> float:
        cdf = below + weight * _normal_cdf((bounds / factor - mu) / sd)
        k = int(np.clip(np.searchsorted(cdf, 0.5) - 1, 0, centres.size - 1))
        cell = cdf[k + 1] - cdf[k]
        return float(bounds[k] + step * (0.5 - cdf[k]) / cell) if cell > 0 else float(centres[k])

    start = median(1.0)
    return lambda pct: 100.0 * (median(1.0 + pct / 100.0) / start - 1.0)


def real_change(change: Callable[[float], float], target: float) -> float | None:
    """The real change (percent, the sign of ``target``) whose spread-median change is ``target``; None if
    no change up to 100-fold reaches it."""
    from abstat.stats.distributions import brentq

    sign = 1.0 if target >= 0 else -1.0

    def gap(pct: float) -> float:
        return sign * change(sign * pct) - abs(target)

    hi = max(abs(target), 1e-6)
    while gap(hi) < 0:
        hi *= 2.0
        if hi > 1e4 or (sign < 0 and hi >= 99.0):
            return None
    return sign * brentq(gap, 0.0, hi, xtol=1e-9 * max(hi, 1.0))


def attenuation_note(change: Callable[[float], float] | None, pct: float) -> str | None:
    """The note plan adds when it sizes a grid's spread-median change for a real one."""
    if change is None or not math.isfinite(pct) or pct == 0:
        return None
    return (
        f"values on a grid: a real {pct:.3g}% change moves the spread run medians by about "
        f"{change(pct):.3g}% (a normal latent fitted to the levels), which the runs are sized for"
    )
