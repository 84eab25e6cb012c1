"""A wandering level: generalised least squares under AR(1) errors (Prais-Winsten).

Real series wander: their level moves slowly, so the residuals about a level and a step are
serially correlated.  Widening a difference of two means by the AR(1) factor ``(1 + r) / (1 - r)``
keeps false alarms down but costs the power to see an abrupt step in a wandering series (TCPD's
run_log, GPS pace jumping 5-9 units where the wander moves 0.2 a point: 7 of its 8 labelled steps
were lost).  Under AR(1) errors the best linear unbiased estimate of a step is the generalised
least-squares one: after whitening (``e_t - rho e_(t-1)``, the first row scaled by
``sqrt(1 - rho^2)``) a step is judged by how abrupt it is against the wander's own moves.
"""

from __future__ import annotations

import math

import numpy as np

RHO_CAP = 0.95  # the lag-1 correlation used is at most this (a walk is not a stationary wander)


def whiten(z: np.ndarray, rho: float) -> np.ndarray:
    """Rows (or values) of ``z`` whitened for AR(1) errors of lag-1 correlation ``rho`` (a copy)."""
    out = z.copy()
    if rho:
        out[1:] -= rho * z[:-1]
        out[0] *= math.sqrt(1.0 - rho * rho)
    return out


ML_RHO = True  # rho by the profile likelihood on RHO_GRID (at least the residuals' lag-1 r); False: that r
RHO_GRID = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def chosen_rho(design: np.ndarray, y: np.ndarray, floor: float) -> float:
    """The lag-1 correlation of ``RHO_GRID`` (at least ``floor``, at most ``RHO_CAP``) whose AR(1) fit of
    ``design`` has the largest profile likelihood: n log(sse / n) - log(1 - rho^2) smallest.  The
    residuals' own lag-1 r is biased low on a short window, and a low rho reads the wander as steps."""
    if not ML_RHO:
        return floor
    n = y.size
    best, chosen = math.inf, floor
    for rho in (floor, *(r for r in RHO_GRID if floor < r <= RHO_CAP)):
        d, v = whiten(design, rho), whiten(y, rho)
        coef, *_ = np.linalg.lstsq(d, v, rcond=None)
        r = v - d @ coef
        score = n * math.log(max(float(r @ r), 1e-300) / n) - math.log(1.0 - rho * rho)
        if score < best:
            best, chosen = score, rho
    return chosen


SERIES_RHO = True  # every AR(1) fit's rho at least the series' own (series_rho); False: the window's alone


def series_rho(x: np.ndarray) -> float:
    """A lower bound on the series' AR(1) lag-1 correlation from its successive differences ``d``:
    under AR(1) errors their lag-1 correlation r is -(1 - rho) / 2, so rho = 1 + 2 r; a step is one
    outlier among them, so ``d`` is winsorized at 3 of its robust SDs first, and r is taken 2 / sqrt(n)
    below its estimate (a short series' r is noisy).  A window's own residuals are few, and cut at
    candidates they read the wander as noise (rho biased low: the wander's pieces then stand as steps)."""
    if not SERIES_RHO or x.size < 8:
        return 0.0
    d = np.diff(x)
    d = d - np.median(d)
    scale = float(np.median(np.abs(d))) / 0.6744897501960817  # robust SD (as segment's)
    if scale <= 0:  # quantized: most neighbours equal
        scale = float(np.mean(np.abs(d))) * math.sqrt(math.pi / 2.0)
    if not scale > 0:
        return 0.0
    d = np.clip(d, -3.0 * scale, 3.0 * scale)
    u, v = d[1:] - d[1:].mean(), d[:-1] - d[:-1].mean()
    bottom = math.sqrt(float(u @ u) * float(v @ v))
    if bottom <= 0:
        return 0.0
    r = float(u @ v) / bottom - 2.0 / math.sqrt(d.size)
    return float(min(max(1.0 + 2.0 * r, 0.0), RHO_CAP))
