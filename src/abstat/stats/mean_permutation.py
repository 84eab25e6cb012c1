"""Welch's t of the means referred to its permutation distribution (Janssen 1997).

Welch's t needs each mean close to normal.  A variant of 150 runs against 500 from one population with 3%
interrupts (x 1.3-1.8) holds its share of them only on average: where it holds fewer, its mean and its
standard deviation are both low, and Student's t reference calls a difference (issue 34: 6.2% of the verdicts
``--center mean`` gave were false, after :mod:`abstat.comparison.mean_tails` had withheld the draws where the
smaller variant cannot hold the tail).  Janssen (*Statist. Probab. Lett.* 36, 1997) refers Welch's ``T``
instead to its distribution over the arrangements of the pooled sample: exact when both variants come from one
distribution (the level holds given the pooled values, so a rule that looks only at them cannot inflate it;
the tail rule reads the pooled share, its gate the larger variant's own), and asymptotically valid for equal
means under unequal variances and sizes, because ``T`` is studentized (asymptotically only: 20 values at sd 5%
against 100 at sd 1% gave 12.7% false calls, so ``compare`` takes it only where the tail rule applies).

The arrangements are drawn (:func:`abstat.stats.permutation.uniforms`, reproducibly from the comparison's
seed); the p-value is ``(1 + #{|T*| >= |T|}) / (B + 1)`` over ``B`` draws, valid at any ``B``.  The interval
inverts the same test: the critical value ``c`` is the drawn ``|T*|`` of the rank at which that p-value
crosses ``alpha``, and the ratios ``r`` with ``|m2 - r m1| <= c sqrt(v2/n2 + r^2 v1/n1)`` (Fieller's set, with
``c`` for Student's quantile) form it.  At ``r = 1`` the inequality is ``|T| <= c``, so the interval excludes
a ratio of 1 exactly when ``p < alpha``.  Fieller's set uses the reference of ``r = 1`` at every ``r`` (the
studentized ``T`` has nearly the same permutation law near it; exact re-centring at each ``r`` would cost a
reference per ratio).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

BUDGET = 1 << 21  # draws x the smaller variant's size at most; beyond them Student's t reference
TIE = 1e-9  # relative: statistics this close to the observed one count as equal to it
POOLED_MAX = 1 << 28  # draws x pooled values at most (the subsets' masks, a chunk at a time)


class MeanPermutation(NamedTuple):
    p_value: float
    low: float  # T below this is significant at alpha (the mean of y below that of x)
    high: float  # T above this is significant at alpha; p < alpha exactly when T < low or T > high
    draws: int


def draws_for(alpha: float) -> int:
    """Arrangements drawn for a test at ``alpha``: ``alpha (B + 1) / 2`` an integer of 50 or more (1999 at 5%,
    9999 at 1%), so that each critical value is a drawn statistic and the Monte Carlo error of ``p`` near
    ``alpha`` is about a tenth of it."""
    return max(1999, int(math.ceil(100.0 / alpha)) - 1)


def affordable(n1: int, n2: int, alpha: float) -> bool:
    """Whether :func:`welch_permutation` draws its arrangements within :data:`BUDGET` and :data:`POOLED_MAX`
    (1999 draws, at 95%: up to 1,049 values in the smaller variant and 134,000 pooled; beyond them the means'
    t reference is left as it is)."""
    draws = draws_for(alpha)
    return min(n1, n2) >= 2 and draws * min(n1, n2) <= BUDGET and draws * (n1 + n2) <= POOLED_MAX


def _welch_t(s1: np.ndarray, q1: np.ndarray, n1: int, s2: np.ndarray, q2: np.ndarray, n2: int) -> np.ndarray:
    """Welch's ``T`` of the second group's mean against the first's from their sums and sums of squares (of
    centred, scaled values); 0 where neither varies and the means agree."""
    v1 = np.maximum(q1 - s1 * s1 / n1, 0.0) / (n1 - 1)
    v2 = np.maximum(q2 - s2 * s2 / n2, 0.0) / (n2 - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (s2 / n2 - s1 / n1) / np.sqrt(v1 / n1 + v2 / n2)
    return np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf)


def _reference(z: np.ndarray, n1: int, draws: int, seed: int) -> np.ndarray:
    """``T*`` (the second group's mean against the first's) of ``draws`` arrangements of the pooled ``z`` (its
    first ``n1`` values the first group's): the smaller group's positions a random subset
    (:func:`abstat.stats.permutation.random_subsets`), a chunk of arrangements at a time."""
    from abstat.stats.permutation import MASK_MAX, random_subsets

    total = z.size
    m = min(n1, total - n1)
    s, q = float(z.sum()), float((z * z).sum())
    rows = max(1, MASK_MAX // total)
    out = np.empty(draws)
    for start in range(0, draws, rows):
        k = min(rows, draws - start)
        picked = z[random_subsets(total, m, k, seed, 31 + start)]
        sm, qm = picked.sum(axis=1), (picked * picked).sum(axis=1)
        if m == n1:
            out[start : start + k] = _welch_t(sm, qm, m, s - sm, q - qm, total - m)
        else:
            out[start : start + k] = _welch_t(s - sm, q - qm, total - m, sm, qm, m)
    return out


def _observed(zx: np.ndarray, zy: np.ndarray, inflate: tuple[float, float]) -> float:
    """Welch's ``T`` of ``zy``'s mean against ``zx``'s, each variance times its factor in ``inflate``."""
    n1, n2 = zx.size, zy.size
    ss1, ss2 = float(((zx - zx.mean()) ** 2).sum()), float(((zy - zy.mean()) ** 2).sum())
    s1, s2 = np.array([zx.sum()]), np.array([zy.sum()])
    return float(_welch_t(s1, s1 * s1 / n1 + inflate[0] * ss1, n1, s2, s2 * s2 / n2 + inflate[1] * ss2, n2)[0])


def welch_permutation(
    x: np.ndarray, y: np.ndarray, alpha: float, seed: int = 0, inflate: tuple[float, float] = (1.0, 1.0)
) -> MeanPermutation:
    """The studentized permutation test of equal means of ``x`` and ``y`` (two-sided, Welch's ``T`` of ``y``'s
    mean against ``x``'s): its p-value, twice the smaller tail as ``scipy.stats.permutation_test`` takes it (the
    law of ``T`` is skewed where the data are: each direction keeps ``alpha / 2``), and the critical values of
    ``T`` at ``alpha``.  The observed ``T`` takes the serial-correlation factors ``inflate`` on the variances;
    the arrangements, independent by construction, do not."""
    pooled = np.concatenate((x, y))
    z = pooled / (float(np.max(np.abs(pooled))) or 1.0)  # (scaled first: 1e308 - -1e308 would overflow)
    z = z - float(np.median(z))
    z = z / (float(np.max(np.abs(z))) or 1.0)  # (centred and scaled: sums of squares without cancellation)
    observed = _observed(z[: x.size], z[x.size :], inflate)
    draws = draws_for(alpha)
    reference = np.sort(_reference(z, x.size, draws, seed))
    # (ties: on tied data T equals some arrangements' T*, computed along other float paths, so a T* within TIE of
    # it counts as equal, and the critical values sit TIE / 2 beyond their drawn statistic: Fieller's interval,
    # computed from the means and deviations, then agrees with the p-value at such a T too)
    tie = TIE * max(1.0, abs(observed))
    above = int(np.count_nonzero(reference >= observed - tie))
    below = int(np.count_nonzero(reference <= observed + tie))
    p = min(1.0, 2.0 * (1.0 + min(above, below)) / (draws + 1.0))
    # p < alpha exactly when min(above, below) <= k (the most hits whose p-value is below alpha, in the floats
    # the verdict compares): when T is beyond the (k+1)-th largest drawn T* or the (k+1)-th smallest
    k = int(np.count_nonzero(2.0 * (1.0 + np.arange(draws + 1)) / (draws + 1.0) < alpha)) - 1
    if k < 0:
        return MeanPermutation(p, -math.inf, math.inf, draws)
    return MeanPermutation(p, float(reference[k]) - tie / 2.0, float(reference[-1 - k]) + tie / 2.0, draws)
