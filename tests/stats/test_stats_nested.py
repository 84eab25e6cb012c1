"""Variance components against statsmodels; runs as the unit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from abstat.stats.nested import run_centres, variance_components


def _runs(seed: int, k: int, m: int, between: float, within: float) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(100.0 + rng.normal(0, between), within, m) for _ in range(k)]


@pytest.mark.parametrize("seed", range(4))
def test_balanced_components_match_statsmodels_reml(seed):
    import pandas as pd
    import statsmodels.formula.api as smf

    runs = _runs(seed, 8, 20, 2.0, 1.0)
    vc = variance_components(runs)
    frame = pd.DataFrame({"y": np.concatenate(runs), "g": np.repeat(np.arange(len(runs)), [r.size for r in runs])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ 1", frame, groups=frame["g"]).fit(reml=True)
    # balanced design, positive estimate: ANOVA = REML
    assert vc.between == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-4)
    assert vc.within == pytest.approx(float(fit.scale), rel=1e-4)


def test_f_test_matches_scipy_anova():
    runs = _runs(1, 5, [10, 12, 9, 15, 11][0], 1.0, 1.0)
    runs = [r[:n] for r, n in zip(runs, [10, 8, 9, 7, 10])]
    vc = variance_components(runs)
    ref = stats.f_oneway(*runs)
    assert vc.f_statistic == pytest.approx(ref.statistic)
    assert vc.p_value == pytest.approx(ref.pvalue)


def test_share_is_zero_without_run_effect_and_high_with_it():
    assert variance_components(_runs(3, 10, 50, 0.0, 1.0)).share_between < 0.05
    assert variance_components(_runs(3, 10, 50, 5.0, 1.0)).share_between > 0.8


def test_run_centres():
    runs = [np.array([1.0, 2.0, 10.0]), np.array([3.0, 4.0])]
    assert list(run_centres(runs, "median")) == [2.0, 3.5]
    assert list(run_centres(runs, "mean")) == [pytest.approx(13 / 3), 3.5]


def test_not_estimable():
    assert variance_components([np.array([1.0, 2.0])]) is None
    assert variance_components([np.array([1.0]), np.array([2.0])]) is None
