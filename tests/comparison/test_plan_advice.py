"""abstat plan: coherent advice (issue 10), JSON without Infinity and finite
means near the largest double (issue 15)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from abstat.stats.power import plan_nested, power_two_sample
from support.cli import run_abstat as _abstat


def test_no_run_to_run_variance_gives_few_long_runs_that_reach_the_power():
    within, delta = 1.0, 0.1
    flat = plan_nested(within, 0.0, delta, cost_ratio=10.0, pilot_run_length=30)
    assert flat.runs_per_variant is not None and 3 <= flat.runs_per_variant <= 60
    assert flat.samples_per_run >= 30
    run_sd = math.sqrt(within / flat.samples_per_run)
    k = flat.runs_per_variant
    # statsmodels-style check with scipy's noncentral t: the allocation reaches 80%.
    assert power_two_sample(delta, run_sd, k, run_sd, k) >= 0.8
    nc = delta / (run_sd * math.sqrt(2 / k))
    crit = stats.t.isf(0.025, 2 * k - 2)
    assert stats.nct.sf(crit, 2 * k - 2, nc) >= 0.79
    assert "below" not in " ".join(flat.notes) and "few long runs" in " ".join(flat.notes)


def test_plan_json_has_no_infinity_and_finite_means(tmp_path):
    small = tmp_path / "small.txt"
    small.write_text("1\n2\n3\n")
    big = tmp_path / "big.txt"
    values = [1.7e308, 1.75e308, 1.78e308]
    big.write_text("".join(f"{v!r}\n" for v in values))
    done = _abstat("plan", "--format", "json", str(small), str(big))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name)))
    mean = doc["variants"][1]["mean"]
    assert mean == float(np.mean(np.array(values) / 4) * 4)


@pytest.mark.parametrize(
    "center,label", [(None, "Hodges-Lehmann ratio"), ("median", "ratio of medians"), ("mean", "ratio of means")]
)
def test_plan_says_which_estimand_it_plans_for(tmp_path, center, label):
    # Issue 20: plan sizes for the estimand compare would use on the same data, and says which.
    rng = np.random.default_rng(1)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"{v}\n" for v in rng.normal(100, 1, 20)))
    b.write_text("".join(f"{v}\n" for v in rng.normal(100.5, 1, 20)))
    extra = ["--center", center] if center else []
    done = _abstat("plan", str(a), str(b), *extra)
    assert done.returncode == 0 and label in done.stdout
    planned = json.loads(_abstat("plan", "--format", "json", str(a), str(b), *extra).stdout)
    compared = json.loads(_abstat("compare", "--format", "json", str(a), str(b), *extra).stdout)
    assert planned["estimand"] == compared["comparisons"][0]["estimand"]


def test_compare_and_plan_agree_on_five_runs_of_quantized_data():
    # Issue 9.3: 5 vs 5 runs gave "-13.64% [-13.64%, -13.64%] p<1e-16" from
    # compare while plan said the power was 5% on the same files.
    from abstat.comparison import compare
    from abstat.comparison.planning import plan

    rng = np.random.default_rng(2)
    before = [list(20.0 * np.round(rng.normal(440, 9, 30) / 20)) for _ in range(5)]
    after = [list(20.0 * np.round(rng.normal(437, 9, 30) / 20)) for _ in range(5)]
    medians = compare(before, after)
    means = compare(before, after, center="mean")
    pilot = plan({"before": before, "after": after}, detect=1.0)
    power_now = pilot.variants[1].current_power
    assert medians.verdict == "cannot judge" or medians.ci_pct[0] < medians.ci_pct[1]
    # plan's power for a 1% change and compare's interval for the means tell
    # one story: power passes 50% where the change passes the half-width.
    half_width = (means.ci_pct[1] - means.ci_pct[0]) / 2
    assert (half_width < 1.0) == (power_now > 0.5)
    assert abs(half_width - 1.0) > 0.1  # not a coin toss at the boundary
