"""Sample sizes for ``abstat plan`` (statsmodels as the oracle) and the
Kalibera & Jones allocation of runs x samples per run."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from abstat.readers.summary import Summary
from abstat.comparison import planning as pilot
from abstat.stats import power
from support.cli import run_abstat


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
@pytest.mark.parametrize("effect", [0.05, 0.2, 0.5, 0.8, 1.5, 3.0])
@pytest.mark.parametrize("alpha, target", [(0.05, 0.8), (0.01, 0.9), (0.2, 0.5)])
def test_samples_per_side_matches_statsmodels(effect: float, alpha: float, target: float) -> None:
    from statsmodels.stats.power import TTestIndPower

    oracle = TTestIndPower()
    expected = oracle.solve_power(effect_size=effect, nobs1=None, alpha=alpha, power=target, ratio=1.0)
    got = power.samples_per_side(effect * 3.0, 3.0, alpha=alpha, power=target)
    if math.isnan(expected):  # statsmodels' solver gives up below 2 samples
        assert got == 2 and oracle.power(effect, 2, alpha, ratio=1.0) >= target
    else:
        assert got == max(2, math.ceil(expected - 1e-9))


@pytest.mark.parametrize("n1, n2", [(5, 5), (10, 30), (98, 96), (400, 7)])
def test_power_and_detectable_effect_match_statsmodels(n1: int, n2: int) -> None:
    from statsmodels.stats.power import TTestIndPower

    oracle = TTestIndPower()
    for effect in (0.1, 0.4, 1.0):
        assert power.power_two_sample(effect, 1.0, n1, 1.0, n2, alpha=0.05) == pytest.approx(
            oracle.power(effect, n1, 0.05, ratio=n2 / n1), rel=1e-9
        )
    expected = oracle.solve_power(effect_size=None, nobs1=n1, alpha=0.05, power=0.8, ratio=n2 / n1)
    assert power.detectable_effect_size(n1, n2) == pytest.approx(expected, rel=1e-5)


def test_unequal_spreads_use_welch_and_need_more_samples() -> None:
    equal = power.samples_per_side(1.0, 2.0, 2.0)
    unequal = power.samples_per_side(1.0, 1.0, math.sqrt(7.0))  # same total variance 8
    assert unequal >= equal
    assert unequal - equal <= 2  # Welch's df cost only


@pytest.mark.parametrize(
    "within, between, ratio", [(4.0, 1.0, 10.0), (1.0, 1.0, 1.0), (25.0, 0.5, 100.0), (1.0, 4.0, 3.0)]
)
def test_kalibera_jones_samples_per_run(within: float, between: float, ratio: float) -> None:
    r = power.optimal_samples_per_run(within, between, ratio)
    assert r == max(1, math.ceil(math.sqrt(ratio * within / between)))
    # Brute force: variance of the mean x cost of the experiment, per run
    # (between + within / r) * (ratio + r), is minimal next to r.
    costs = {k: (between + within / k) * (ratio + k) for k in range(1, 2000)}
    best = min(costs, key=costs.get)
    assert abs(best - r) <= 1
    assert costs[r] <= costs[best] * 1.02


def test_no_between_run_variance_means_one_long_run() -> None:
    assert power.optimal_samples_per_run(4.0, 0.0, 10.0) is None
    assert power.optimal_samples_per_run(4.0, -0.3, 10.0) is None


def _nested(
    rng: np.random.Generator, runs: int, per_run: int, mean: float, between: float, within: float
) -> list[list[float]]:
    offsets = rng.normal(0.0, math.sqrt(between), size=runs)
    return [list(mean + o + rng.normal(0.0, math.sqrt(within), size=per_run)) for o in offsets]


def test_nested_plan_uses_variance_components_and_statsmodels_runs() -> None:
    from statsmodels.stats.power import TTestIndPower

    rng = np.random.default_rng(11)
    data = {
        "before": _nested(rng, 40, 20, 100.0, between=1.0, within=4.0),
        "after": _nested(rng, 40, 20, 99.0, between=1.0, within=4.0),
    }
    # --center mean: Welch's t on the run means, as compare --center mean (the default sizes the run medians)
    result = pilot.plan(data, detect=1.0, cost_ratio=10.0, center="mean")
    assert result.method == "nested"
    assert result.within == pytest.approx(4.0, rel=0.15)
    assert result.between == pytest.approx(1.0, rel=0.4)
    (allocation,) = result.allocations
    assert allocation.samples_per_run == math.ceil(math.sqrt(10.0 * result.within / result.between))
    run_sd = math.sqrt(result.between + result.within / allocation.samples_per_run)
    effect = result.detect / run_sd
    expected = TTestIndPower().solve_power(effect_size=effect, nobs1=None, alpha=0.05, power=0.8, ratio=1.0)
    assert allocation.runs_per_variant == max(2, math.ceil(expected))
    assert allocation.samples_per_variant == allocation.runs_per_variant * allocation.samples_per_run
    assert allocation.relative_cost == allocation.runs_per_variant * (10.0 + allocation.samples_per_run)


def test_nested_allocation_reaches_the_power_in_simulation() -> None:
    """Simulate experiments with the allocation: the t test on run means
    detects the planned change in about 80 % of them."""
    from scipy import stats

    within, between, delta, ratio = 4.0, 1.0, 1.0, 10.0
    r = power.optimal_samples_per_run(within, between, ratio)
    run_sd = math.sqrt(between + within / r)
    k = power.samples_per_side(delta, run_sd, run_sd)
    rng = np.random.default_rng(5)
    sims = 3000

    def run_means(shift: float) -> np.ndarray:
        offsets = rng.normal(0.0, math.sqrt(between), size=(sims, k, 1))
        samples = shift + offsets + rng.normal(0.0, math.sqrt(within), size=(sims, k, r))
        return samples.mean(axis=2)

    p = stats.ttest_ind(run_means(0.0), run_means(delta), axis=1).pvalue
    rate = float(np.mean(p < 0.05))
    assert 0.77 <= rate <= 0.85


def test_flat_plan_from_summaries() -> None:
    from statsmodels.stats.power import TTestIndPower

    result = pilot.plan(
        {"before": Summary(98, 438.97959, 6.6564899), "after": Summary(98, 370.81633, 12.57337)},
        detect=1.0,
    )
    assert result.method == "flat"
    assert result.detect == pytest.approx(4.3897959)
    (pair,) = result.pairs
    # Welch with unequal spreads; close to the pooled answer for equal n.
    sd = math.sqrt((6.6564899**2 + 12.57337**2) / 2)
    pooled = TTestIndPower().solve_power(effect_size=4.3897959 / sd, alpha=0.05, power=0.8, ratio=1.0)
    assert abs(pair["samples_per_variant"] - math.ceil(pooled)) <= 1
    assert result.variants[1].current_power > 0.8  # 98 per side was enough for 1%


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_abstat("plan", *args)


def test_plan_cli_text_and_json(tmp_path: Path) -> None:
    result = _cli("before=98:438.97959:6.6564899", "after=98:370.81633:12.57337", "--detect", "1%")
    assert result.returncode == 0, result.stderr
    assert "samples per variant (after vs before): 84" in result.stdout
    rng = np.random.default_rng(2)
    for variant, mean in (("a", 100.0), ("b", 99.0)):
        for index, run in enumerate(_nested(rng, 6, 15, mean, 1.0, 4.0)):
            (tmp_path / f"{variant}-{index}.txt").write_text("\n".join(f"{x:.6f}" for x in run) + "\n")
    result = _cli(
        f"a={tmp_path}/a-*.txt",
        f"b={tmp_path}/b-*.txt",
        "--detect",
        "0.5%",
        "--format",
        "json",
        "--run-cost",
        "30",
        "--sample-cost",
        "1",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["method"] == "nested"
    (allocation,) = data["allocations"]
    assert allocation["cost_ratio"] == 30.0 and allocation["assumed"] is False
    assert allocation["samples_per_run"] >= 1 and allocation["runs_per_variant"] >= 2
    assert [v["runs"] for v in data["variants"]] == [6, 6]


@pytest.mark.parametrize(
    "args, message",
    [
        (["x=5:1:1", "--detect", "zero"], "--detect"),
        (["x=5:1:1", "--power", "1.5"], "--power"),
        (["x=5:1:1", "--run-cost", "3"], "go together"),
        (["/nonexistent/pilot.txt"], "/nonexistent/pilot.txt"),
    ],
)
def test_plan_cli_errors(args: list[str], message: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr


def test_plan_names_each_comparisons_estimand_when_they_differ() -> None:
    # signed values allow only the ratio of means; positive ones get the Hodges-Lehmann ratio: each
    # pair is sized for the estimand compare itself uses on that pair, and the note names both
    from abstat.comparison import compare

    rng = np.random.default_rng(7)
    base, fast, signed = (
        list(100 + rng.exponential(5, 40)),
        list(100 + rng.exponential(5, 40)),
        list(rng.normal(0, 50, 40)),
    )
    result = pilot.plan({"base": base, "fast": fast, "signed": signed}, detect=5.0)
    estimands = [p["estimand"] for p in result.pairs]
    assert estimands == [compare(base, fast).estimand, compare(base, signed).estimand]
    assert estimands[0] != estimands[1]
    assert result.notes == [
        f"the comparisons need different sizes and so different estimands: fast: {estimands[0]}, signed: {estimands[1]}"
    ]


def test_plan_of_one_summary_assumes_a_candidate_with_the_same_spread() -> None:
    result = pilot.plan({"a": Summary(20, 200.0, 8.0)}, detect=2.0)
    (pair,) = result.pairs
    assert pair["candidate"] == "a (same spread)"
    assert pair["samples_per_variant"] == power.samples_per_side(4.0, 8.0, 8.0, alpha=0.05, power=0.8)
    assert result.notes == ["one variant given: the other is assumed to have the same spread"]


def test_runs_of_one_sample_have_no_variance_components_and_fall_back_to_the_flat_plan() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 2, 12), rng.normal(101, 3, 12)
    result = pilot.plan({"a": [[v] for v in a], "b": [[v] for v in b]}, detect=1.0)
    assert result.method == "flat" and result.allocations == [] and result.within is None
    assert "a: too few runs or samples per run for variance components" in result.notes
    assert result.samples_per_variant == power.samples_per_side(
        abs(a.mean()) * 0.01, a.std(ddof=1), b.std(ddof=1), alpha=0.05, power=0.8
    )
