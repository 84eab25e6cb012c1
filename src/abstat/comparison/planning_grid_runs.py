"""How a real change reshapes the spread run medians on a grid, not only moves them (plan on nested pilots).

:mod:`abstat.comparison.planning_grid` turns a real change into the change of the spread run medians'
centre; the runs were then sized with the candidate's run medians spread as the baseline's.  On a grid
their spread depends on where the latent centre sits in its cell: a spread median varies most when the
centre is at a cell boundary, where the median's cell holds the fewest values.  On the 20-cycle grid of
``benchmarks/calibration_plan_nested.py`` (latent sd 10, offsets sd 4, runs of 49) a real +2.2% moves
the centre from 440 to 450, and the run medians' interquartile range grows from 4.3 to 8.3 (sd 3.8 to
5.1; 4000 simulated runs): 5 runs each sized for 80% reached 73.5% ± 1.8 (600 experiments).

The model here simulates runs of the fitted latent (:func:`abstat.comparison.planning_grid.fit_latent`):
each run's offset ``N(0, sb)`` plus values ``N(mu, sw)``, the sum scaled by the real change and rounded
to the grid, far values kept at their shares; ``sb^2 + sw^2`` is the fitted latent variance and ``sb``
is chosen so that the simulated run medians at the pilot's run length vary as the pilot's do.  The
candidate's pilot run medians are then moved by the model's shift function at their ranks (Doksum
1974): ``c_i + Q_f(u_i) - Q_1(u_i)``, ``Q_f`` the quantiles of the simulated run medians at a real
change ``f``, ``u_i`` the pilot run's rank.  The uniforms come from the comparison's counter-based
generator, the same for every change (the run medians grow with the change, run by run).
"""

from __future__ import annotations

import math
from typing import Any

from abstat.comparison.planning_grid import Latent

RUNS = 2000  # simulated runs per distribution of run medians
MAX_VALUES = 200_000  # simulated values per distribution: fewer runs when runs are long
MIN_RUNS = 200
LONGEST = MAX_VALUES // MIN_RUNS  # longer runs are simulated at this length (their medians' shape changes alike)
QUANTILES = 600  # of each distribution of simulated run medians, for their Hodges-Lehmann ratio
FAR = 100  # grid steps between the block and the far values (interrupts) of the model


class GridRuns:
    """The shift function of the run medians for a real change, at any run length (module
    documentation)."""

    def __init__(self, latent: Latent, length: float, target_var: float) -> None:
        self.latent = latent
        self._cache: dict[tuple[int, float, float], Any] = {}
        self.between = self._between(max(2, round(length)), target_var)

    def medians(self, per_run: int, factor: float, between: float | None = None) -> Any:
        """The sorted spread medians of the simulated runs of ``per_run`` values at a real change ``factor``."""
        import numpy as np

        from abstat.stats.permutation import uniforms
        from abstat.stats.permutation_power import _normals
        from abstat.stats.run_medians import spread_medians

        sb = self.between if between is None else between
        per_run = min(per_run, LONGEST)
        key = (per_run, factor, sb)
        if key in self._cache:
            return self._cache[key]
        lat = self.latent
        runs = max(MIN_RUNS, min(RUNS, MAX_VALUES // per_run))
        sw = math.sqrt(max(lat.sd**2 - sb**2, 0.0))
        offsets = sb * _normals(1, runs, 21)[:, None]
        latent = (lat.mu + offsets + sw * _normals(1, runs * per_run, 23).reshape(runs, per_run)) * factor
        low = float(lat.centres[0])
        values = low + lat.step * np.round((latent - low) / lat.step)
        u = uniforms(1, runs * per_run, 25).reshape(runs, per_run)
        values = np.where(u < lat.below, low - FAR * lat.step, values)
        values = np.where(u >= 1.0 - lat.above, float(lat.centres[-1]) + FAR * lat.step, values)
        found = np.sort(spread_medians(list(values)))
        if len(self._cache) > 64:
            self._cache.clear()
        self._cache[key] = found
        return found

    def _between(self, length: int, target_var: float) -> float:
        """The offsets' sd at which the simulated run medians of ``length`` values vary by ``target_var``."""
        import numpy as np

        from abstat.stats.distributions import brentq

        top = 0.95 * self.latent.sd

        def gap(sb: float) -> float:
            return float(np.var(self.medians(length, 1.0, sb), ddof=1)) - target_var

        if not gap(0.0) < 0:
            return 0.0
        if gap(top) <= 0:
            return top
        return brentq(gap, 0.0, top, xtol=1e-3 * top)

    def reshaped(self, centres: Any, per_run: int, pct: float) -> Any:
        """``centres`` (a variant's run medians at ``per_run`` values a run) moved by the model's shift
        function for a real change of ``pct`` percent."""
        import numpy as np

        if not pct:
            return centres
        per_run = max(2, round(per_run))
        u = (np.argsort(np.argsort(centres, kind="stable"), kind="stable") + 0.5) / centres.size
        moved = np.quantile(self.medians(per_run, 1.0 + pct / 100.0), u)
        return centres + moved - np.quantile(self.medians(per_run, 1.0), u)

    def change_pct(self, per_run: int, pct: float) -> float:
        """The change (percent) of compare's estimand, the Hodges-Lehmann ratio of the run medians, that a
        real change of ``pct`` percent makes: the median of the pairwise log ratios of the simulated run
        medians (through :data:`QUANTILES` quantiles of each)."""
        import numpy as np

        if not pct:
            return 0.0
        per_run = max(2, round(per_run))
        probs = (np.arange(QUANTILES) + 0.5) / QUANTILES
        after = np.quantile(np.log(self.medians(per_run, 1.0 + pct / 100.0)), probs)
        before = np.quantile(np.log(self.medians(per_run, 1.0)), probs)
        return 100.0 * math.expm1(float(np.median(after[:, None] - before[None, :])))


def grid_runs(samples: Any, length: float, target_var: float) -> GridRuns | None:
    """The model of :class:`GridRuns` for the pooled pilot ``samples``; None when they are not on a grid
    a normal latent fits, or the run medians do not vary."""
    from abstat.comparison.planning_grid import fit_latent

    latent = fit_latent(samples)
    if latent is None or not target_var > 0:
        return None
    return GridRuns(latent, length, target_var)
