"""The p-value of a Brunner-Munzel statistic beyond every drawn arrangement's
(:func:`abstat.stats.permutation.bm_permutation` when no draw reaches the observed ``|T|``)."""

from __future__ import annotations

import math

import numpy as np

TAIL = 10  # the drawn statistic of this rank anchors the tail beyond the draws


def beyond(reference: np.ndarray, observed: float, total: int, m: int) -> float:
    """The p-value of a statistic beyond every drawn one (descending
    ``reference``): Student's t tail with the degrees of freedom at which its
    tail holds the drawn share at the :data:`TAIL`-th largest draw (the
    permutation distribution's own tail weight, heavier than the
    Welch-Satterthwaite t's at small n), between the exact floor ``2 /
    C(total, m)`` and ``1 / (draws + 1)``."""
    from abstat.stats.distributions import brentq, stdtr

    draws = reference.size
    share = TAIL / draws
    anchor = float(reference[TAIL - 1])
    floor = math.exp(math.log(2.0) - (math.lgamma(total + 1) - math.lgamma(m + 1) - math.lgamma(total - m + 1)))
    ceiling = 1.0 / (draws + 1.0)
    if not (math.isfinite(anchor) and anchor > 0.0 and math.isfinite(observed)):
        return max(floor, ceiling if math.isfinite(observed) else floor)
    if 2.0 * stdtr(math.inf, -anchor) >= share:  # a tail lighter than the normal's: the normal's
        df = math.inf
    elif 2.0 * stdtr(1.0, -anchor) <= share:
        df = 1.0
    else:
        df = brentq(lambda d: 2.0 * stdtr(d, -anchor) - share, 1.0, 1e6, xtol=1e-6)
    return min(ceiling, max(floor, 2.0 * stdtr(df, -observed)))
