"""The search's next commit: the one whose batch is expected to tell the most (library code, no I/O).

The expected information gain of a batch, ``H(Y) - H(Y | side)`` with ``P(side = bad)`` the posterior mass of
the commit's ancestors, treating the batch as a binary channel whose error is the Bayes error of the batch's
samples at the estimated effect size (Waeber, Frazier & Henderson 2013: on a line with a symmetric channel this
is the posterior median, as in Horstein's scheme).
"""

from __future__ import annotations

import math
from collections.abc import Collection


def _entropy(p: float) -> float:
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def most_informative(p_bad, error: float, skipped: Collection[int], n: int) -> int | None:
    """Of commits ``1..n-1`` (``p_bad[i - 1]``: P(commit i is bad)), the one with the largest gain, None when no
    commit can tell anything; ``error``: the channel's error, ``skipped``: commits never to measure."""
    import numpy as np

    seen = np.clip(p_bad * (1 - error) + (1 - p_bad) * error, 1e-300, 1 - 1e-16)
    gain = -(seen * np.log(seen) + (1 - seen) * np.log1p(-seen)) - _entropy(error)
    gain[(p_bad <= 0) | (p_bad >= 1)] = 0.0
    for i in skipped:
        if 0 < i < n:
            gain[i - 1] = 0.0
    if not gain.size:
        return None
    # Two commits that split the posterior alike (culprits 1..5 equally likely: commits 2 and 3) give the
    # same gain but for rounding, which the measured effect moves: the earlier one, whatever the noise.
    best = int(np.flatnonzero(gain >= gain.max() - 1e-12)[0])
    return best + 1 if gain[best] > 1e-9 else None
