"""On tied data a significant permutation test decides when the inverted interval of the cell-spread values
straddles 0 (wave 11): the p-value is the enumerated mid-p-value of scipy's own permutation distribution of
scipy's Brunner-Munzel statistic, and the interval keeps the accepted shifts on the estimate's side of 0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import abstat
from abstat.stats.hodges_lehmann import hodges_lehmann

# grid 20, 8 against 6 values: C(14, 6) = 3003 arrangements, enumerated by scipy and by abstat
X = np.array([420.0, 440, 440, 440, 440, 440, 440, 440])
Y = np.array([440.0, 440, 440, 460, 460, 460])


def _abs_bm(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = np.abs(stats.brunnermunzel(a, b, axis=axis).statistic)
    return np.where(np.isnan(t), 0.0, t)


def _mid_p(x: np.ndarray, y: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.permutation_test(
            (x, y), _abs_bm, permutation_type="independent", n_resamples=np.inf, vectorized=True
        )
    null, observed = np.asarray(res.null_distribution), float(_abs_bm(x, y))
    tol = 1e-9 * observed
    return (
        np.count_nonzero(null > observed + tol) + 0.5 * np.count_nonzero(np.abs(null - observed) <= tol)
    ) / null.size


def test_a_significant_test_on_tied_data_is_not_overruled_by_the_spread_interval():
    reference = _mid_p(np.log(X), np.log(Y))
    assert reference < 0.05  # (0.020: the old rule raised it to 0.05, not significant)
    h = hodges_lehmann(np.log(X), np.log(Y), 0.95)
    assert h.spread and h.p_value == pytest.approx(reference, rel=1e-9)
    assert 0.0 < h.low < 1e-6 * h.estimate < h.estimate < h.high  # (0, high]: the open end at 0
    r = abstat.compare(X.tolist(), Y.tolist())
    assert r.significant and r.p_value == pytest.approx(reference, rel=1e-9)
    assert 0.0 < r.ci_pct[0] < 1e-6 and r.ci_pct[1] > r.delta_pct > 0.0
    # mirrored: the interval keeps the negative side
    m = hodges_lehmann(np.log(Y), np.log(X), 0.95)
    assert m.p_value == pytest.approx(reference, rel=1e-9) and m.low < m.estimate < m.high < 0.0


def test_on_grid_data_the_verdict_and_the_interval_always_agree():
    rng = np.random.default_rng(11)
    called = 0
    for _ in range(150):
        n1, n2 = (int(v) for v in rng.integers(6, 21, 2))
        x = 20.0 * np.round(rng.normal(440, 8, n1) / 20)
        y = 20.0 * np.round(rng.normal(448, 8, n2) / 20)
        if x.min() == x.max() and y.min() == y.max():
            continue
        h = hodges_lehmann(np.log(x), np.log(y), 0.95, seed=1)
        called += h.p_value < 0.05
        assert (h.p_value < 0.05) == (not h.low <= 0.0 <= h.high)
        assert h.low <= h.estimate <= h.high
    assert called >= 10  # (the check above is not vacuous)


def test_samples_on_different_grids_keep_the_interval_s_word():
    # grid 20 against grid 21, one latent N(440, 7): the raw values are not comparable step by step (441 is
    # always above 440), so a raw test calls almost every such pair; the spread interval decides there
    rng = np.random.default_rng(7)
    raw_calls = calls = 0
    for _ in range(40):
        x = 20.0 * np.round(rng.normal(440, 7, 50) / 20)
        y = 21.0 * np.round(rng.normal(440, 7, 50) / 21)
        h = hodges_lehmann(np.log(x), np.log(y), 0.95, seed=1)
        raw_calls += stats.brunnermunzel(x, y).pvalue < 0.05
        calls += h.p_value < 0.05
        assert (h.p_value < 0.05) == (not h.low <= 0.0 <= h.high)
    assert raw_calls >= 36 and calls <= 8  # (measured: 40 and 3 of 40; the new rule alone gave 40)
