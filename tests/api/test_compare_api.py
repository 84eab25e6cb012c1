"""abstat.compare(): estimates, verdicts, nested data, summaries, errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

import abstat
from abstat.comparison import compare, compare_many, decide
from abstat.errors import InputError, UsageError
from abstat.readers.summary import Summary
from support import paths

SEED_000 = paths.DATA / "seeds" / "000_3651202fe8db083c.txt"


def seed_blocks() -> list[tuple[tuple[int, float, float], tuple[int, float, float], float]]:
    """(baseline vitals, candidate vitals, printed difference) of every block in seed 000."""
    text = SEED_000.read_text()
    rows = re.findall(r"^\s*([x+])\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s*$", text, re.M)
    diffs = re.findall(r"^\s+(-?[\d.]+) \+/- [\d.]+\s*$", text, re.M)
    blocks = []
    for i in range(0, len(rows), 2):
        (_, n1, m1, s1), (_, n2, m2, s2) = rows[i], rows[i + 1]
        blocks.append(((int(n1), float(m1), float(s1)), (int(n2), float(m2), float(s2)), float(diffs[i // 2])))
    return blocks


def test_seed_000_has_eight_blocks():
    assert len(seed_blocks()) == 8


@pytest.mark.parametrize("block", seed_blocks())
def test_summary_path_is_welch_on_the_seed_vitals(block):
    (n1, m1, s1), (n2, m2, s2), printed = block
    c = compare(Summary(n1, m1, s1), Summary(n2, m2, s2))
    ref = stats.ttest_ind_from_stats(m2, s2, n2, m1, s1, n1, equal_var=False)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-6)
    assert c.delta_pct == pytest.approx(100 * (m2 / m1 - 1))
    assert m2 - m1 == pytest.approx(printed, abs=1e-3)  # the difference ministat printed
    assert c.center == "mean"
    assert c.method.startswith("Welch t on means from summary statistics")
    assert "summary-only" in [w.code for w in c.warnings]
    assert c.summaries[0].kind == "summary" and c.summaries[0].median is None
    # every seed claim is an improvement the Welch test confirms, except none
    assert c.verdict == ("faster" if ref.pvalue < 0.05 else "no difference proven")


def test_summary_cannot_drop_outliers():
    c = compare(Summary(10, 5.0, 1.0), [5.0, 5.1, 4.9, 5.2, 4.8, 5.0, 5.3], outliers="tukey")
    assert any("cannot be dropped" in w.message for w in c.warnings)


@pytest.mark.parametrize(
    "center,estimand,method", [("auto", "hl_ratio", "Hodges-Lehmann"), ("median", "median_ratio", "Bonett-Price")]
)
def test_flat_default_and_median_use_log_scale_and_relative_change(center, estimand, method):
    rng = np.random.default_rng(0)
    x = rng.normal(1000, 10, 100)
    y = x * 0.9  # exactly 10% faster
    c = compare(x, y, center=center)
    assert c.delta_pct == pytest.approx(-10.0, abs=1e-9)
    assert c.ci_pct[0] < -10.0 < c.ci_pct[1] or c.ci_pct[0] == pytest.approx(-10.0)
    assert c.significant and c.verdict == "faster"
    assert c.unit == "samples" and c.runs is None and c.center == center
    assert method in c.method and c.estimand == estimand


def _permutation_bm(x, y) -> float:
    """scipy's exact permutation p-value of |Brunner-Munzel's statistic| (every arrangement)."""
    import warnings

    def statistic(a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return abs(stats.brunnermunzel(a, b).statistic)

    return stats.permutation_test(
        (x, y), statistic, permutation_type="independent", n_resamples=np.inf, alternative="greater"
    ).pvalue


def test_small_samples_keep_the_hodges_lehmann_ratio_with_the_permutation_p_value():
    # Issue 34.1: fewer than 10 values no longer switch to Welch's t on logarithms (47-50% false calls at
    # 5 vs 500 with interrupts); the Brunner-Munzel statistic is referred to its permutation distribution.
    rng = np.random.default_rng(1)
    x = rng.normal(1000, 10, 8)
    y = rng.normal(990, 10, 6)
    c = compare(x, y)
    assert c.estimand == "hl_ratio" and "permutation" in c.method
    assert c.p_value == pytest.approx(_permutation_bm(np.log(x), np.log(y)), rel=1e-9)
    d = np.subtract.outer(np.log(y), np.log(x)).ravel()
    assert c.delta_pct == pytest.approx(100 * math.expm1(np.median(d)), rel=1e-9)  # brute force


def test_outliers_select_a_robust_estimator_and_are_counted():
    rng = np.random.default_rng(2)
    x = rng.normal(1000, 10, 100)
    y = rng.normal(995, 10, 100)
    x[:4] *= 1.6
    y[:3] *= 1.5
    c = compare(x, y)
    assert not c.method.startswith("Welch t on log")  # robust: far-out values skipped, trimmed or ranks
    assert c.summaries[0].outliers_severe == 4 and c.summaries[1].outliers_severe == 3
    assert c.summaries[0].dropped == 0
    dropped = compare(x, y, outliers="tukey")
    assert dropped.summaries[0].dropped >= 4 and dropped.n[0] == 100 - dropped.summaries[0].dropped
    assert any(n.code == "outliers-dropped" for n in dropped.notes)


def test_mean_center_is_welch_fieller_on_raw_values():
    rng = np.random.default_rng(3)
    x, y = rng.normal(100, 5, 30), rng.normal(97, 8, 40)
    c = compare(x, y, center="mean")
    ref = stats.ttest_ind(y, x, equal_var=False)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert c.delta_pct == pytest.approx(100 * (y.mean() / x.mean() - 1))


def test_confidence_as_percent_or_fraction():
    rng = np.random.default_rng(4)
    x, y = rng.normal(100, 5, 30), rng.normal(97, 5, 30)
    assert compare(x, y, confidence=99).ci_pct == compare(x, y, confidence=0.99).ci_pct
    wide, narrow = compare(x, y, confidence=0.99).ci_pct, compare(x, y, confidence=0.9).ci_pct
    assert wide[0] < narrow[0] and wide[1] > narrow[1]


@pytest.mark.parametrize(
    "delta,ci,significant,threshold,hib,expected",
    [
        (-5.0, (-6.0, -4.0), True, None, False, "faster"),
        (5.0, (4.0, 6.0), True, None, False, "slower"),
        (5.0, (4.0, 6.0), True, None, True, "faster"),
        (-5.0, (-6.0, -4.0), True, None, True, "slower"),
        (-0.5, (-2.0, 1.0), False, None, False, "no difference proven"),
        (0.1, (-0.4, 0.6), False, 1.0, False, "equivalent"),
        (-0.5, (-0.9, -0.1), True, 1.0, False, "equivalent"),
        (-0.5, (-1.2, -0.1), True, 1.0, False, "no difference proven"),
        (-1.5, (-2.0, -1.0), True, 1.0, False, "faster"),
        (0.2, (-1.5, 1.9), False, 1.0, False, "no difference proven"),
        (-3.0, (-6.0, -0.1), True, 0.0, False, "faster"),
    ],
)
def test_verdicts(delta, ci, significant, threshold, hib, expected):
    assert decide(delta, ci, significant, threshold, hib) == expected


def test_threshold_equivalence_end_to_end():
    rng = np.random.default_rng(5)
    x, y = rng.normal(1000, 5, 200), rng.normal(1000, 5, 200)
    c = compare(x, y, threshold=1.0)
    assert c.verdict == "equivalent" and -1 < c.ci_pct[0] and c.ci_pct[1] < 1


def _boots(rng, k, m, factor=1.0):
    return [rng.normal(1000 * (1 + rng.normal(0, 0.01)), 5, m) * factor for _ in range(k)]


def test_nested_runs_are_the_unit_and_said_so():
    rng = np.random.default_rng(6)
    c = compare(_boots(rng, 8, 30), _boots(rng, 8, 30, 0.97))
    assert c.unit == "runs" and c.runs == [8, 8] and c.n == [240, 240]
    assert "runs are the independent unit: 8 vs 8" in c.method
    s = c.summaries[0]
    assert len(s.runs) == 8 and 0.5 < s.between_run_share <= 1.0
    assert "runs-disagree" in [w.code for w in c.warnings]


def test_nested_runs_compare_run_medians_by_the_permutation_brunner_munzel_test():
    rng = np.random.default_rng(7)
    bx, by = _boots(rng, 6, 20), _boots(rng, 7, 25, 0.99)
    c = compare(bx, by)
    mx = np.log([np.median(r) for r in bx])
    my = np.log([np.median(r) for r in by])
    assert c.estimand == "hl_ratio" and c.p_value == pytest.approx(_permutation_bm(mx, my), rel=1e-9)


def test_nested_false_positive_rate_stays_nominal_where_naive_tests_fail():
    """8 boots x 30 samples, 1% boot-to-boot spread: identical systems."""
    rng = np.random.default_rng(8)
    reps = 300
    ours = naive = 0
    for _ in range(reps):
        bx, by = _boots(rng, 8, 30), _boots(rng, 8, 30)
        ours += compare(bx, by).significant
        naive += stats.ttest_ind(np.concatenate(bx), np.concatenate(by)).pvalue < 0.05
    assert ours / reps <= 0.09  # nominal 5%, Monte Carlo SE 1.3%
    assert naive / reps >= 0.5


def test_single_run_against_several_borrows_the_run_variance():
    rng = np.random.default_rng(9)
    c = compare([rng.normal(1000, 5, 30)], _boots(rng, 6, 30))
    assert c.unit == "runs" and c.runs == [1, 6]
    assert any(w.code == "too-few-samples" for w in c.warnings)


def test_too_few_samples_warns_with_the_number_needed():
    c = compare([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], center="median")
    texts = " ".join(w.message for w in c.warnings if w.code == "too-few-samples")
    assert "6 would" in texts and "at least 5 per variant" in texts


def test_quantized_data_warn_and_use_no_trimmed_means():
    rng = np.random.default_rng(10)
    x = np.round(rng.normal(440, 7, 98) / 20) * 20
    y = np.round(rng.normal(430, 7, 98) / 20) * 20
    c = compare(x, y)
    assert "ties" in [w.code for w in c.warnings]
    assert "Yuen" not in c.method


def test_compare_many_against_the_first():
    rng = np.random.default_rng(11)
    data = {"a": rng.normal(10, 1, 20), "b": rng.normal(9, 1, 20), "c": rng.normal(11, 1, 20)}
    comps = compare_many(data)
    assert [(c.baseline, c.candidate) for c in comps] == [("a", "b"), ("a", "c")]
    comps = compare_many(data, baseline="c")
    assert [(c.baseline, c.candidate) for c in comps] == [("c", "a"), ("c", "b")]
    with pytest.raises(UsageError):
        compare_many({"a": [1.0, 2.0]})


@pytest.mark.parametrize(
    "bad",
    [[], [1.0, float("nan"), 2.0], [1.0, float("inf")], [[1.0, 2.0], []], "12", [["a", "b"]]],
)
def test_bad_inputs_raise_clear_errors(bad):
    with pytest.raises((InputError, UsageError)):
        compare(bad, [1.0, 2.0, 3.0])


def test_bad_options():
    with pytest.raises(UsageError):
        compare([1.0, 2.0], [1.0, 2.0], center="mode")
    with pytest.raises(UsageError):
        compare([1.0, 2.0], [1.0, 2.0], outliers="zscore")
    with pytest.raises(UsageError):
        compare([1.0, 2.0], [1.0, 2.0], confidence=1.0)
    with pytest.raises(UsageError):
        compare([1.0, 2.0], [1.0, 2.0], threshold=-1)


def test_public_api_names():
    # the public compare is the library's with confidence a fraction only (issue 35): a percent is refused
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0, 6.0, 8.0]
    assert abstat.compare(x, y, confidence=0.9).ci_pct == compare(x, y, confidence=0.9).ci_pct
    with pytest.raises(abstat.AbstatError, match="0.95"):
        abstat.compare(x, y, confidence=95)
    with pytest.raises(UsageError, match="power"):
        abstat.plan({"a": x, "b": y}, detect=1, power=80)
    assert abstat.Summary is Summary
    c = abstat.compare([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0, 6.0, 7.0], seed=3)
    d = c.to_dict()
    for key in (
        "baseline",
        "candidate",
        "n",
        "center",
        "delta_pct",
        "ci_pct",
        "p_value",
        "significant",
        "verdict",
        "method",
        "warnings",
    ):
        assert getattr(c, key) is not None or d[key] is None
        assert key in d
    assert d["seed"] == 3


@pytest.mark.parametrize("center", ["median", "mean"])
def test_results_do_not_depend_on_the_unit(center):
    """Cycles or seconds: 1e-300-sized values give the same answer as 1-sized ones."""
    rng = np.random.default_rng(12)
    x, y = rng.normal(10, 1, 30), rng.normal(9.5, 1, 30)
    ref = compare(x, y, center=center)
    for scale in (1e-300, 1e-9, 1e9, 1e300):
        c = compare(x * scale, y * scale, center=center)
        assert c.p_value == pytest.approx(ref.p_value, rel=1e-9)
        assert c.delta_pct == pytest.approx(ref.delta_pct, rel=1e-9)
        assert c.ci_pct == pytest.approx(ref.ci_pct, rel=1e-9)


def test_zero_baseline_centre_has_no_relative_change():
    # Issue 9: a zero centre gives "cannot judge" with no bounds, never "slower".
    for center, estimand in (("median", "median_difference"), ("auto", "mean_ratio"), ("mean", "mean_ratio")):
        c = compare([-1.0, 0.0, 1.0, 0.0, 0.5, -0.5], [1.0, 2.0, 3.0, 2.0, 2.5, 1.5], center=center)
        assert math.isnan(c.delta_pct) and c.to_dict()["delta_pct"] is None
        assert c.ci_pct is None and c.to_dict()["ci_pct"] is None and c.to_dict()["p_value"] is None
        assert "cannot-judge" in [w.code for w in c.warnings]
        assert c.verdict == "cannot judge" and not c.significant
        assert c.estimand == estimand


def test_the_interval_is_for_the_ratio_of_the_medians():
    # Two modes whose weights swap: every value drops ~10%, yet the median
    # jumps from the low mode to the high one.  The estimand is the ratio of
    # the medians, so that is what the interval covers (issue 9: it used to
    # report the -10% of the bulk under the median's name).
    rng = np.random.default_rng(1)
    a = rng.permutation(np.r_[rng.normal(100, 1, 26), rng.normal(200, 2, 24)])
    b = rng.permutation(np.r_[rng.normal(90, 1, 24), rng.normal(180, 2, 26)])
    c = compare(a, b, center="median")
    moved = (float(np.median(b)) / float(np.median(a)) - 1.0) * 100.0
    assert c.delta_pct == pytest.approx(moved, rel=1e-12)
    assert c.ci_pct[0] <= moved <= c.ci_pct[1]
    assert c.estimand == "median_ratio" and c.to_dict()["estimand_label"] == "ratio of medians"
