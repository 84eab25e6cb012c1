"""The shape of one commit's runs, for the search's likelihood (library code, no I/O).

The search (:mod:`abstat.history.bisect.search`) models a run of a good commit as ``g + e`` and of a bad
one as ``b + e``, the same noise ``e`` either side (a shift).  A Student-t for ``e`` fits one hump; a
benchmark with two paths (half of the runs 10% slower) has two narrow humps, and a t wide enough to
cover both sees a 2% change as a fifth of its spread where within each hump it is a whole spread.  So
``e``'s density is estimated from the pooled residuals of the ends (each end's runs minus its own
location): a Gaussian kernel density, its bandwidth chosen by leave-one-out likelihood among a few
fractions of the robust scale, mixed with a small weight of the Student-t (so a run far from every
residual seen, an outlier, is not impossible under either side).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

T_DF = 4.0
FLOOR = 0.05  # weight of the Student-t in the mixture
BANDWIDTHS = (0.08, 0.15, 0.25, 0.4, 0.6)  # candidate bandwidths, fractions of the robust scale
MAX_POINTS = 400  # residuals kept (the most recent), bounding the cost


@dataclass
class Density:
    points: Any  # numpy array of residuals
    bandwidth: float
    scale: float  # the robust scale of the Student-t floor

    def log_pdf(self, z):
        """log density of the noise at ``z`` (numpy array)."""
        import numpy as np
        from scipy.special import logsumexp

        z = np.asarray(z, dtype=float)
        u = (z[:, None] - self.points[None, :]) / self.bandwidth
        kde = logsumexp(-0.5 * u * u, axis=1) - math.log(self.points.size * self.bandwidth * math.sqrt(2 * math.pi))
        t = _t_log_pdf(z / self.scale) - math.log(self.scale)
        return np.logaddexp(math.log(1 - FLOOR) + kde, math.log(FLOOR) + t)


def _t_log_pdf(z):
    import numpy as np

    const = math.lgamma((T_DF + 1) / 2) - math.lgamma(T_DF / 2) - 0.5 * math.log(T_DF * math.pi)
    return const - (T_DF + 1) / 2 * np.log1p(z * z / T_DF)


def fit(residuals, scale: float) -> Density | None:
    """The noise's density from residuals (None with fewer than 10 or no spread: the caller keeps its t)."""
    import numpy as np
    from scipy.special import logsumexp

    points = np.asarray(residuals, dtype=float)[-MAX_POINTS:]
    if points.size < 10 or not scale > 0:
        return None
    diffs = points[:, None] - points[None, :]
    np.fill_diagonal(diffs, np.inf)
    best, chosen = -math.inf, BANDWIDTHS[-1] * scale
    for fraction in BANDWIDTHS:
        h = fraction * scale
        u = diffs / h
        kde = logsumexp(-0.5 * u * u, axis=1) - math.log((points.size - 1) * h * math.sqrt(2 * math.pi))
        t = _t_log_pdf(points / scale) - math.log(scale)
        score = float(np.sum(np.logaddexp(math.log(1 - FLOOR) + kde, math.log(FLOOR) + t)))
        if score > best:
            best, chosen = score, h
    return Density(points, chosen, scale)


def effect(density: Density, shift: float) -> float:
    """The shift in the units of a normal's SD that separate the sides as well: ``sqrt(2 KL)`` between
    the noise's density and the same shifted (for a normal of SD s, ``shift / s``)."""
    import numpy as np

    low, high = float(density.points.min()) - 4 * density.bandwidth, float(density.points.max()) + 4 * density.bandwidth
    grid = np.linspace(low - abs(shift), high + abs(shift), 1024)
    p = density.log_pdf(grid)
    q = density.log_pdf(grid - shift)
    weights = np.exp(p)
    kl = float(np.sum(weights * (p - q)) / np.sum(weights))
    return math.sqrt(max(0.0, 2 * kl))


def log_llr(x, good, bad):  # -> numpy array, or None
    """Log-likelihood ratios (bad over good) of the samples ``x`` on logarithms, when they and the ends' are all
    positive (a dear search's boots: cycles spread in proportion to their level, so on the raw scale the higher
    end's spread, pooled, made a boot at the pti=on level only 2.5 nats from the pti=off one): a Student-t
    (``T_DF``) about each end's log median with their pooled robust spread (at least 1% of a level)."""
    import numpy as np

    x, g, b = (np.asarray(v, dtype=float) for v in (x, good, bad))
    if min(x.min(), g.min(), b.min()) <= 0:
        return None
    x, g, b = np.log(x), np.log(g), np.log(b)
    residuals = np.concatenate([g - np.median(g), b - np.median(b)])
    scale = max(1.4826 * float(np.median(np.abs(residuals))), float(np.std(residuals)), 0.01)
    return _t_log_pdf((x - np.median(b)) / scale) - _t_log_pdf((x - np.median(g)) / scale)
