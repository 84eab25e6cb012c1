"""``abstat run --until-decided``: a group-sequential design that stops once every candidate is settled.

The design's levels are checked against their definition (they add up to alpha); its error rates are
measured by simulation through :meth:`SequentialDesign.decide`, the code ``run`` calls, and end to end a 3x
difference stops long before the maximum.  benchmarks/sequential.py measures the same at 1000 trials.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from support import paths
from support.cli import run_abstat

from abstat.comparison.core import compare
from abstat.comparison.sequential import SequentialDesign
from abstat.engine.spec import ExperimentSpec, Sequential, SpecError, Variant, decode

ROOT = str(paths.ROOT)


_abstat = functools.partial(run_abstat, timeout=600, extra_env={"NO_COLOR": "1"})


def test_the_looks_spend_exactly_alpha():
    design = SequentialDesign(5, 100, 2.0, alpha=0.05)
    looks = design.looks()
    assert looks[0] == 5 and looks[-1] == 100 and looks == sorted(set(looks))
    assert sum(design.level(n) for n in looks) == pytest.approx(0.05)
    assert sum(design.level(n, candidates=3) for n in looks) == pytest.approx(0.05 / 3)
    assert design.level(100) > 0.6 * 0.05  # the last look keeps most of it
    assert SequentialDesign(5, 5).looks() == [5]
    with pytest.raises(ValueError):
        SequentialDesign(1, 10)
    with pytest.raises(ValueError):
        design.level(6)


def _experiment(design, base, cand):
    state = None
    for runs in design.looks():
        state = design.decide({"a": base[:runs], "b": cand[:runs]}, "a", runs, state)
        if state.stop_reason is not None:
            return state, runs
    raise AssertionError("the last look always ends it")


def test_a_3x_difference_stops_within_20_runs_and_says_why():
    design = SequentialDesign(5, 100, 2.0)
    rng = np.random.default_rng(4)
    for _ in range(20):
        base = rng.normal(100, 5, 100)
        state, runs = _experiment(design, base, 3 * rng.normal(100, 5, 100))
        assert runs <= 20 and state.settled["b"].verdict == "slower"
        assert state.stop_reason.startswith(f"stopped early at {runs} of at most 100 runs per variant: b slower")


def test_aa_experiments_rarely_call_a_difference_and_often_equivalence():
    # above 50 values per side the comparison's reference is Student's t: 300 experiments in a second (at 5 to
    # 50 values the permutation reference costs about 0.6 s per experiment: benchmarks/sequential.py)
    design = SequentialDesign(55, 160, 2.0)
    rng = np.random.default_rng(7)
    trials, differences, equivalent, fixed_equivalent = 300, 0, 0, 0
    for _ in range(trials):
        base = 100 * rng.lognormal(0, 0.03, 160)
        cand = 100 * rng.lognormal(0, 0.03, 160)
        state, _ = _experiment(design, base, cand)
        verdict = state.settled["b"].verdict if "b" in state.settled else "undecided"
        differences += verdict not in ("equivalent", "undecided")
        equivalent += verdict == "equivalent"
        fixed = compare(base, cand, confidence=0.90).ci_pct
        fixed_equivalent += fixed[0] > -2 and fixed[1] < 2
    assert differences / trials <= 0.05
    assert equivalent >= fixed_equivalent - 0.03 * trials  # about as often as a fixed design of the maximum


def test_a_change_at_the_threshold_is_not_called_equivalent_more_than_alpha():
    design = SequentialDesign(55, 160, 2.0)
    rng = np.random.default_rng(9)
    trials, wrong = 300, 0
    for _ in range(trials):
        base = rng.normal(100, 1.5, 160)
        state, _ = _experiment(design, base, rng.normal(102, 1.5, 160))
        wrong += state.settled.get("b") is not None and state.settled["b"].verdict == "equivalent"
    assert wrong / trials <= 0.05


def test_the_spec_keeps_it_and_refuses_what_it_cannot_do():
    spec = ExperimentSpec((Variant("a", "true"), Variant("b", "true")), runs=40, sequential=Sequential(6, 1.5, "wall"))
    document = spec.to_json()
    assert document["abstat_spec"] == 3 and decode(document) == spec  # 3: the threshold in its analysis
    with pytest.raises(SpecError, match="more than the maximum"):
        ExperimentSpec((Variant("a", "true"), Variant("b", "true")), runs=4, sequential=Sequential(5))
    with pytest.raises(SpecError, match="interleaved or random"):
        ExperimentSpec((Variant("a", "true"), Variant("b", "true")), order="sequential", sequential=Sequential())
    with pytest.raises(SpecError, match="version 2"):
        decode({"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}], "sequential": {}})


def test_options_without_until_decided_are_refused(tmp_path):
    for args, words in (
        (["--min-runs", "3"], "--min-runs needs --until-decided"),
        (["--until-decided", "--min-runs", "1"], "--min-runs must be 2"),
        (["--until-decided"], "two or more variants"),
    ):
        variants = ["-v", "a=true"] if "two or more" in words else ["-v", "a=true", "-v", "b=true"]
        result = _abstat("run", "--store", str(tmp_path / "s.db"), *args, *variants)
        assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_end_to_end_a_10x_slower_command_stops_early(tmp_path):
    """Wall time of sleeps 180 ms apart: a machine's load (tens of ms of scheduling delay at load 19, where
    10 ms against 30 ms once needed 27 runs) cannot blur them."""
    result = _abstat(
        "run",
        "--until-decided",
        "-n",
        "60",
        "--store",
        str(tmp_path / "s.db"),
        "--no-progress",
        "-v",
        "a=sleep 0.02",
        "-v",
        "b=sleep 0.2",
    )
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if "--until-decided on wall" in line)
    runs = int(line.split("stopped early at ")[1].split()[0])
    assert runs <= 20 and "b slower" in line


def test_a_look_at_a_small_level_draws_its_permutations_without_error():
    """A look spends a small part of alpha (0.0005 here): the Brunner-Munzel permutation test's first batch of
    arrangements is then larger than the default total, which once asked for a negative number of more."""
    from abstat.stats.permutation import bm_permutation, draws_for

    for alpha in (0.05, 0.01, 0.002, 0.0005, 1e-5):
        first, most = draws_for(alpha)
        assert most >= first
    rng = np.random.default_rng(8)
    x, y = rng.normal(10, 1, 9), rng.normal(10.8, 1, 9)  # 48620 arrangements > the exact limit: drawn
    test = bm_permutation(x, y, 0.0005, seed=1)
    assert 0 < test.p_value <= 1 and not test.exact
