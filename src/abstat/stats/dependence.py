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
machine and the session), and applies a variance factor when the estimate
is clearly positive (above 1.28 of its standard error ``1 / sqrt(n1 +
n2)``, a one-sided 10% pre-test); otherwise none.  The estimate is
corrected for its downward bias at small n (``E r = phi - (1 + 4 phi) / n``,
Kendall 1954; under independence ``-1/n``) and raised by half its
standard error and by ``60 / n^2`` (the estimate is noisy and the factor
convex in it; the pre-test misses some dependent series).  (A lower
pre-test below :data:`ROUGH_N` values with a graded raise,
:data:`SMALL_PRETEST_Z` and :data:`FULL_RAISE_Z`, was measured at z 1.0 /
1.6 and not adopted: 1.5-4.5 points of power on independent data at 10-15
values for a partial gain.)  The factor is
the AR(1) variance of the mean over the sample variance's expectation at
that ``n`` (:func:`variance_factor`; ``(1 + phi) / (1 - phi)`` for large
n), times the squared ratio of t quantiles at the effective and the
nominal degrees of freedom (:func:`df_factor`: 15 values at ``phi = 0.6``
are worth about 3.5 independent ones).  AR(1) ``phi = 0.3``: 6.6% false
positives at n = 50 and 4.8% at n = 200 with the asymptotic factor alone
(16.7% and 15.9% without; 1000 draws each).  Issue 34, AR(1) ``phi =
0.6`` at 15 values a side: 11.3% ±1.3 false positives, coverage 89.2%
with the asymptotic factor and the pre-test alone; 5.3% ±0.7, 94.3% ±0.7
with these terms (4000 draws; independent data lose 1.1 points of power
at n = 15 against the former rule, none at n = 50 and 200;
docs/statistics.md).  Samples of fewer than :data:`MIN_N` values are too
few to estimate it; below :data:`ROUGH_N` the estimate is rough (``phi =
0.6`` at 10-12 values: 9-13% false positives; ``phi = 0.2-0.3`` at 15:
about 8%, as before); the note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import math

import numpy as np

MIN_N = 10
ROUGH_N = 20  # below this many values the estimate of phi is rough (said in the note)
PRETEST_Z = 1.28
# Below ROUGH_N values a side: the pre-test's threshold and the z from which the whole raise applies (between
# them a share).  Kept at PRETEST_Z: z 1.0 / 1.6 was measured and not adopted (docs/statistics.md, "Small samples").
SMALL_PRETEST_Z = PRETEST_Z
FULL_RAISE_Z = PRETEST_Z
MAX_PHI = 0.9
MAX_LAG = 400  # MAX_PHI ** 400 < 1e-18: lags beyond add nothing to a factor
SMALL_N_SHIFT = 60.0  # over n^2, added to the estimate with half its error (the estimate's noise, a convex factor)
MIN_SHARE = 0.25  # the least share of the variance a sample's own spread is taken to show
MIN_DF = 2.0  # the fewest effective degrees of freedom the critical value is taken at


def is_sorted(values: np.ndarray) -> bool:
    """The values are in ascending or descending order (a sorted file), not
    all equal: their order is the sort's, it carries no time."""
    if values.size < 3:
        return False
    head = values[:65]  # (time-ordered data: a rise and a fall among the first steps settle it)
    head = head[1:] - head[:-1]  # (np.diff's)
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


def variance_factor(phi: float, n: int) -> float:
    """How much AR(1) serial correlation ``phi`` widens the variance of the
    mean of ``n`` values as a variance estimated from them sees it: the
    variance of the mean, ``(1 + 2 sum_k (1 - k/n) phi^k) sigma^2 / n``, over
    the sample variance's expectation, ``(1 - 2 sum_k (1 - k/n) phi^k /
    (n - 1)) sigma^2`` (which positive ``phi`` biases down); ``(1 + phi) /
    (1 - phi)`` for large ``n``."""
    k, weights = _lags(n)
    s = float(np.dot(weights, phi**k))
    return (1.0 + 2.0 * s) / max(1.0 - 2.0 * s / (n - 1), MIN_SHARE)


@lru_cache(maxsize=64)
def _lags(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The lags ``k`` of :func:`variance_factor` at ``n`` values and their weights ``1 - k / n``, kept (the
    small-n power model asks them for each data set its pre-test fires on)."""
    k = np.arange(1, min(n, MAX_LAG))  # phi <= MAX_PHI: the terms beyond are below 1e-18
    weights = 1.0 - k / n
    k.flags.writeable = weights.flags.writeable = False
    return k, weights


def df_factor(sizes: tuple[int, int], factors: tuple[float, float], confidence: float) -> float:
    """The squared ratio of the t quantiles at the effective degrees of
    freedom of dependent samples (``n / factor`` values' worth per side,
    at least :data:`MIN_DF`) and at those of independent ones: a variance
    estimated from few effective values is itself rough, so its critical
    value is a t's of few degrees of freedom (15 values at ``phi = 0.6``:
    about 3.5 values' worth per side)."""
    q = 0.5 + confidence / 2.0
    return _rough(_quantile(dependent_df(sizes, factors), q), sizes, q)


def dependent_df(sizes: tuple[int, int], factors: tuple[float, float]) -> float:
    """The effective degrees of freedom of dependent samples: ``n / factor`` values' worth per side, less
    2, at least :data:`MIN_DF`."""
    return max(MIN_DF, sum(n / f for n, f in zip(sizes, factors)) - 2.0)


def _rough(quantile: float, sizes: tuple[int, int], q: float) -> float:
    """:func:`df_factor` from the t quantile at the dependent samples' degrees of freedom."""
    return (quantile / _quantile(max(MIN_DF, sum(sizes) - 2.0), q)) ** 2


@lru_cache(maxsize=1024)
def _quantile(df: float, q: float) -> float:
    """Student's t quantile (:func:`abstat.stats.distributions.stdtrit`), remembered: the independent
    samples' one is asked again for every data set the small-n power model pre-tests."""
    from abstat.stats.distributions import stdtrit

    return stdtrit(df, q)


def serial_factors(
    x: np.ndarray,
    y: np.ndarray,
    lag1: tuple[float | None, float | None] = (None, None),
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """``(factor_x, factor_y, phi)``: the variance factors for two samples'
    centres and the lag-1 autocorrelation they come from (1, 1, 0 when none
    is evident).  Both variants of a benchmark run on one machine in one
    session, so the evidence of both is averaged (a variant with fewer than
    :data:`MIN_N` values gives none and keeps factor 1); ``lag1``: each
    sample's lag-1 rank autocorrelation, when already known.  A sorted
    sample (:func:`is_sorted`) gives no evidence: its order is not time.
    ``confidence``: the level whose critical value :func:`df_factor` moves."""
    timed = (timed_sample(x), timed_sample(y))
    found = own_factors(x, y, lag1, timed)
    if found is None:
        return 1.0, 1.0, 0.0
    own, phi = found
    return _widened(own, timed, df_factor((x.size, y.size), own, confidence)) + (phi,)


def timed_sample(v: np.ndarray) -> bool:
    """The sample gives evidence of serial correlation: :data:`MIN_N` values or more, not sorted."""
    return v.size >= MIN_N and not is_sorted(v)


Pair = tuple[np.ndarray, np.ndarray, tuple[float | None, float | None], tuple[bool, bool]]


def serial_factors_many(pairs: Sequence[Pair], confidence: float) -> list[tuple[float, float]]:
    """``serial_factors(x, y, lag1, confidence)[:2]`` for each ``(x, y, lag1, timed)`` (``timed``: each
    sample's :func:`timed_sample`), the same floats: the t quantiles of :func:`df_factor` at the pairs' own
    degrees of freedom computed together (:func:`abstat.stats.t_quantile_rows.stdtrit_rows`; one at a time
    they were most of the small-n power model's pre-test)."""
    from abstat.stats.t_quantile_rows import stdtrit_rows

    q = 0.5 + confidence / 2.0
    found = [(x.size, y.size, timed, own_factors(x, y, lag1, timed)) for x, y, lag1, timed in pairs]
    fired = [(n1, n2, f[0]) for n1, n2, _, f in found if f is not None]
    quantiles = iter(stdtrit_rows([dependent_df((n1, n2), own) for n1, n2, own in fired], q))
    return [
        (1.0, 1.0) if f is None else _widened(f[0], timed, _rough(next(quantiles), (n1, n2), q))
        for n1, n2, timed, f in found
    ]


def own_factors(
    x: np.ndarray, y: np.ndarray, lag1: tuple[float | None, float | None], timed: tuple[bool, bool]
) -> tuple[tuple[float, float], float] | None:
    """:func:`serial_factors`' pre-test and each sample's own variance factor (1 for one not ``timed``),
    before :func:`df_factor`: ``(factors, phi)``, or None when the pre-test does not fire."""
    used = [
        (v.size, (lag1_rank_autocorrelation(v) if r is None else r) + 1.0 / v.size)
        for v, r, ok in zip((x, y), lag1, timed)
        if ok
    ]
    if not used:
        return None
    total = sum(n for n, _ in used)
    raw = sum(n * r for n, r in used) / total
    size = total / len(used)
    z = raw * math.sqrt(total)
    if not z > (PRETEST_Z if size >= ROUGH_N else SMALL_PRETEST_Z):
        return None
    phi = min(MAX_PHI, raw / (1.0 - 4.0 / size))  # Kendall's bias, -(1 + 4 phi) / n, with raw holding the 1 / n
    graded = size < ROUGH_N and z < FULL_RAISE_Z
    raise_share = (z - SMALL_PRETEST_Z) / (FULL_RAISE_Z - SMALL_PRETEST_Z) if graded else 1.0
    shifted = min(MAX_PHI, phi + raise_share * (0.5 / math.sqrt(total) + SMALL_N_SHIFT / size**2))
    own = [variance_factor(shifted, n) if ok else 1.0 for n, ok in zip((x.size, y.size), timed)]
    return (own[0], own[1]), phi


def _widened(own: tuple[float, float], timed: tuple[bool, bool], rough: float) -> tuple[float, float]:
    """Each timed sample's own factor times the degrees of freedom's; 1 for the others."""
    return (own[0] * rough if timed[0] else 1.0), (own[1] * rough if timed[1] else 1.0)
