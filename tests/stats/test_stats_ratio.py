"""Welch t with Fieller's interval for a ratio of means."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from abstat.stats.ratio import welch_ratio

CASES = [
    (98, 438.97959, 6.6564899, 98, 370.81633, 12.57337),
    (100, 2288.84, 196.18218, 99, 2232.4646, 75.867677),
    (5, 10.0, 1.0, 7, 10.5, 3.0),
    (3, 100.0, 20.0, 3, 95.0, 1.0),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_p_value_is_welch(case, confidence):
    n1, m1, s1, n2, m2, s2 = case
    r = welch_ratio(n1, m1, s1, n2, m2, s2, confidence)
    ref = stats.ttest_ind_from_stats(m2, s2, n2, m1, s1, n1, equal_var=False)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert r.ratio == pytest.approx(m2 / m1)


@pytest.mark.parametrize("case", CASES)
def test_fieller_bounds_solve_the_pivot(case):
    n1, m1, s1, n2, m2, s2 = case
    r = welch_ratio(n1, m1, s1, n2, m2, s2, 0.95)
    q = stats.t.ppf(0.975, r.df)
    for rho in (r.low, r.high):
        assert math.isfinite(rho)
        pivot = (m2 - rho * m1) ** 2 - q * q * (s2**2 / n2 + rho**2 * s1**2 / n1)
        assert pivot == pytest.approx(0.0, abs=1e-6 * m2 * m2)
    assert r.low < r.ratio < r.high


@pytest.mark.parametrize("case", CASES)
def test_interval_excludes_one_exactly_when_significant(case):
    n1, m1, s1, n2, m2, s2 = case
    for confidence in (0.8, 0.9, 0.95, 0.99, 0.999):
        r = welch_ratio(n1, m1, s1, n2, m2, s2, confidence)
        excludes = not (r.low <= 1.0 <= r.high)
        assert excludes == (r.p_value < 1 - confidence)


def test_fieller_covers_by_simulation():
    rng = np.random.default_rng(7)
    hits = 0
    reps = 2000
    for _ in range(reps):
        x = rng.normal(10.0, 2.0, 8)
        y = rng.normal(12.0, 1.0, 12)
        r = welch_ratio(8, x.mean(), x.std(ddof=1), 12, y.mean(), y.std(ddof=1), 0.95)
        hits += r.low <= 1.2 <= r.high
    assert 0.93 <= hits / reps <= 0.97


def test_unbounded_when_the_baseline_mean_is_not_away_from_zero():
    r = welch_ratio(3, 1.0, 10.0, 3, 5.0, 1.0, 0.95)
    assert r.low == -math.inf and r.high == math.inf
