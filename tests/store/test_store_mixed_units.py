"""One replicated unit for both sides of a comparison (issue 34: stored runs).

A stored baseline of several invocations (boots) has one run group per invocation; a new invocation of
5 process runs of 49 samples has one group per run.  Compared as they were, boots met runs: the new
side's runs all share one boot's offset, which the comparison read as a change (20-57% false calls at
boot offsets sd 15 against run offsets sd 5: benchmarks/mixed_unit_calibration.py).  Now the
one-invocation side is compared as that one invocation, its boot-to-boot spread borrowed from the
baseline's boots, and a ``unit-mismatch`` warning says so; compare, report, show and plan agree."""

from __future__ import annotations

import json
import random

import pytest
from support.cli import run_abstat as abstat
from support.store_runs import add_ok_run

from abstat.store import open_store
from abstat.store.run_groups import common_unit, level

BOOTS, RUNS = 10, 5


def _boot(rng: random.Random, offset: float) -> list[list[float]]:
    """One boot's 5 process runs of 49 cycle counts (20-cycle grid, 3% interrupts, run offsets sd 5)."""
    runs = []
    for _ in range(RUNS):
        run_offset = rng.gauss(0, 5)
        values = [440 + offset + run_offset + rng.gauss(0, 10) + (rng.random() < 0.03) * rng.uniform(200, 800)]
        values += [440 + offset + run_offset + rng.gauss(0, 10) for _ in range(48)]
        runs.append([float(round(v / 20) * 20) for v in values])
    return runs


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[str, list[list[list[float]]], list[list[float]]]:
    """Variant a in 10 invocations (boot offsets sd 15), variant b in one invocation whose boot sits 2 sd
    (30 cycles) above: within what boots do, no change."""
    rng = random.Random(34)
    base = [_boot(rng, rng.gauss(0, 15)) for _ in range(BOOTS)]
    new = _boot(rng, 30.0)
    path = str(tmp_path_factory.mktemp("mixed") / "mixed.db")
    with open_store(path, create=True) as store:
        for variant, boots in (("a", base), ("b", [new])):
            for runs in boots:
                invocation = store.start_invocation("mx", machine={"hostname": "h"}, argv=["x"], variants=[variant])
                for i, values in enumerate(runs):
                    add_ok_run(store, invocation, variant, i, {"cycles": values}, {"cycles": "cycles"}, "bench")
                store.finish_invocation(invocation, "ok")
    return path, base, new


def _json(*args: str) -> dict:
    done = abstat(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_levels_and_the_common_unit_brute_force():
    boots = [[1.0, 2.0], [3.0, 4.0], [5.0]]
    runs = [[6.0, 7.0], [8.0], [9.0, 10.0]]
    assert level(boots, [1, 2, 3]) == "invocations" and level(runs, [4, 4, 4]) == "runs"
    assert level([[1.0]], [4]) == "one" and level(runs, []) == "unknown"
    groups, notes = common_unit([("base", boots, [1, 2, 3]), ("new", runs, [4, 4, 4])])
    assert groups == [boots, [[6.0, 7.0, 8.0, 9.0, 10.0]]]  # the new side's runs as its one invocation
    assert [name for name, _ in notes] == ["new"] and "one invocation against 3 invocations" in notes[0][1]
    groups, notes = common_unit([("new", runs, [4, 4, 4]), ("base", boots, [1, 2, 3])])  # either side
    assert groups == [[[6.0, 7.0, 8.0, 9.0, 10.0]], boots] and [n for n, _ in notes] == ["new"]
    for sides in (  # alike in level, or files: as they are, nothing said
        [("a", boots, [1, 2, 3]), ("b", boots, [4, 5, 6])],
        [("a", runs, [1, 1, 1]), ("b", runs, [2, 2, 2])],
        [("a", boots, []), ("b", runs, [2, 2, 2])],
    ):
        assert common_unit(sides) == ([s[1] for s in sides], [])


def test_compare_of_boots_against_one_invocations_runs_compares_invocations(mixed):
    from abstat.comparison import compare

    path, base, new = mixed
    result = _json("compare", "--store", path, "mx:a", "mx:b", "--metric", "cycles")["comparisons"][0]
    assert result["runs"] == [BOOTS, 1]  # before: [10, 5], boots against runs
    assert any(w["code"] == "unit-mismatch" and w["variant"] == "mx:b" for w in result["warnings"])
    assert not result["significant"]
    # the numbers of compare given the boots and the one invocation, in process
    merged = compare([[v for run in boot for v in run] for boot in base], [v for run in new for v in run])
    assert result["delta_pct"] == pytest.approx(merged.delta_pct, rel=1e-9)
    assert result["ci_pct"] == pytest.approx(merged.ci_pct, rel=1e-9)
    # the defect: the boots against the 5 runs call the one boot's offset a change
    before = compare([[v for run in boot for v in run] for boot in base], new)
    assert before.significant and before.p_value < 0.01


def test_report_show_and_plan_use_the_same_unit(mixed):
    path, _, _ = mixed
    compared = _json("compare", "--store", path, "mx:a", "mx:b", "--metric", "cycles")["comparisons"][0]
    shown = _json("show", "mx", "--store", path)
    (table,) = shown["metrics"]["cycles"]["comparisons"]["comparisons"]
    assert table["runs"] == [BOOTS, 1]
    assert table["delta_pct"] == pytest.approx(compared["delta_pct"], rel=1e-9)
    planned = _json("plan", "--store", path, "mx:a", "mx:b", "--metric", "cycles", "--detect", "2%")
    assert [v["runs"] for v in planned["variants"]] == [BOOTS, None]
    assert any("one invocation against 10 invocations" in note for note in planned["notes"])
    with open_store(path, create=False) as store:
        notes: list[str] = []
        groups = store.unit_groups("mx", notes=notes)[("cycles", "cycles")]
    assert len(groups["a"]) == BOOTS and len(groups["b"]) == 1
    assert any(note.startswith("b: one invocation against 10 invocations") for note in notes)


def test_plan_and_noise_size_the_same_runs(tmp_path):
    """One invocation of 20 runs x 49 per variant: noise's runs needed for 1% and plan's runs per variant
    at the pilot's run length are one sizing of compare's run medians (before: plan sized the run means)."""
    from abstat.noise import analyse_experiment

    rng = random.Random(5)
    path = str(tmp_path / "aa.db")
    with open_store(path, create=True) as store:
        invocation = store.start_invocation("nz", machine={"hostname": "h"}, argv=["x"], variants=["a", "b"])
        for i in range(20):
            for variant in ("a", "b"):
                (values,) = _boot(rng, 0.0)[:1]
                add_ok_run(store, invocation, variant, i, {"cycles": values}, {"cycles": "cycles"}, "bench")
        store.finish_invocation(invocation, "ok")
    with open_store(path, create=False) as store:
        (noise,) = analyse_experiment(store, "nz", metrics=["cycles"])
    planned = _json("plan", "--store", path, "nz:a", "nz:b", "--metric", "cycles", "--detect", "1%")
    (pair,) = planned["pairs"]
    assert planned["estimand"] == noise.estimand == "hl_ratio"
    assert pair["samples_per_run"] == 49 and pair["runs_per_variant"] == noise.samples_needed["1%"]
