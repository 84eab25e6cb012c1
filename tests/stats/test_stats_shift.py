"""Two-sample shift estimators against scipy oracles (ties, small n)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abstat.stats.shift import hodges_lehmann, mwu_exact_pmf, welch, yuen


def _samples(seed: int, n1: int, n2: int, tied: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, n1)
    y = rng.normal(0.4, 1.5, n2)
    if tied:
        x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
    return x, y


CASES = [
    (seed, n1, n2, tied)
    for seed in range(3)
    for (n1, n2) in [(3, 4), (6, 8), (9, 12), (40, 55)]
    for tied in (False, True)
]


@pytest.mark.parametrize("seed,n1,n2,tied", CASES)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_welch_matches_scipy(seed, n1, n2, tied, confidence):
    x, y = _samples(seed, n1, n2, tied)
    ours = welch(x, y, confidence)
    ref = stats.ttest_ind(y, x, equal_var=False)
    ci = ref.confidence_interval(confidence)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert ours.low == pytest.approx(ci.low, rel=1e-9, abs=1e-12)
    assert ours.high == pytest.approx(ci.high, rel=1e-9, abs=1e-12)
    assert ours.estimate == pytest.approx(y.mean() - x.mean())


@pytest.mark.parametrize("seed,n1,n2,tied", [c for c in CASES if c[1] >= 6])
@pytest.mark.parametrize("trim", [0.1, 0.2])
def test_yuen_matches_scipy_trimmed_t(seed, n1, n2, tied, trim):
    x, y = _samples(seed, n1, n2, tied)
    ours = yuen(x, y, 0.95, trim)
    ref = stats.ttest_ind(y, x, equal_var=False, trim=trim)
    if ours.se == 0:
        pytest.skip("degenerate winsorized variance")
    ci = ref.confidence_interval(0.95)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (ours.low, ours.high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert ours.estimate == pytest.approx(stats.trim_mean(y, trim) - stats.trim_mean(x, trim))


@pytest.mark.parametrize("seed,n1,n2,tied", CASES)
def test_mann_whitney_p_value_matches_scipy(seed, n1, n2, tied):
    x, y = _samples(seed, n1, n2, tied)
    ours = hodges_lehmann(x, y, 0.95)
    ref = stats.mannwhitneyu(y, x, alternative="two-sided")  # scipy: exact when <= 8 and no ties
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize("seed,n1,n2,tied", CASES)
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_hodges_lehmann_interval_inverts_mann_whitney(seed, n1, n2, tied, confidence):
    """Just inside the interval scipy's test accepts the shift, just outside it rejects."""
    x, y = _samples(seed, n1, n2, tied)
    ours = hodges_lehmann(x, y, confidence)
    assert ours.estimate == pytest.approx(np.median(np.subtract.outer(y, x)))
    alpha = 1 - confidence
    diffs = np.unique(np.subtract.outer(y, x))
    gap = np.min(np.diff(diffs)) if diffs.size > 1 else 1.0
    eps = gap * 1e-3
    for bound, inside in ((ours.low, ours.low + eps), (ours.high, ours.high - eps)):
        if not np.isfinite(bound):
            continue
        outside = bound - eps if bound == ours.low else bound + eps
        # inside the interval (within-sample ties only, as in the interval)
        assert stats.mannwhitneyu(y - inside, x).pvalue >= alpha - 1e-12
        assert stats.mannwhitneyu(y - outside, x).pvalue < alpha


def test_hodges_lehmann_unbounded_for_tiny_samples():
    ours = hodges_lehmann(np.array([1.0, 2.0]), np.array([3.0, 4.0]), 0.95)
    assert ours.low == -np.inf and ours.high == np.inf


@pytest.mark.parametrize("n1,n2", [(1, 1), (2, 3), (4, 4), (5, 8), (8, 8)])
def test_exact_null_distribution_matches_enumeration(n1, n2):
    from itertools import combinations

    pmf = mwu_exact_pmf(n1, n2)
    counts = np.zeros(n1 * n2 + 1)
    total = n1 + n2
    for chosen in combinations(range(total), n2):
        # U of the chosen (candidate) ranks over the others
        u = sum(r - i for i, r in enumerate(chosen))
        counts[u] += 1
    assert np.allclose(pmf, counts / counts.sum())


@pytest.mark.parametrize("seed,n1,n2,tied", [c for c in CASES if c[1] >= 9])
def test_large_sample_path_gives_the_same_interval(seed, n1, n2, tied, monkeypatch):
    """Without materialising the n1*n2 differences (bisection on counts)."""
    import abstat.stats.shift as shift

    x, y = _samples(seed, n1, n2, tied)
    small = hodges_lehmann(x, y, 0.95)
    monkeypatch.setattr(shift, "PAIRWISE_LIMIT", 0)
    large = hodges_lehmann(x, y, 0.95)
    assert (large.estimate, large.low, large.high, large.p_value) == (
        small.estimate,
        small.low,
        small.high,
        small.p_value,
    )


def test_mann_whitney_p_is_exact_like_scipy_when_one_side_is_small():
    # Issue 9: for 5 vs 20 samples abstat gave p = 0.0048 (normal
    # approximation) where scipy's exact test gives 0.0023.
    from scipy import stats as sps

    from abstat.stats.shift import hodges_lehmann

    rng = np.random.default_rng(7)
    for n1, n2 in ((5, 20), (20, 5), (8, 40), (3, 9)):
        x = rng.normal(0.0, 1.0, n1)
        y = rng.normal(1.0, 1.0, n2)
        ours = hodges_lehmann(x, y, 0.95)
        ref = sps.mannwhitneyu(y, x, alternative="two-sided", method="auto").pvalue
        assert ours.p_value == pytest.approx(ref, rel=1e-9), (n1, n2)
        assert "exact" in ours.method
