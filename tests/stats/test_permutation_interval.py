"""The permutation interval of the Hodges-Lehmann shift agrees with the permutation test (issue 34, wave 11).

At 20 against 20 untied values ``T`` depends on the ranks alone, so the interval's reference (the samples
aligned at the estimate) is the test's own when both use the same arrangements.  Until wave 11 the
interval drew 1000 arrangements of its own, whose critical value (2.12 at seed 0) lay above the test's
(2.09, 10,000 draws; the distribution's 2.05): the test rejected, the interval held 0, the p-value was
raised to alpha, and 20 against 20 runs lost 4-5 points of power.  The references here are scipy's
``brunnermunzel`` statistic over the same arrangements (brute force) and scipy's t-based test."""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
from scipy import stats

from abstat.stats.hodges_lehmann import OPEN, hodges_lehmann
from abstat.stats.permutation import bm_permutation, draws_for, random_subsets
from abstat.stats.permutation_strata import rank_sum_law

ALPHA = 0.05


def _abs_bm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.abs(stats.brunnermunzel(a, b, axis=-1).statistic)


def _scipy_critical(x: np.ndarray, y: np.ndarray, seed: int = 0) -> float:
    """The largest ``|T|`` accepted at ALPHA: scipy's statistic over the arrangements the test draws
    (both batches of ``bm_permutation``), each weighing ``P(U = u) / (draws with U = u)`` for its rank sum
    ``U`` (the exact law: ``rank_sum_law``, checked against the q-binomial coefficients in
    ``test_permutation_strata.py``; since session 21), the strata no draw fell in counted above every draw:
    the ``|T|`` where the weight at or above it first reaches ALPHA."""
    first, most = draws_for(ALPHA)
    rows = np.concatenate([random_subsets(40, 20, first, seed, 1), random_subsets(40, 20, most - first, seed, 2)])
    pooled = np.sort(np.concatenate((x, y)))
    chosen = np.zeros((rows.shape[0], pooled.size), dtype=bool)
    chosen[np.arange(rows.shape[0])[:, None], rows] = True
    every = np.broadcast_to(pooled, chosen.shape)
    t = _abs_bm(every[chosen].reshape(-1, 20), every[~chosen].reshape(-1, 20))
    u = rows.sum(axis=1) - 190
    law = rank_sum_law(20, 20)
    counts = np.bincount(u, minlength=law.size)
    order = np.argsort(t, kind="stable")[::-1]
    weight = law[counts == 0].sum() + np.cumsum((law[u] / counts[u])[order])
    return float(t[order][np.flatnonzero(weight >= ALPHA * (1 - 1e-12))[0]])


def _near_the_boundary(count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded untied 20 v 20 normal samples whose Brunner-Munzel ``|T|`` (scipy) is near the 5% critical value."""
    rng = np.random.default_rng(20261205)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    while len(found) < count:
        x, y = rng.normal(0.0, 1.0, 20), rng.normal(0.65, 1.0, 20)
        if 2.0 <= float(_abs_bm(x, y)) <= 2.3:
            found.append((x, y))
    return found


def test_the_test_decides_and_the_interval_agrees_at_20_v_20():
    raised = 0
    for x, y in _near_the_boundary(60):
        test = bm_permutation(x, y, ALPHA)
        h = hodges_lehmann(x, y, 1.0 - ALPHA, permute=True)
        assert h.p_value == test.p_value  # never raised to alpha: the interval's reference is the test's
        assert (test.p_value < ALPHA) == (not h.low <= 0.0 <= h.high)
        raised += test.p_value < ALPHA and h.p_value >= ALPHA
    assert raised == 0


def test_at_15_v_15_the_interval_takes_the_test_s_reference_and_calls_what_it_calls():
    """15 x 15 pairs: the estimate is a pairwise difference, so the samples aligned at it tie in one pair;
    until session 21 that sent the interval to the tied path's plain draws (critical |T| 2.138 at seed 0)
    while the test of the untied samples took the draws weighted to the rank sum's law (2.101), and the
    interval overruled the test (p raised to alpha) between the two."""
    rng = np.random.default_rng(1515)
    between = 0
    for _ in range(400):
        x, y = rng.normal(0.0, 1.0, 15), rng.normal(0.8, 1.0, 15)
        t = float(_abs_bm(x, y))
        if not 1.9 <= t <= 2.4:
            continue
        test = bm_permutation(x, y, ALPHA)
        h = hodges_lehmann(x, y, 1.0 - ALPHA, permute=True)
        assert h.p_value == test.p_value  # never raised to alpha
        assert (test.p_value < ALPHA) == (not h.low <= 0.0 <= h.high)
        between += 2.11 <= t <= 2.13 and test.p_value < ALPHA
    assert between >= 1  # called where the plain draws of seed 0 would not


def test_the_interval_ends_are_where_scipys_statistic_crosses_the_critical_value():
    for x, y in _near_the_boundary(3):
        h = hodges_lehmann(x, y, 1.0 - ALPHA, permute=True)
        c = _scipy_critical(x, y - h.estimate)  # untied: the same reference as the observed samples'
        assert c == _scipy_critical(x, y)
        d = np.unique(np.subtract.outer(y, x))  # the interval's ends are pairwise differences
        for end, inward in ((h.low, 1), (h.high, -1)):
            i = int(np.searchsorted(d, end))
            assert d[i] == end
            step = min(abs(float(d[i + inward]) - end), abs(end - float(d[i - inward]))) / 2.0
            assert _abs_bm(x, y - (end + inward * step)) <= c * (1 + 1e-9)  # accepted just inside
            assert _abs_bm(x, y - (end - inward * step)) > c * (1 + 1e-9)  # rejected just outside


def _shared_value_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded 8 v 8 samples sharing one value (a pairwise difference of exactly 0, as equal run medians
    on both sides give) whose interval ends at 0: draws 25, 81 and 96 of this generator (found by search).
    Until session 21 these were 20 v 20 draws, whose test (tied: plain draws) and interval (untied once
    aligned: draws weighted to the rank sum's law) now take different references; at 8 v 8 both enumerate
    every arrangement."""
    rng = np.random.default_rng(7)
    cases: list[tuple[np.ndarray, np.ndarray]] = []
    for s in range(97):
        x, y = rng.normal(0.0, 1.0, 8), rng.normal(1.2, 1.0, 8)
        if s in (25, 81, 96):
            i, j = np.unravel_index(np.argmin(np.abs(np.subtract.outer(y, x))), (8, 8))
            y[i] = x[j]
            cases.append((x, y))
    return cases


def _scipy_exact_critical(x: np.ndarray, y: np.ndarray) -> float:
    """The largest ``|T|`` accepted at ALPHA among every arrangement of 8 + 8 values (scipy's statistic)."""
    pooled = np.sort(np.concatenate((x, y)))
    rows = np.array(list(combinations(range(16), 8)))
    chosen = np.zeros((rows.shape[0], 16), dtype=bool)
    chosen[np.arange(rows.shape[0])[:, None], rows] = True
    every = np.broadcast_to(pooled, chosen.shape)
    t = np.sort(_abs_bm(every[chosen].reshape(-1, 8), every[~chosen].reshape(-1, 8)))[::-1]
    return float(t[int(np.ceil(ALPHA * t.size - 1e-9)) - 1])


def test_an_end_at_a_difference_of_exactly_0_that_the_test_rejects_is_open():
    for x, y in _shared_value_cases():
        test = bm_permutation(x, y, ALPHA)
        h = hodges_lehmann(x, y, 1.0 - ALPHA, permute=True)
        assert test.exact and test.p_value < ALPHA and h.p_value == test.p_value  # the test decides
        assert h.low == OPEN and not h.low <= 0.0 <= h.high  # the verdict and the interval agree
        c = _scipy_exact_critical(x, y - h.estimate)  # the aligned samples are untied
        d = np.unique(np.subtract.outer(y, x))
        above = float(d[np.searchsorted(d, 0.0) + 1]) / 2.0  # a shift inside the gap above 0
        assert _abs_bm(x, y) > c * (1 + 1e-9)  # 0 itself (mid-ranks at the shared value) is rejected
        assert _abs_bm(x, y - above) <= c * (1 + 1e-9)  # the shifts just above it are accepted
