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

The same latent serves flat pilots on a grid whose far levels keep a normal from fitting all the
levels (:class:`BlockGridModel`, docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from abstat.comparison.grid_sizing import GridModel

MIN_VALUES = 40  # pooled samples needed to fit the latent
BODY_SHARE = 0.8  # the block of adjacent levels around the mode holds at least this share of the values
QUANTILES = 4000  # baseline quantiles the Hodges-Lehmann ratio of the spread levels is computed on
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


class BlockGridModel(GridModel):
    """:class:`abstat.comparison.grid_sizing.GridModel` (flat pilots) whose latent, when no normal fits all
    the levels (far values such as interrupts sit on levels of their own), is the normal of
    :func:`fit_latent` on the block around the most common level, the far values' shares kept fixed.

    The frequency polygon it replaces spreads each level's density over its cell, and the cell of the
    block's top level reaches halfway to the first far level: on a 20-tick grid (latent N(440, 6.7),
    2% interrupts) a latent change moved 0.7-1% of the values to the far level 580 (0.1% in 400,000
    population draws), left the level below the mode empty (0.7% in the population) and put 25% on the
    level above it (28%): the model needed a larger latent change for the same change of the estimand, and
    plan promised 80% power where compare reached 97% and 90.5% (10 and 20 values a side)."""

    def __init__(self, x: Any, y: Any, levels: Any, latent: Latent) -> None:
        self.latent = latent
        super().__init__(x, y, levels)

    def _polygon_cdf(self, t: Any) -> Any:
        from abstat.comparison.grid_sizing import _normal_cdf

        if self.normal is not None:
            return super()._polygon_cdf(t)
        weight = 1.0 - self.latent.below - self.latent.above  # the far shares do not move
        return weight * _normal_cdf((t - self.latent.mu) / self.latent.sd)

    def _spread(self, p: Any) -> tuple[Any, Any]:
        """The knots and values of the distribution function of values on the levels with shares ``p``,
        each level's spread as ``compare`` spreads ties (:func:`abstat.stats.brunner_munzel.spread_ties`):
        evenly over half the gap to the nearest other level on each side."""
        import numpy as np

        gaps = np.diff(self.levels)
        half = np.minimum(np.append(gaps[0], gaps), np.append(gaps, gaps[-1])) / 2.0
        knots = np.column_stack([self.levels - half, self.levels + half]).ravel()
        cum = np.concatenate([[0.0], np.cumsum(p)])
        return knots, np.column_stack([cum[:-1], cum[1:]]).ravel()

    def _row(self, factor: float) -> tuple[float, float, float, float]:
        """:meth:`GridModel._row` with the levels spread as ``compare`` spreads them, not over the cells
        between the midpoints (the same on adjacent levels; on the far levels' gaps the cell of the block's
        top level reached halfway to the first far level)."""
        import numpy as np

        from abstat.stats.distributions import brentq

        delta, p, ux, uy = super()._row(factor)
        if self.normal is not None:
            return delta, p, ux, uy
        xk, xc = self._spread(self.shares)
        yk, yc = self._spread(self.shares_at(factor))
        xs = np.interp((np.arange(QUANTILES) + 0.5) / QUANTILES, xc, xk)  # the baseline's quantiles

        def above(d: float) -> float:
            return float(np.mean(1.0 - np.interp(xs * math.exp(d), yk, yc))) - 0.5

        span = math.log(self.bounds[-1] / self.bounds[0])
        return brentq(above, -span, span, xtol=1e-12), p, ux, uy


def grid_model(x: Any, y: Any, levels: Any) -> GridModel:
    """The flat pilot's grid model: :class:`BlockGridModel` when :func:`fit_latent` fits the pooled
    values, else :class:`abstat.comparison.grid_sizing.GridModel`."""
    import numpy as np

    latent = fit_latent(np.concatenate([x, y]))
    return GridModel(x, y, levels) if latent is None else BlockGridModel(x, y, levels, latent)
