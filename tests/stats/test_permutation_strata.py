"""Untied samples' drawn permutation reference, weighted to the exact law of the rank sum (issue 34, session 21).

At 10 against 10 (184,756 arrangements, more than are enumerated) ``compare`` drew 10,000 arrangements of
seed 0, whose 5% critical ``|T|`` was 2.282 where every arrangement gives 2.195: the test held 4.47%, not 5%,
and lost power.  The references here: the q-binomial coefficients (Python integers) for the law of the rank
sum, and every arrangement of 10 + 10 ranks for the test's level (the statistic itself is checked against
``scipy.stats.brunnermunzel`` in ``test_permutation_bits.py`` and ``test_permutation_power.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.stats import permutation as perm
from abstat.stats.permutation_strata import rank_sum_law


def _q_binomial(total: int, m: int) -> list[int]:
    """The coefficients of the Gaussian binomial [total choose m]_q: arrangements counted by their U."""
    poly = [1]
    for i in range(1, m + 1):  # times (1 - q^(total - m + i)), divided by (1 - q^i), exactly
        k = total - m + i
        poly = [c - (poly[j - k] if j >= k else 0) for j, c in enumerate(poly + [0] * k)]
        for j in range(i, len(poly)):
            poly[j] += poly[j - i]
    while poly and poly[-1] == 0:
        poly.pop()
    return poly


@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 4), (10, 10), (7, 30), (50, 50)])
def test_the_rank_sum_law_is_the_q_binomial(m, n):
    counts = _q_binomial(m + n, m)
    law = rank_sum_law(m, n)
    assert len(counts) == law.size == m * n + 1 and sum(counts) == math.comb(m + n, m)
    exact = np.array([c / math.comb(m + n, m) for c in counts])
    assert np.abs(law - exact).max() <= 1e-15
    assert law[0] == pytest.approx(exact[0], rel=1e-12) and law[-1] == pytest.approx(exact[-1], rel=1e-12)


@pytest.fixture(scope="module")
def every_10_v_10() -> tuple[np.ndarray, np.ndarray]:
    """``|T|`` and the rank sum ``U`` of all 184,756 arrangements of 10 + 10 untied values."""
    positions = perm.all_subsets(20, 10)
    untied = perm.Pooled(np.arange(20), np.arange(21), np.ones(20, dtype=np.int64), 20)
    return np.abs(perm.statistics(untied, positions)), positions.sum(axis=1) - 45


def test_the_rank_sums_of_every_arrangement_follow_the_law(every_10_v_10):
    _, u = every_10_v_10
    assert np.abs(np.bincount(u) / u.size - rank_sum_law(10, 10)).max() <= 1e-15


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_at_10_v_10_the_test_holds_its_level_and_the_interval_uses_the_exact_critical_value(every_10_v_10, seed):
    t, u = every_10_v_10
    ordered = np.sort(t)[::-1]
    for alpha, slack in ((0.05, 0.0015), (0.01, 0.0008), (0.05 / 32, 0.0003)):
        exact = float(ordered[math.ceil(alpha * t.size) - 1])  # the exact test's critical |T|
        exact_level = float(np.mean(t > exact * (1 + 1e-9)))
        law = perm.untied_weighted(20, 10, *perm.draws_for(alpha), seed)
        level = float(np.mean(law.p_values(t, u) < alpha))  # over every arrangement: the test's exact level
        assert abs(level - exact_level) <= slack, (alpha, level, exact_level)
        x = np.arange(10.0)
        critical = perm.interval_critical(x, x + 0.5, alpha, seed)  # untied 10 v 10: the sizes' reference
        assert abs(float(np.mean(t > critical)) - exact_level) <= slack, (alpha, critical, exact)
    x, y = np.arange(10.0), np.arange(10.0) + 0.5  # one arrangement through the whole test
    i = int(np.flatnonzero(np.all(perm.all_subsets(20, 10) == np.arange(0, 20, 2), axis=1))[0])
    law = perm.untied_weighted(20, 10, *perm.draws_for(0.05), seed)
    assert perm.bm_permutation(x, y, 0.05, seed).p_value == law.p_value(float(t[i]), float(u[i]))


def test_a_complete_separation_has_the_exact_floor():
    x, y = np.arange(15.0), np.arange(15.0) + 100.0
    p = perm.bm_permutation(x, y, 0.05 / 32, 0).p_value
    assert p == pytest.approx(2.0 / math.comb(30, 15), rel=1e-9)  # the two extreme arrangements
