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
freedom, as for the smooth case.
"""
from __future__ import annotations

import math
from typing import Any

MAX_LEVELS = 16      # more distinct values than this: not a grid (the smooth sizing applies)
MIN_PER_LEVEL = 3    # values per level on average, at least
EXTRA = 4            # empty levels added on each side, for the mass a change moves out
POINTS = 64          # points per cell for the baseline's spread values
STEPS = 48           # latent changes tabled on each side


def grid_levels(x: Any, y: Any) -> Any | None:
    """The pooled distinct values when ``x`` and ``y`` (positive) sit on a few levels, else None."""
    import numpy as np

    pooled = np.concatenate([x, y])
    levels = np.unique(pooled)
    if not 2 <= levels.size <= MAX_LEVELS or pooled.size < MIN_PER_LEVEL * levels.size:
        return None
    return levels


class GridModel:
    """Power of the Brunner-Munzel test behind the Hodges-Lehmann ratio on values on ``levels``."""

    def __init__(self, x: Any, y: Any, levels: Any) -> None:
        import numpy as np

        pooled = np.concatenate([x, y])
        left, right = levels[1] - levels[0], levels[-1] - levels[-2]
        self.levels = np.concatenate([levels[0] - left * np.arange(EXTRA, 0, -1), levels,
                                      levels[-1] + right * np.arange(1, EXTRA + 1)])
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
        self.cum0 = self._polygon_cdf(self.bounds)
        self.table = {+1: self._table(+1), -1: self._table(-1)}

    def _polygon_cdf(self, t: Any) -> Any:
        import numpy as np

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
        below_y = np.cumsum(p_y) - p_y / 2.0    # mid-rank F_Y at each level
        below_x = np.cumsum(p_x) - p_x / 2.0
        p = float(np.sum(p_y * below_x))       # P(X < Y) + P(X = Y) / 2
        ux = float(np.sum(p_x * below_y ** 2) - np.sum(p_x * below_y) ** 2)
        uy = float(np.sum(p_y * below_x ** 2) - np.sum(p_y * below_x) ** 2)
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
        pick = (lambda column: float(np.interp(abs(d), deltas, [r[column] for r in rows])))
        p, ux, uy = pick(1), pick(2), pick(3)
        a1, a2 = ux / n1, uy / n2
        if not a1 + a2 > 0:
            return 1.0 if p != 0.5 else alpha
        se = math.sqrt(a1 + a2)
        return power_from_noncentrality((p - 0.5) / se, max(welch_df(n1, a1, n2, a2), 1.0), alpha)
