"""Serial correlation inside a sample: how much it widens an interval.

Samples measured one after another on a busy machine resemble their
neighbours (a burst of load, a frequency change spans several).  Positive
lag-1 autocorrelation ``phi`` makes the variance of a sample's centre about
``(1 + phi) / (1 - phi)`` times what independent samples give (the AR(1)
long-run variance), so every test that assumes independence calls
differences too often: at ``phi = 0.3`` the Brunner-Munzel test rejected a
true null in 14-16% of A/A draws of 50-200 samples (``benchmarks/calibration.py``).

:func:`serial_factors` estimates ``phi`` from the ranks in sample order
(robust to outliers and ties), for both variants together (they share the
machine and the session), and applies the variance factor when the estimate
is clearly positive (above 1.28 of its standard error ``1 / sqrt(n1 +
n2)``, a one-sided 10% pre-test); otherwise none.  The estimate is
corrected for its downward bias at small n (``(1 + 3 phi) / n``, Kendall
1954; under independence its expected value is ``-1/n``) and, since the
pre-test misses some dependent series, raised by half its standard error.
With the factor, AR(1) series with ``phi = 0.3`` gave 6.6% false positives
at n = 50 and 4.8% at n = 200 (from 16.7% and 15.9%; 1000 draws each), at a
cost of 1.7-2 points of power on independent data.  Samples of fewer than
:data:`MIN_N` values are too few to estimate it.  Down to 10 values the
estimate is rough but still worth having (issue 34: AR(1) ``phi = 0.6``, 15
values per side, 300 A/A draws: 9.3% false positives with it, 29% without;
re-run on the current statistics, 600 draws: 11.3% ±1.3, over the 6% target:
the pre-test fires on about 87% of such pairs at n = 15; independent data
lose about 4 points of power); the note says so.
"""

from __future__ import annotations

import math

import numpy as np

MIN_N = 10
ROUGH_N = 20  # below this many values the estimate of phi is rough (said in the note)
PRETEST_Z = 1.28
MAX_PHI = 0.9


def is_sorted(values: np.ndarray) -> bool:
    """The values are in ascending or descending order (a sorted file), not
    all equal: their order is the sort's, it carries no time."""
    if values.size < 3:
        return False
    head = np.diff(values[:65])  # (time-ordered data: a rise and a fall among the first steps settle it)
    if (head > 0).any() and (head < 0).any():
        return False
    steps = np.diff(values)
    return bool(np.any(steps != 0) and (np.all(steps >= 0) or np.all(steps <= 0)))


def lag1_rank_autocorrelation(values: np.ndarray) -> float:
    """Lag-1 autocorrelation of the ranks, in sample order (0 when constant)."""
    from abstat.stats.diagnostics import average_ranks

    ranks = average_ranks(values)
    centred = ranks - ranks.mean()
    spread = float(np.dot(centred, centred))
    if spread == 0.0:
        return 0.0
    return float(np.dot(centred[1:], centred[:-1])) / spread


def serial_factors(
    x: np.ndarray,
    y: np.ndarray,
    lag1: tuple[float | None, float | None] = (None, None),
) -> tuple[float, float, float]:
    """``(factor_x, factor_y, phi)``: the variance factors for two samples'
    centres and the lag-1 autocorrelation they come from (1, 1, 0 when none
    is evident).  Both variants of a benchmark run on one machine in one
    session, so the evidence of both is averaged (a variant with fewer than
    :data:`MIN_N` values gives none and keeps factor 1); ``lag1``: each
    sample's lag-1 rank autocorrelation, when already known.  A sorted
    sample (:func:`is_sorted`) gives no evidence: its order is not time."""
    timed = [v.size >= MIN_N and not is_sorted(v) for v in (x, y)]
    used = [
        (v.size, (lag1_rank_autocorrelation(v) if r is None else r) + 1.0 / v.size)
        for v, r, ok in zip((x, y), lag1, timed)
        if ok
    ]
    if not used:
        return 1.0, 1.0, 0.0
    total = sum(n for n, _ in used)
    raw = sum(n * r for n, r in used) / total
    se = 1.0 / math.sqrt(total)
    if not raw > PRETEST_Z * se:
        return 1.0, 1.0, 0.0
    phi = min(MAX_PHI, raw + (1.0 + 3.0 * raw) * len(used) / total + 0.5 * se)
    factor = (1.0 + phi) / (1.0 - phi)
    return (factor if timed[0] else 1.0), (factor if timed[1] else 1.0), phi
