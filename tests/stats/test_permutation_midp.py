"""The studentized permutation Brunner-Munzel test's mid-p-value on tied data (wave 10), against scipy's
own permutation distribution of scipy's Brunner-Munzel statistic, enumerated."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from abstat.stats.permutation import bm_permutation


def _abs_bm(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = np.abs(stats.brunnermunzel(a, b, axis=axis).statistic)
    # no variance: scipy gives inf (separated) or nan (p = 1/2, 0/0), abstat inf and 0
    return np.where(np.isnan(t), 0.0, t)


def _enumerated(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.permutation_test(
            (x, y), _abs_bm, permutation_type="independent", n_resamples=np.inf, vectorized=True
        )
    return float(_abs_bm(x, y)), np.asarray(res.null_distribution)


def test_tied_data_get_the_mid_p_value_of_the_enumerated_arrangements():
    # 7 against 6 values on 3 grid levels: C(13, 6) = 1716 arrangements, few distinct |T|
    x = np.array([420.0, 440, 440, 440, 440, 460, 460])
    y = np.array([440.0, 440, 460, 460, 460, 480])
    observed, null = _enumerated(x, y)
    tol = 1e-9 * observed
    above = np.count_nonzero(null > observed + tol)
    at = np.count_nonzero(np.abs(null - observed) <= tol)
    assert at > 1  # an atom at the observed value: mid-p and p differ
    test = bm_permutation(x, y, 0.05)
    assert test.exact and test.statistic == pytest.approx(observed, rel=1e-9)
    assert test.p_value == pytest.approx((above + 0.5 * at) / null.size, rel=1e-9)


def test_untied_data_keep_the_ordinary_permutation_p_value():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.0, 1.0, 7), rng.normal(0.8, 1.0, 6)
    observed, null = _enumerated(x, y)
    test = bm_permutation(x, y, 0.05)
    assert test.p_value == pytest.approx(np.count_nonzero(null >= observed * (1 - 1e-9)) / null.size, rel=1e-9)
