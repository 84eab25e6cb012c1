"""Median interval against scipy.stats.quantile_test and the binomial law."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abstat.stats.location import median_ci, median_ci_ranks, min_n_for_median_ci


@pytest.mark.parametrize("n", [6, 7, 8, 9, 10, 11, 17, 31, 50, 98, 100, 1001])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_median_ci_matches_scipy_quantile_test(n, confidence):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    ref = stats.quantile_test(x, q=np.median(x)).confidence_interval(confidence)
    ours = median_ci(x, confidence)
    if np.isnan(ref.low):
        assert ours is None
    else:
        assert ours == (ref.low, ref.high)


@pytest.mark.parametrize("n", [6, 10, 50, 99])
def test_median_ci_coverage_is_at_least_the_confidence(n):
    lo, hi = median_ci_ranks(n, 0.95)
    coverage = stats.binom.cdf(hi - 1, n, 0.5) - stats.binom.cdf(lo - 1, n, 0.5)
    assert coverage >= 0.95
    # and it is the shortest such pair: one step narrower falls short
    narrower = stats.binom.cdf(hi - 2, n, 0.5) - stats.binom.cdf(lo, n, 0.5)
    assert narrower < 0.95


def test_too_few_samples_for_an_interval():
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) is None
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95) == (1.0, 6.0)
    assert min_n_for_median_ci(0.95) == 6
    assert min_n_for_median_ci(0.99) == 8
    for conf in (0.8, 0.9, 0.95, 0.99, 0.999):
        need = min_n_for_median_ci(conf)
        assert median_ci_ranks(need, conf) is not None
        assert median_ci_ranks(need - 1, conf) is None


def test_ties_keep_the_order_statistics():
    x = [440.0] * 80 + [420.0] * 9 + [460.0] * 9
    assert median_ci(x, 0.95) == (440.0, 440.0)
