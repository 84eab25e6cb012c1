"""Diagnostics fire on data with the property and stay quiet without it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abstat.stats import diagnostics


def codes(found):
    return [w.code for w in found]


def test_min_n_rank_test_against_scipy_exact():
    for confidence in (0.9, 0.95, 0.99):
        m = diagnostics.min_n_rank_test(confidence)
        alpha = 1 - confidence
        apart = stats.mannwhitneyu(np.arange(m), np.arange(m) + 100, method="exact").pvalue
        assert apart <= alpha
        fewer = stats.mannwhitneyu(np.arange(m - 1), np.arange(m - 1) + 100, method="exact").pvalue
        assert fewer > alpha


def test_ties_and_grid():
    rng = np.random.default_rng(0)
    tsc = np.round(rng.normal(440, 7, 98) / 20) * 20
    found = diagnostics.ties("before", tsc)
    assert codes(found) == ["ties"] and "grid of 20" in found[0].message
    assert diagnostics.ties("x", rng.normal(440, 7, 98)) == []
    assert diagnostics.quantization_step(np.array([420.0, 441.0, 462.0])) == 21.0


def test_unequal_spread():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 80), rng.normal(0, 4, 80)
    assert codes(diagnostics.unequal_spread("a", a, "b", b)) == ["unequal-spread"]
    assert diagnostics.unequal_spread("a", a, "b", rng.normal(0, 1.1, 80)) == []


@pytest.mark.parametrize("seed", range(5))
def test_bimodality(seed):
    rng = np.random.default_rng(seed)
    slow = rng.random(100) < 0.25
    bimodal = np.where(slow, rng.normal(1250, 10, 100), rng.normal(1000, 10, 100))
    assert codes(diagnostics.bimodal("x", bimodal)) == ["bimodal"]
    assert diagnostics.bimodal("x", rng.normal(1000, 10, 100)) == []
    skewed = 1000 + 30 * rng.lognormal(0, 1, 100)
    assert diagnostics.bimodal("x", skewed) == []
    with_outliers = rng.normal(1000, 10, 100)
    with_outliers[:3] *= 1.5
    assert diagnostics.bimodal("x", with_outliers) == []


def test_drift_trend_and_autocorrelation():
    rng = np.random.default_rng(2)
    steady = rng.normal(0, 1, 100)
    assert diagnostics.drift("x", steady) == []
    trend = steady + np.linspace(0, 3, 100)
    assert codes(diagnostics.drift("x", trend)) == ["drift"]
    ar = np.zeros(200)
    for i in range(1, 200):
        ar[i] = 0.7 * ar[i - 1] + rng.normal()
    found = diagnostics.drift("x", ar)
    assert codes(found) == ["drift"] and "autocorrelation" in found[0].message


def test_drift_false_alarm_rate_is_small():
    rng = np.random.default_rng(3)
    alarms = sum(bool(diagnostics.drift("x", rng.normal(size=60))) for _ in range(500))
    assert alarms / 500 < 0.05


def test_runs_disagree():
    assert codes(diagnostics.runs_disagree("x", 1e-6, 0.8)) == ["runs-disagree"]
    assert diagnostics.runs_disagree("x", 0.2, 0.01) == []


@pytest.mark.parametrize("seed", range(3))
def test_brown_forsythe_matches_scipy_levene_median(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(0, 1, 30 + seed), rng.normal(0, 1.5 + seed, 25)
    assert diagnostics.brown_forsythe(x, y) == pytest.approx(stats.levene(x, y, center="median").pvalue, rel=1e-9)


def test_rank_and_tie_helpers_match_scipy_and_numpy_on_tied_and_untied_data():
    # Issue 14 pins: the O(n log n) helpers give the old (numpy/scipy) results.
    from scipy import stats as sps

    from abstat.stats.diagnostics import average_ranks, tie_counts
    from abstat.stats.medians import median

    rng = np.random.default_rng(21)
    for values in (
        rng.normal(0, 1, 1001),
        20.0 * np.round(rng.normal(440, 7, 1000) / 20),
        rng.integers(0, 5, 777).astype(float),
        np.array([3.0]),
        np.array([2.0, 1.0]),
    ):
        assert np.array_equal(average_ranks(values), sps.rankdata(values))
        assert np.array_equal(tie_counts(values), np.unique(values, return_counts=True)[1])
        assert median(values) == float(np.median(values))
