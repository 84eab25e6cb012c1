"""Edge cases found by ``benchmarks/edge_calibration.py``: discrete medians,
relative differences of centres near zero, medians of fewer than 5 values.

Each test failed on the code before the fix and is checked against an
independent computation (scipy, brute-force root finding, or simulation with
a known population value and a fixed seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from abstat.comparison import compare


def _independent_median_se(values: np.ndarray) -> float:
    """McKean-Schrader from scipy's binomial and normal quantile."""
    s = np.sort(values)
    n = s.size
    c = max(1, round(n / 2 - math.sqrt(n)))
    alpha_star = 2 * stats.binom.cdf(c - 1, n, 0.5)
    return float(s[n - c] - s[c - 1]) / (2 * stats.norm.ppf(1 - alpha_star / 2))


def _fieller_by_root_finding(m1: float, se1: float, m2: float, se2: float, q: float) -> tuple[float, float]:
    """The ratios r where (m2 - r m1)^2 = q^2 (se2^2 + r^2 se1^2), found by
    brentq on either side of m2 / m1."""

    def pivot(r: float) -> float:
        return (m2 - r * m1) ** 2 - q * q * (se2 * se2 + r * r * se1 * se1)

    ratio = m2 / m1
    return (
        optimize.brentq(pivot, ratio - 1e3, ratio, xtol=1e-14),
        optimize.brentq(pivot, ratio, ratio + 1e3, xtol=1e-14),
    )


def test_counts_with_ties_across_both_samples_keep_the_false_positive_rate():
    # Poisson(4) against itself: sample medians move in whole counts, and the
    # order statistics around them (3 and 4, or 4 and 5) suggested a standard
    # error of a quarter count: 9-11% false positives at 95%.
    rng = np.random.default_rng(11)
    significant = sum(
        compare(rng.poisson(4, 50).astype(float), rng.poisson(4, 50).astype(float), center="median").significant
        for _ in range(300)
    )
    assert significant / 300 <= 0.05


def test_a_median_on_a_grid_boundary_is_not_a_change():
    # 20-cycle grid, N(450, 7): half the values 440, half 460.  Identical
    # populations; medians 440 vs 460 were "significant" in 37% of draws.
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(200):
        x = 20 * np.round(rng.normal(450, 7, 50) / 20)
        y = 20 * np.round(rng.normal(450, 7, 50) / 20)
        c = compare(x, y, center="median")
        hits += c.significant
        assert c.ci_pct[0] <= 0.0 <= c.ci_pct[1]
    assert hits == 0
    # the fixed case: medians 440 and 460, one step apart, and the warning says why
    x = np.array([440.0] * 26 + [460.0] * 24)
    y = np.array([440.0] * 24 + [460.0] * 26)
    c = compare(x, y, center="median")
    assert not c.significant
    assert any(w.code == "median-resolution" for w in c.warnings)


def test_continuous_data_are_untouched_by_the_step_floor():
    # the floor is half the smallest gap near the median: negligible on
    # continuous data, so the interval is Bonett-Price's exactly
    rng = np.random.default_rng(13)
    x, y = rng.normal(1000, 10, 60), rng.normal(1010, 10, 60)
    c = compare(x, y, center="median")
    se = math.hypot(_independent_median_se(np.log(x)), _independent_median_se(np.log(y)))
    d = math.log(np.median(y) / np.median(x))
    z = stats.norm.ppf(0.975)
    assert c.ci_pct == pytest.approx([100 * math.expm1(d - z * se), 100 * math.expm1(d + z * se)], rel=1e-9)


def test_difference_of_medians_interval_is_fiellers():
    # Mixed-sign data: the change relative to the baseline median must count
    # the baseline median's own uncertainty (it divided by the sample median).
    rng = np.random.default_rng(14)
    x, y = rng.normal(1.0, 1.0, 50), rng.normal(1.5, 1.0, 50)
    c = compare(x, y, center="median")
    assert c.estimand == "median_difference"
    mx, my = float(np.median(x)), float(np.median(y))
    low, high = _fieller_by_root_finding(
        mx, _independent_median_se(x), my, _independent_median_se(y), stats.norm.ppf(0.975)
    )
    assert c.ci_pct == pytest.approx([100 * (low - 1), 100 * (high - 1)], rel=1e-7)
    assert c.delta_pct == pytest.approx(100 * (my - mx) / mx, rel=1e-12)


def test_difference_of_medians_covers_its_estimand():
    # N(1, 1) vs N(1.5, 1): the true change of the median is +50%; dividing by
    # the sample median covered it 87-90% of the time at 95%.
    rng = np.random.default_rng(15)
    reps, covered = 400, 0
    for _ in range(reps):
        c = compare(rng.normal(1.0, 1.0, 50), rng.normal(1.5, 1.0, 50), center="median")
        covered += c.verdict != "cannot judge" and c.ci_pct[0] <= 50.0 <= c.ci_pct[1]
    assert covered / reps >= 0.93


def test_a_baseline_median_near_zero_cannot_be_judged_relative_to():
    # the baseline median's own interval holds 0: no relative change can be bounded
    x = np.array([-1.0, -0.5, -0.2, 0.1, 0.3, 0.6, 1.2, 2.0, -0.4, 0.2])
    y = x + 1.0
    c = compare(x, y, center="median")
    assert c.verdict == "cannot judge"
    assert any(w.code == "cannot-judge" and "not clearly away from 0" in w.message for w in c.warnings)


def test_mixed_sign_run_centres_use_fieller_with_welch_df():
    rng = np.random.default_rng(16)
    x = [rng.normal(1.0 + rng.normal(0, 1), 0.5, 20) for _ in range(12)]
    y = [rng.normal(1.5 + rng.normal(0, 1), 0.5, 20) for _ in range(12)]
    x[0] += -0.3 - x[0].mean()  # one run centre below 0: the estimand is a difference
    c = compare(x, y, center="mean")
    assert c.estimand == "mean_ratio"  # the ratio of the means of the run means (Fieller), whatever their sign
    cx, cy = np.array([r.mean() for r in x]), np.array([r.mean() for r in y])
    welch = stats.ttest_ind(cy, cx, equal_var=False)
    assert c.p_value == pytest.approx(welch.pvalue, rel=1e-8)
    se1, se2 = cx.std(ddof=1) / math.sqrt(12), cy.std(ddof=1) / math.sqrt(12)
    low, high = _fieller_by_root_finding(cx.mean(), se1, cy.mean(), se2, stats.t.ppf(0.975, welch.df))
    assert c.ci_pct == pytest.approx([100 * (low - 1), 100 * (high - 1)], rel=1e-7)


def test_medians_of_three_values_use_a_t_quantile():
    # 3 vs 30: the normal quantile covered 87-91% at 95%
    rng = np.random.default_rng(17)
    x, y = rng.normal(1000, 30, 3), rng.normal(1010, 10, 30)
    c = compare(x, y, center="median")
    a1, a2 = _independent_median_se(np.log(x)) ** 2, _independent_median_se(np.log(y)) ** 2
    df = (a1 + a2) ** 2 / (a1 * a1 / 2 + a2 * a2 / 29)
    d = math.log(np.median(y) / np.median(x))
    assert c.p_value == pytest.approx(2 * stats.t.sf(abs(d) / math.sqrt(a1 + a2), df), rel=1e-7)
    covered = 0
    for _ in range(400):
        c = compare(rng.normal(1000, 30, 3), rng.normal(1010, 10, 30), center="median")
        covered += c.ci_pct[0] <= 1.0 <= c.ci_pct[1]
    assert covered / 400 >= 0.93


def test_welch_with_three_against_many_warns():
    rng = np.random.default_rng(18)
    c = compare(rng.normal(1000, 10, 3), rng.normal(1000, 10, 30), center="mean")
    assert any(w.code == "too-few-samples" and "liberal" in w.message for w in c.warnings)
    c = compare(rng.normal(1000, 10, 3), rng.normal(1000, 10, 3), center="mean")
    assert not any("liberal" in w.message for w in c.warnings)


def test_audit_relative_interval_is_fiellers():
    # abstat audit printed the Welch interval of the difference divided by the
    # printed baseline mean: 89-93% coverage of the true ratio of means for
    # 5-10 runs with a 30-50% spread.
    from abstat.audit.judge import judge

    nb, ab, sb, nc, ac, sc = 10, 100.0, 30.0, 10, 130.0, 30.0
    result = judge(nb, ab, sb, nc, ac, sc)
    vb, vc = sb * sb / nb, sc * sc / nc
    df = (vb + vc) ** 2 / (vb * vb / (nb - 1) + vc * vc / (nc - 1))
    low, high = _fieller_by_root_finding(ab, math.sqrt(vb), ac, math.sqrt(vc), stats.t.ppf(0.975, df))
    assert result.welch["ci_pct"] == pytest.approx([100 * (low - 1), 100 * (high - 1)], rel=1e-7)
    rng = np.random.default_rng(19)
    covered = 0
    for _ in range(300):
        x, y = rng.normal(100, 30, 10), rng.normal(130, 30, 10)
        ci = judge(10, x.mean(), x.std(ddof=1), 10, y.mean(), y.std(ddof=1)).welch["ci_pct"]
        covered += bool(ci) and ci[0] <= 30.0 <= ci[1]
    assert covered / 300 >= 0.93


def test_medians_near_the_largest_double_are_finite():
    import abstat

    before = [1.7e308, 1.6e308, 1.65e308, 1.62e308, 1.69e308, 1.61e308]
    after = [1.5e308, 1.4e308, 1.45e308, 1.42e308, 1.49e308, 1.41e308]
    result = abstat.compare(before, after)
    baseline, candidate = result.summaries
    assert baseline.median == 1.635e308 and candidate.median == 1.435e308
