"""What a comparison can resolve: power, detectable change and sample size
for the estimand ``abstat compare`` would use on data like a pilot's.

``abstat plan`` and ``abstat noise`` ask how large a change the comparison
detects with given power at given sizes, and how many values it needs for a
given change.  Both must speak of the quantity ``compare`` would estimate,
decided as ``compare`` decides it (:mod:`abstat.comparison.estimands`), so
the sizing starts from the pilot's own comparison of that estimand: its
standard error, split into each variant's share, scaled to other sizes as
``sqrt(v_x / n_x + v_y / n_y)``:

- ``hl_ratio``: Brunner-Munzel's variance components ``Var F_Y(X)`` and
  ``Var F_X(Y)`` (placements, ties spread as the comparison spreads them)
  over the squared density of the pairwise log ratios at the estimate, the
  slope that turns the test's interval into the estimate's (``2 q se /
  width`` of the pilot's interval); on values that sit on a few grid levels
  (clock ticks), the power is that of a model that keeps the grid and moves
  the shares of its levels (:mod:`abstat.comparison.grid_sizing`): the local
  slope promised 80% power at 0.79x the change compare detects that often on
  3 levels of a 20-tick grid;
- ``geomean_ratio``: the variances of the logarithms (Welch's t, power from
  the noncentral t);
- ``mean_ratio``: the squared coefficients of variation (Welch's t on the
  means, relative to the baseline mean: the delta method for a ratio);
- ``median_ratio``: the Bonett-Price standard errors of the log medians, times
  n; a median that moves in whole steps (discrete values) cannot show a
  smaller change at any n, and one between two modes has no normal interval:
  the sizing then says so instead of giving a number.

Power is ``P(|T| > q)`` for a noncentral t with the Welch-Satterthwaite
degrees of freedom; ``calibration.py`` checks the detectable change against
the simulated power of ``compare`` itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from abstat.comparison.estimands import HL_MIN_N, default_estimand
from abstat.comparison.grid_sizing import grid_levels
from abstat.comparison.planning_grid import grid_model
from abstat.comparison.model import estimand_label

MAX_N = 10_000_000
#: The largest change (as a log ratio) the search for a detectable change looks at: a million-fold.
_MAX_LOG_CHANGE = math.log(1e6)


@dataclass
class Sizing:
    """The standard error of a comparison's log ratio as a function of the sizes."""

    estimand: str
    center: str
    v: tuple[float, float]  # each variant's per-value variance of the log-ratio estimate
    reason: str = ""  # why no size resolves a change ("" if one does)
    step_pct: float | None = None  # the whole step a discrete median moves in, percent
    small: "Sizing | None" = None  # the sizing below HL_MIN_N values (geometric means), for the default
    grid: Any = None  # values on a few grid levels: the power of compare there (comparison/grid_sizing.py)
    simulated: Any = None  # the permutation test's power by simulation (stats/permutation_power.py)
    ties_spread: bool = False  # the pilot's tied values are spread over their cells, as compare will spread them

    @property
    def label(self) -> str:
        return estimand_label(self.estimand, self.center, ties_spread=self.ties_spread)

    def at(self, n1: int, n2: int) -> "Sizing":
        """The sizing that applies at these sizes (the default compares
        geometric means below :data:`HL_MIN_N` values per variant)."""
        if self.small is not None and min(n1, n2) < HL_MIN_N:
            return self.small
        return self

    def se(self, n1: int, n2: int) -> float:
        v1, v2 = self.at(n1, n2).v
        return math.sqrt(v1 / n1 + v2 / n2)

    def df(self, n1: int, n2: int) -> float:
        from abstat.stats.ratio import welch_df

        v1, v2 = self.at(n1, n2).v
        return welch_df(n1, v1 / n1, n2, v2 / n2) if v1 + v2 > 0 else math.inf

    def power(self, pct: float, n1: int, n2: int, alpha: float) -> float:
        """The chance to call a true change of ``pct`` percent significant."""
        from abstat.stats.hodges_lehmann import PERMUTE_MAX, separated_p

        if self.at(n1, n2).reason or min(n1, n2) < 2:
            return math.nan
        grid, small = self.at(n1, n2).grid, self.at(n1, n2).simulated
        if min(n1, n2) <= PERMUTE_MAX:
            if grid is not None:
                if separated_p(n1, n2) >= alpha:
                    return 0.0  # no arrangement is extreme enough for the permutation test
                return grid.permutation_power(pct, n1, n2, alpha)
            if small is not None:
                return small.power(math.log1p(pct / 100.0), n1, n2, alpha)
        return self.analytic_power(pct, n1, n2, alpha)

    def detectable(self, n1: int, n2: int, alpha: float, power: float) -> float | None:
        """The smallest change (percent, an increase) detected with ``power`` at these sizes.

        The root is searched from where the noncentral-t model (:meth:`analytic_power`) puts it, each power
        computed once, to a relative 1e-4 when the power is simulated (its steps are 1/2000 apart): the
        6-7-level grid pilot of ``benchmarks/grid_power_speed.py`` took 12 simulated powers (13 s) from a
        bracket doubled from 1 standard error."""
        from abstat.stats.distributions import brentq

        if self.at(n1, n2).reason or min(n1, n2) < 2:
            return None
        se = self.se(n1, n2)
        if not se > 0:
            return 0.0
        seen: dict[float, float] = {}

        def gap(k: float) -> float:
            if k not in seen:
                seen[k] = self.power(100.0 * math.expm1(k * se), n1, n2, alpha) - power
            return seen[k]

        bracket = _bracket(gap, self._analytic_multiple(n1, n2, alpha, power, se), se)
        if bracket is None:
            return None
        lo, hi = bracket
        if hi == 0.0:  # detected that often without any change
            return 0.0
        d = brentq(gap, lo, hi, xtol=1e-4 * hi if self._simulated(n1, n2) else 1e-9)
        return 100.0 * math.expm1(d * se)

    def _simulated(self, n1: int, n2: int) -> bool:
        from abstat.stats.hodges_lehmann import PERMUTE_MAX

        here = self.at(n1, n2)
        return min(n1, n2) <= PERMUTE_MAX and (here.grid is not None or here.simulated is not None)

    def _analytic_multiple(self, n1: int, n2: int, alpha: float, power: float, se: float) -> float | None:
        """The change (in standard errors) the noncentral-t model detects with ``power``; None if none."""
        from abstat.stats.distributions import brentq

        def gap(k: float) -> float:
            p = self.analytic_power(100.0 * math.expm1(k * se), n1, n2, alpha)
            return -1.0 if math.isnan(p) else p - power

        hi = 1.0
        while gap(hi) < 0:
            hi *= 2.0
            if hi > 1e6 or hi * se > _MAX_LOG_CHANGE:
                return None
        return brentq(gap, 0.0, hi, xtol=1e-6 * hi) if gap(0.0) < 0 else hi

    def needed(self, pct: float, alpha: float, power: float) -> int | None:
        """Values per variant (equal sizes) that detect ``pct`` percent with ``power``; None beyond 10^7.

        The search starts where the noncentral-t model (:meth:`analytic_power`, no simulation) puts the
        answer and brackets it from there, so that the simulated models (the grid's permutation test, a
        small sample's) run only near the answer: on a 6-level pilot of 12 runs ``abstat noise`` spent 35 s
        of CPU evaluating them at 4 to 32 values for answers of 42 to 158.  As long as the power grows with
        n, the answer is the one the search from the smallest size gave."""

        def enough(n: int) -> bool:
            p = self.power(pct, n, n, alpha)
            return not math.isnan(p) and p >= power

        def roughly(n: int) -> bool:
            p = self.analytic_power(pct, n, n, alpha)
            return not math.isnan(p) and p >= power

        if self.at(MAX_N, MAX_N).reason and (self.small is None or self.small.reason):
            return None
        if self.small is not None:
            for n in range(2, HL_MIN_N):
                if enough(n):
                    return n
        lo = HL_MIN_N if self.small is not None else 2
        if enough(lo):
            return lo
        guess = _first(roughly, lo, lo + 1)
        return _first(enough, lo, lo + 1 if guess is None else max(guess, lo + 1))

    def analytic_power(self, pct: float, n1: int, n2: int, alpha: float) -> float:
        """:meth:`power` with the noncentral t everywhere (the grid's t model; no simulated test)."""
        from abstat.stats.power import power_from_noncentrality

        if self.at(n1, n2).reason or min(n1, n2) < 2:
            return math.nan
        grid = self.at(n1, n2).grid
        if grid is not None:
            return float(grid.power(pct, n1, n2, alpha))
        se = self.se(n1, n2)
        delta = math.log1p(pct / 100.0)
        if not se > 0:
            return 1.0 if delta else alpha
        return power_from_noncentrality(delta / se, max(self.df(n1, n2), 1.0), alpha)


def _bracket(gap: Any, start: float | None, se: float) -> tuple[float, float] | None:
    """``(lo, hi)`` with ``gap(lo) < 0 <= gap(hi)`` for ``gap`` increasing in a change ``k`` (standard
    errors): from ``start`` (or 1) by steps of 1.25x (2x from 1), each step squared, down to 0 and up to
    a million-fold change; None if no change up to that reaches it."""
    k = 1.0 if start is None or not start > 0 else start
    if gap(k) >= 0:
        hi = k
        while hi > 1e-3 * k and gap(hi / 1.25) >= 0:
            hi /= 1.25
        lo = hi / 1.25 if hi > 1e-3 * k else 0.0
        return (lo, hi) if gap(lo) < 0 else (0.0, 0.0)
    lo, step = k, 1.25 if start is not None and start > 0 else 2.0  # near the t answer, or from afar
    while gap(lo * step) < 0:
        lo *= step
        step *= step
        if lo * step * se > _MAX_LOG_CHANGE or lo * step > 1e6 * k:
            return None
    return lo, lo * step


def _first(enough: Any, lo: int, start: int) -> int | None:
    """The smallest ``n`` above ``lo`` (where ``enough`` is false) with ``enough(n)``, for ``enough`` monotone
    in ``n``: from ``start``, steps doubling down or up to bracket it, then bisection; None beyond
    :data:`MAX_N`."""
    step = 1
    if enough(start):
        hi = start
        while hi - step > lo and enough(hi - step):
            hi, step = hi - step, step * 2
        lo = max(lo, hi - step)
    else:
        lo = start
        while not enough(min(lo + step, MAX_N)):
            if lo + step >= MAX_N:
                return None
            lo, step = lo + step, step * 2
        hi = min(lo + step, MAX_N)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def sizing(x: Any, y: Any | None = None, center: str = "auto", confidence: float = 0.95) -> Sizing:
    """The sizing of the comparison ``compare`` would make of data like
    ``x`` (baseline) and ``y`` (candidate; None: like the baseline), numpy arrays of values."""
    import numpy as np

    y = x if y is None else y
    positive = bool(np.all(x > 0) and np.all(y > 0))
    if center == "mean" or not positive:
        m1, m2 = float(x.mean()), float(y.mean())
        if m1 == 0.0 or m2 == 0.0:
            return Sizing("mean_ratio", center, (math.nan, math.nan), "a mean is 0: no relative change is defined")
        v = tuple(float(a.var(ddof=1)) / (m * m) if a.size > 1 else math.nan for a, m in ((x, m1), (y, m2)))
        return Sizing("mean_ratio", center, v)  # type: ignore[arg-type]
    lx, ly = np.log(x), np.log(y)
    if center == "median":
        return _median_sizing(lx, ly)
    geo = Sizing("geomean_ratio", center, (_var(lx), _var(ly)))
    if geo.v == (0.0, 0.0):
        geo.reason = "neither variant varies at this resolution: no noise to size a comparison by"
    hl = _hl_sizing(lx, ly, confidence, center)
    levels = None if hl.reason else grid_levels(x, y)
    if levels is not None:
        hl.grid = grid_model(x, y, levels)
    if default_estimand(x.size, y.size) != "hl_ratio" and min(x.size, y.size) < 3:
        hl.reason = hl.reason or "too few pilot values to estimate the Hodges-Lehmann ratio's spread"
    hl.small = geo
    return hl


def _var(a: Any) -> float:
    return float(a.var(ddof=1)) if a.size > 1 else math.nan


def _hl_sizing(lx: Any, ly: Any, confidence: float, center: str) -> Sizing:
    import numpy as np

    from abstat.stats.distributions import t_quantile
    from abstat.stats.hodges_lehmann import bm_statistic, hodges_lehmann, spread_pair
    from abstat.stats.permutation_power import SmallPower

    if np.ptp(lx) == 0.0 and np.ptp(ly) == 0.0:
        return Sizing(
            "hl_ratio",
            center,
            (0.0, 0.0),
            "neither variant varies at this resolution: no noise to size a comparison by",
        )
    result = hodges_lehmann(lx, ly, confidence, centres=False)
    sx, sy = spread_pair(lx, ly)  # the cells compare spreads ties over
    here = bm_statistic(sx, sy, result.estimate)
    width = result.high - result.low
    if not (math.isfinite(width) and width > 0 and here.se > 0):
        return Sizing(
            "hl_ratio",
            center,
            (math.nan, math.nan),
            "the pilot is too small for an interval of the Hodges-Lehmann ratio",
        )
    slope = 2.0 * t_quantile(here.df, 0.5 + confidence / 2.0) * here.se / width  # density of the log ratios
    size = Sizing("hl_ratio", center, (here.unit_x / slope**2, here.unit_y / slope**2))
    small = SmallPower(np.sort(lx), np.sort(ly) - result.estimate)  # recentred at the baseline; sorted: any order
    size.simulated = small if small.usable else None
    size.ties_spread = sx.spread or sy.spread
    return size


def _median_sizing(lx: Any, ly: Any) -> Sizing:
    from abstat.stats.medians import median_se, median_step, unreliable
    import numpy as np

    sx, sy = np.sort(lx), np.sort(ly)
    for s in (sx, sy):
        why = unreliable(s)
        if why == "discrete":
            step = min(median_step(sx), median_step(sy))
            pct = 100.0 * math.expm1(step) if math.isfinite(step) else None
            return Sizing(
                "median_ratio",
                "median",
                (math.nan, math.nan),
                "the medians move in whole steps of the values"
                + (f" ({pct:.2g}%)" if pct is not None else "")
                + ": a smaller change cannot show in them at any n (the default comparison "
                "resolves it)",
                step_pct=pct,
            )
        if why:
            return Sizing(
                "median_ratio",
                "median",
                (math.nan, math.nan),
                "a median lies between two modes, where no normal interval describes it at any n "
                "(the default comparison does not depend on the density at the median)",
            )
    return Sizing("median_ratio", "median", (median_se(sx) ** 2 * sx.size, median_se(sy) ** 2 * sy.size))
