"""The re-judgement of a printed claim, against statsmodels as the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.audit.judge import judge


def _sample(n: int, mean: float, sd: float, seed: int) -> np.ndarray:
    """n values with exactly this mean and (n-1) standard deviation."""
    raw = np.random.default_rng(seed).normal(size=n)
    raw = (raw - raw.mean()) / raw.std(ddof=1)
    return mean + sd * raw


@pytest.mark.parametrize(
    "nb, ab, sb, nc, ac, sc, confidence",
    [
        (98, 438.97959, 6.6564899, 98, 370.81633, 12.57337, 95.0),
        (100, 2288.84, 196.18218, 99, 2232.4646, 75.867677, 95.0),
        (5, 100.0, 2.0, 40, 98.0, 9.0, 90.0),
        (12, 10.0, 1.0, 7, 10.5, 0.5, 99.0),
    ],
)
def test_welch_matches_statsmodels(nb, ab, sb, nc, ac, sc, confidence) -> None:
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    base, cand = _sample(nb, ab, sb, 1), _sample(nc, ac, sc, 2)
    oracle = CompareMeans(DescrStatsW(cand), DescrStatsW(base))
    t, p, df = oracle.ttest_ind(usevar="unequal")
    low, high = oracle.tconfint_diff(alpha=1 - confidence / 100, usevar="unequal")
    result = judge(nb, ab, sb, nc, ac, sc, confidence=confidence)
    assert result.welch["t"] == pytest.approx(t, rel=1e-9)
    assert result.welch["p"] == pytest.approx(p, rel=1e-6)
    assert result.welch["df"] == pytest.approx(df, rel=1e-9)
    assert result.welch["ci"] == pytest.approx([low, high], rel=1e-9)
    t_pooled, p_pooled, _ = oracle.ttest_ind(usevar="pooled")
    assert result.pooled["t"] == pytest.approx(t_pooled, rel=1e-9)
    assert result.pooled["p"] == pytest.approx(p_pooled, rel=1e-6)


def test_pooled_t_misleads_when_the_small_sample_has_the_large_spread() -> None:
    # 5 noisy samples against 60 quiet ones: the pooled s is dominated by the
    # quiet side and the pooled standard error is far too small.
    result = judge(60, 100.0, 1.0, 5, 103.0, 6.0, confidence=95.0, printed_difference=True)
    codes = {f.code for f in result.findings}
    assert "pooled_misleads" in codes
    assert result.se_ratio < 0.5
    # The pooled t calls it significant; Welch does not.
    assert result.pooled["p"] < 0.05 < result.welch["p"]
    assert "welch_disagrees" in codes


def test_equal_sizes_keep_the_pooled_t_honest() -> None:
    result = judge(50, 100.0, 1.0, 50, 101.0, 3.0, printed_difference=True)
    codes = {f.code for f in result.findings}
    assert "unequal_spread" in codes and "pooled_misleads" not in codes
    assert result.se_ratio == pytest.approx(1.0)


def test_detectable_change_and_samples_match_statsmodels() -> None:
    from statsmodels.stats.power import TTestIndPower

    sd, n, mean = 4.0, 30, 200.0
    result = judge(n, mean, sd, n, mean * 0.99, sd, confidence=95.0)
    effect = TTestIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
    assert result.detectable_change == pytest.approx(effect * sd, rel=1e-5)  # statsmodels solves to ~1e-6
    assert result.detectable_change_pct == pytest.approx(effect * sd / mean * 100, rel=1e-5)
    needed = TTestIndPower().solve_power(effect_size=mean * 0.01 / sd, nobs1=None, alpha=0.05, power=0.8, ratio=1.0)
    assert result.samples_per_side == math.ceil(needed)


def test_no_difference_proven_is_called_underpowered() -> None:
    result = judge(5, 100.0, 5.0, 5, 101.0, 5.0, printed_difference=False)
    (finding,) = [f for f in result.findings if f.code == "underpowered"]
    assert "rules out changes of about" in finding.message
    assert result.detectable_change_pct > 8


@pytest.mark.parametrize(
    "threshold, verdict",
    [(20.0, "inside"), (1.0, "outside"), (10.0, "undecided")],
)
def test_threshold(threshold: float, verdict: str) -> None:
    # -10% with a 95% interval of about -12.4% .. -7.6%
    result = judge(20, 100.0, 5.0, 20, 90.0, 5.0, threshold_pct=threshold)
    assert result.threshold_verdict == verdict
    assert any(f.code == f"threshold_{verdict}" for f in result.findings)


def test_constant_samples_have_nothing_to_judge() -> None:
    result = judge(5, 10.0, 0.0, 5, 11.0, 0.0)
    assert [f.code for f in result.findings] == ["no_spread"]
