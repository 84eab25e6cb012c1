"""The power of the default comparison on values that sit on a few grid levels (clock ticks).

On such data a real change does not move the values: it moves the *latent*
times under them, and with them the share of values on each level, while
the levels stay where they are.  ``abstat compare`` reads each level's tied
values as spread over its cell (:mod:`abstat.stats.hodges_lehmann`), and its
Brunner-Munzel test sees the shares of the levels.  A pilot's local slope
(the density of its pairwise log ratios at the estimate, what
:func:`abstat.comparison.sizing.sizing` uses for smooth data) treats a
change as a shift of those spread cells; on 3 levels of a 20-tick grid that
promised 80% power at 0.79x the change the comparison detects that often:
as the latent moves by half a cell, the middle level empties into the next
one, and the Hodges-Lehmann ratio of the spread cells moves further than
the test's ``p``.

This model follows the grid instead.  The levels' shares are the pilot's
(both variants pooled: the candidate like the baseline); a latent change by
the factor ``m`` moves across each cell boundary ``b`` the mass the latent
density holds between ``b / m`` and ``b``, the density read as the
frequency polygon of the levels (at a boundary, the mean of its two cells'
densities).  For each ``m`` it computes the true change of the
Hodges-Lehmann ratio of the spread cells (what ``compare`` estimates), the
test's ``p = P(X < Y) + P(X = Y) / 2`` and its variance components
``Var F_Y(X)``, ``Var F_X(Y)`` (mid-ranks), so the power at a change is the
noncentral t of ``(p - 1/2) / se`` with Welch-Satterthwaite degrees of
freedom, as for the smooth case.  When a normal latent fits the levels' shares
(at most 6 adjacent levels), its distribution function replaces the polygon
(:func:`_normal_fit`).  At most 50 values on a side ``compare``'s reference is
the permutation distribution, discrete on a grid:
:mod:`abstat.comparison.grid_permutation` simulates that test.
"""

from __future__ import annotations

import math
from typing import Any

MAX_LEVELS = 16  # more distinct values than this: not a grid (the smooth sizing applies)
MIN_PER_LEVEL = 3  # values per level on average, at least
EXTRA = 4  # empty levels added on each side, for the mass a change moves out
POINTS = 64  # points per cell for the baseline's spread values
STEPS = 48  # latent changes tabled on each side


def grid_levels(x: Any, y: Any) -> Any | None:
    """The pooled distinct values when ``x`` and ``y`` (positive) sit on a few levels, else None."""
    import numpy as np

    pooled = np.concatenate([x, y])
    levels = _distinct(np.sort(pooled)) if pooled.size else pooled
    if not 2 <= levels.size <= MAX_LEVELS or pooled.size < MIN_PER_LEVEL * levels.size:
        return None
    return levels


def _distinct(ordered: Any) -> Any:
    """``np.unique`` of sorted positive values (``np.unique`` itself asks ``numpy.ma`` whether they are
    masked: importing it was 12 ms of ``abstat plan a b``); of others (zero, NaN) ``np.unique``'s."""
    import numpy as np

    if not ordered[0] > 0 or np.isnan(ordered[-1]):
        return np.unique(ordered)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


NORMAL_MAX_LEVELS = 6  # a normal latent is fitted to at most this many populated, adjacent levels


def _normal_cdf(z: Any) -> Any:
    import numpy as np

    erf = np.frompyfunc(math.erf, 1, 1)
    return 0.5 * (1.0 + np.asarray(erf(np.asarray(z, dtype=float) / math.sqrt(2.0)), dtype=float))


def _normal_fit(shares: Any, bounds: Any, total: float) -> tuple[float, float] | None:
    """(mean, sd) of the normal latent whose rounding to the cells gives ``shares`` most likely
    (maximum likelihood on a refined grid), when the populated levels are at most
    :data:`NORMAL_MAX_LEVELS`, adjacent, and every cell's fitted share lies within 3 binomial standard
    errors (plus one value) of its observed share; else None (the frequency polygon applies).

    Latent times rounded to clock ticks are often normal and narrow (sd 7 on a 20-tick grid: 3
    levels); the polygon put 0.0019 of density per tick 1.5 cells from the centre where such a latent has
    6e-6, so a latent change moved 1.2-1.7% of the values to a level that holds 0.03%, and the model
    promised 73% power where compare has 66.5% ±1.5 (40 values a side, 0.9%; with the fitted normal: 68%)."""
    import numpy as np

    used = np.flatnonzero(shares > 0)
    if not 2 <= used.size <= NORMAL_MAX_LEVELS or np.any(np.diff(used) != 1):
        return None
    lo, hi = float(bounds[used[0]]), float(bounds[used[-1] + 1])
    mu, sd = np.linspace(lo, hi, 41), np.geomspace((hi - lo) / 200.0, hi - lo, 41)
    best = (math.inf, 0.0, 0.0)
    for _ in range(3):
        grid_mu, grid_sd = np.meshgrid(mu, sd, indexing="ij")
        cdf = _normal_cdf((bounds[None, None, :] - grid_mu[..., None]) / grid_sd[..., None])
        fitted = np.clip(np.diff(cdf, axis=-1), 1e-300, None)
        loglik = (shares[None, None, :] * np.log(fitted)).sum(axis=-1)
        i, j = np.unravel_index(int(np.argmax(loglik)), loglik.shape)
        best = (-float(loglik[i, j]), float(mu[i]), float(sd[j]))
        mu = np.linspace(mu[max(i - 2, 0)], mu[min(i + 2, mu.size - 1)], 21)
        sd = np.geomspace(sd[max(j - 2, 0)], sd[min(j + 2, sd.size - 1)], 21)
    _, m, s = best
    fitted = np.diff(_normal_cdf((bounds - m) / s))
    tolerance = 3.0 * np.sqrt(np.maximum(fitted * (1.0 - fitted), 1e-12) / total) + 1.0 / total
    return (m, s) if bool(np.all(np.abs(fitted - shares) <= tolerance)) else None


class GridModel:
    """Power of the Brunner-Munzel test behind the Hodges-Lehmann ratio on values on ``levels``."""

    def __init__(self, x: Any, y: Any, levels: Any) -> None:
        import numpy as np

        pooled = np.concatenate([x, y])
        left, right = levels[1] - levels[0], levels[-1] - levels[-2]
        self.levels = np.concatenate(
            [levels[0] - left * np.arange(EXTRA, 0, -1), levels, levels[-1] + right * np.arange(1, EXTRA + 1)]
        )
        keep = self.levels > 0
        self.levels = self.levels[keep]
        mids = (self.levels[1:] + self.levels[:-1]) / 2.0
        lo = max(self.levels[0] - (self.levels[1] - self.levels[0]) / 2.0, self.levels[0] / 2.0)
        hi = self.levels[-1] + (self.levels[-1] - self.levels[-2]) / 2.0
        self.bounds = np.concatenate([[lo], mids, [hi]])
        counts = np.array([np.count_nonzero(pooled == v) for v in self.levels], dtype=float)
        self.shares = counts / counts.sum()
        widths = np.diff(self.bounds)
        density = self.shares / widths
        # the frequency polygon: the density at each cell's centre, straight lines between, 0 at the ends
        self.knots = np.concatenate([[self.bounds[0]], self.levels, [self.bounds[-1]]])
        self.heights = np.concatenate([[0.0], density, [0.0]])
        self.normal = _normal_fit(self.shares, self.bounds, counts.sum())
        self.cum0 = self._polygon_cdf(self.bounds)
        self.table = {+1: self._table(+1), -1: self._table(-1)}
        self._permutation: Any = None

    def _polygon_cdf(self, t: Any) -> Any:
        import numpy as np

        if self.normal is not None:  # a normal latent fits the levels' shares: its own distribution function
            return _normal_cdf((np.asarray(t, dtype=float) - self.normal[0]) / self.normal[1])
        k, h = self.knots, self.heights
        areas = np.concatenate([[0.0], np.cumsum((h[1:] + h[:-1]) / 2.0 * np.diff(k))])
        t = np.clip(t, k[0], k[-1])
        i = np.clip(np.searchsorted(k, t, side="right") - 1, 0, k.size - 2)
        dx = t - k[i]
        slope = (h[i + 1] - h[i]) / (k[i + 1] - k[i])
        return areas[i] + h[i] * dx + slope * dx * dx / 2.0

    def shares_at(self, factor: float) -> Any:
        """The levels' shares after a latent change by ``factor``."""
        import numpy as np

        moved = self._polygon_cdf(self.bounds / factor) - self.cum0  # the change of the mass below each boundary
        moved[0] = moved[-1] = 0.0  # nothing leaves the outermost (empty) cells
        q = self.shares + np.diff(moved)
        q = np.clip(q, 0.0, None)
        return q / q.sum()

    def _row(self, factor: float) -> tuple[float, float, float, float]:
        """(true log change of the Hodges-Lehmann ratio, p, Var F_Y(X), Var F_X(Y)) at ``factor``."""
        import numpy as np

        from abstat.stats.distributions import brentq

        p_x, p_y = self.shares, self.shares_at(factor)
        below_y = np.cumsum(p_y) - p_y / 2.0  # mid-rank F_Y at each level
        below_x = np.cumsum(p_x) - p_x / 2.0
        p = float(np.sum(p_y * below_x))  # P(X < Y) + P(X = Y) / 2
        ux = float(np.sum(p_x * below_y**2) - np.sum(p_x * below_y) ** 2)
        uy = float(np.sum(p_y * below_x**2) - np.sum(p_y * below_x) ** 2)
        # the median of log Y' - log X', X' and Y' uniform over the cells with these shares
        where = (np.arange(POINTS) + 0.5) / POINTS
        cells = self.bounds[:-1, None] + np.diff(self.bounds)[:, None] * where[None, :]
        xs, ws = cells.ravel(), np.repeat(p_x / POINTS, POINTS)
        cdf_y = np.concatenate([[0.0], np.cumsum(p_y)])

        def above(d: float) -> float:
            return float(np.sum(ws * (1.0 - np.interp(xs * math.exp(d), self.bounds, cdf_y)))) - 0.5

        span = math.log(self.bounds[-1] / self.bounds[0])
        delta = brentq(above, -span, span, xtol=1e-12)
        return delta, p, max(ux, 0.0), max(uy, 0.0)

    def _table(self, sign: int) -> list[tuple[float, float, float, float]]:
        reach = math.log(self.levels[-1] / self.levels[0]) / 2.0  # far enough to empty the populated levels
        return [self._row(math.exp(sign * reach * i / STEPS)) for i in range(STEPS + 1)]

    def power(self, pct: float, n1: int, n2: int, alpha: float) -> float:
        """The chance that ``compare`` calls a true change of ``pct`` percent significant."""
        import numpy as np

        from abstat.stats.power import power_from_noncentrality
        from abstat.stats.ratio import welch_df

        d = math.log1p(pct / 100.0)
        rows = self.table[+1 if d >= 0 else -1]
        deltas = np.array([abs(r[0]) for r in rows])
        pick = lambda column: float(np.interp(abs(d), deltas, [r[column] for r in rows]))
        p, ux, uy = pick(1), pick(2), pick(3)
        a1, a2 = ux / n1, uy / n2
        if not a1 + a2 > 0:
            return 1.0 if p != 0.5 else alpha
        se = math.sqrt(a1 + a2)
        return power_from_noncentrality((p - 0.5) / se, max(welch_df(n1, a1, n2, a2), 1.0), alpha)

    def permutation_power(self, pct: float, n1: int, n2: int, alpha: float) -> float:
        """The power of ``compare``'s permutation test at a true change of ``pct`` percent (at most
        :data:`abstat.stats.hodges_lehmann.PERMUTE_MAX` values on a side), by simulation
        (:mod:`abstat.comparison.grid_permutation`)."""
        from abstat.comparison.grid_permutation import GridPermutationPower, factor_for

        if self._permutation is None:
            self._permutation = GridPermutationPower(self)
        return float(self._permutation.power(factor_for(self, pct), n1, n2, alpha))
