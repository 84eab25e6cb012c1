"""The replicated unit of a stored set (issue 34: numbers that hold in the users' own workflows).

Seed 000's workflow: a benchmark printing 49 TSC samples per process run (20-cycle grid, 3% interrupts,
a per-process offset), stored by one ``abstat noise`` invocation of 20 runs per variant.  The samples of
one run share its offset, so they are not 49 independent samples: the store's run groups are the
process runs (one per run) when a set has one invocation whose runs hold several samples, the
invocations when it has several, and the invocation's samples (one group) when each run holds one
sample.  ``compare`` then compares run centres, so this A/A is not called a change (before: 980 pooled
samples, "+1.8% slower", p 1e-7)."""

from __future__ import annotations

import json
import random
import sqlite3

import numpy as np
import pytest
from support.cli import run_abstat as abstat

from abstat.store import open_store
from support.store_runs import add_ok_run


def _hcall(rng: random.Random) -> list[float]:
    """One process run of the reproducer's hcall.py: 49 cycle counts on a 20-cycle grid."""
    offset = rng.gauss(0, 15)  # per process (ASLR, page placement)
    values = []
    for _ in range(49):
        v = 440 + offset + rng.gauss(0, 10) + (rng.random() < 0.03) * rng.uniform(200, 800)
        values.append(float(int(round(v / 20) * 20)))
    return values


def _write(path: str, runs: dict[str, list[list[float]]], invocations: int = 1) -> None:
    """Each variant's runs (lists of samples of ``cycles``), interleaved, over ``invocations``."""
    count = len(next(iter(runs.values())))
    with open_store(path, create=True) as store:
        for part in range(invocations):
            invocation = store.start_invocation("nz", machine={"hostname": "h"}, argv=["x"], variants=list(runs))
            for i in range(part * count // invocations, (part + 1) * count // invocations):
                for variant, values in runs.items():
                    add_ok_run(
                        store, invocation, variant, i, {"cycles": values[i]}, {"cycles": "cycles"}, "python3 hcall.py"
                    )
            store.finish_invocation(invocation, "ok")


@pytest.fixture(scope="module")
def aa(tmp_path_factory) -> tuple[str, dict[str, list[list[float]]]]:
    rng = random.Random(20)  # pooled (before): "+2.0% [+1.1, +2.9] slower" (p 4e-6)
    runs = {"a": [], "b": []}
    for _ in range(20):
        for variant in runs:
            runs[variant].append(_hcall(rng))
    path = str(tmp_path_factory.mktemp("units") / "noise.db")
    _write(path, runs)
    return path, runs


def _compare(path: str, *extra: str) -> dict:
    done = abstat("compare", "--store", path, "nz:a", "nz:b", "--metric", "cycles", "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    return found["comparisons"][0] if "comparisons" in found else found


def test_reproducer_one_invocation_of_many_sample_runs_compares_runs(aa):
    path, runs = aa
    result = _compare(path)
    assert result["unit"] == "runs" and result["runs"] == [20, 20]  # not 980 pooled samples
    assert result["n"] == [980, 980]
    assert not result["significant"] and result["verdict"] != "cannot judge"
    lo, hi = result["ci_pct"]
    assert lo < 0 < hi
    # the same numbers as compare given the runs as lists (runs as the unit), computed in process
    from abstat.comparison import compare

    direct = compare(runs["a"], runs["b"])
    assert result["delta_pct"] == pytest.approx(direct.delta_pct, rel=1e-9)
    assert result["ci_pct"] == pytest.approx(direct.ci_pct, rel=1e-9)


def test_sample_sets_group_one_invocation_by_process_run(aa):
    path, runs = aa
    with open_store(path, create=False) as store:
        sets = {s.labels["variant"]: s for s in store.sample_sets({"metric": "cycles"})}
    assert sets["a"].runs == runs["a"] and sets["b"].runs == runs["b"]  # one group per run, as measured
    assert len(set(sets["a"].invocations)) == 1 and len(sets["a"].invocations) == 20


def test_run_medians_resolve_changes_smaller_than_the_grid():
    """Plain run medians of these runs are all one grid level (compare could not judge); read with their
    ties spread over the 20-cycle cell they follow a 5-cycle change (brute force: the median of each run's
    values, each level's k values placed at the midpoints of k equal parts of its cell)."""
    from abstat.stats.nested import run_centres

    rng = np.random.default_rng(5)
    runs = [np.round((440.0 + rng.normal(0, 8, 49)) / 20) * 20 for _ in range(10)]
    shifted = [np.round((445.0 + rng.normal(0, 8, 49)) / 20) * 20 for _ in range(10)]
    assert {float(np.median(r)) for r in runs + shifted} == {440.0}

    def brute(run: np.ndarray) -> float:
        spread = []
        for level in sorted(set(run.tolist())):
            k = int(np.sum(run == level))
            spread += [level - 10 + 20 * (j + 0.5) / k for j in range(k)]
        return float(np.median(spread))

    assert run_centres(runs, "median") == pytest.approx([brute(r) for r in runs], abs=1e-9)
    assert np.mean(run_centres(shifted, "median")) - np.mean(run_centres(runs, "median")) > 2.5
    untied = [rng.normal(0, 1, 9), rng.normal(0, 1, 10)]  # continuous data: the plain medians
    assert run_centres(untied, "median") == pytest.approx([float(np.median(r)) for r in untied], abs=0)


def test_one_sample_per_run_and_several_invocations_are_unchanged(tmp_path):
    rng = random.Random(3)
    single = {v: [[rng.gauss(100, 5)] for _ in range(12)] for v in ("a", "b")}
    path = str(tmp_path / "one.db")
    _write(path, single)
    with open_store(path, create=False) as store:
        found = {s.labels["variant"]: s.runs for s in store.sample_sets({"metric": "cycles"})}
    assert found == {v: [[x for run in runs for x in run]] for v, runs in single.items()}  # one group
    several = {v: [_hcall(rng) for _ in range(6)] for v in ("a", "b")}
    path = str(tmp_path / "three.db")
    _write(path, several, invocations=3)
    with open_store(path, create=False) as store:
        found = {s.labels["variant"]: s.runs for s in store.sample_sets({"metric": "cycles"})}
    for variant, runs in several.items():  # one group per invocation (2 runs each)
        assert found[variant] == [runs[0] + runs[1], runs[2] + runs[3], runs[4] + runs[5]]


def test_values_that_are_not_numbers_keep_the_run_boundaries(tmp_path):
    runs = {
        "a": [[1.0, 2.0, 3.0], [4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0]],
        "b": [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]],
    }
    path = str(tmp_path / "damaged.db")
    _write(path, runs)
    db = sqlite3.connect(path)
    # damage: run 1 of a loses its first value, run 2 of a all of its values
    ids = [
        r[0]
        for r in db.execute(
            "SELECT r.id FROM runs r JOIN variants v ON v.id = r.variant_id WHERE v.name = 'a' ORDER BY r.id"
        )
    ]
    db.execute("UPDATE samples SET value = 'junk' WHERE run_id = ? AND idx = 0", (ids[0],))
    db.execute("UPDATE samples SET value = 'junk' WHERE run_id = ?", (ids[1],))
    db.commit()
    db.close()
    with open_store(path, create=False) as store:
        found = {s.labels["variant"]: s.runs for s in store.sample_sets({"metric": "cycles"})}
        assert store.damage  # named, not raised
    assert found["a"] == [[2.0, 3.0], [6.0, 7.0, 8.0], [9.0, 10.0]]
    assert found["b"] == runs["b"]


def test_noise_show_and_compare_see_the_same_runs(aa):
    """``abstat noise``'s A/A and sizing, ``show``'s table and ``compare`` judge one sample model: the
    same 20 run centres per variant, so the same change and interval."""
    from abstat.noise import analyse_experiment

    path, _ = aa
    compared = _compare(path)
    with open_store(path, create=False) as store:
        (noise,) = analyse_experiment(store, "nz", metrics=["cycles"])
    assert noise.runs == {"a": 20, "b": 20}
    assert noise.aa_delta_pct == pytest.approx(compared["delta_pct"], rel=1e-9)
    assert noise.aa_ci_pct == pytest.approx(compared["ci_pct"], rel=1e-9)
    shown = abstat("show", "nz", "--store", path, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    (table,) = json.loads(shown.stdout)["metrics"]["cycles"]["comparisons"]["comparisons"]
    assert table["unit"] == "runs" and table["delta_pct"] == pytest.approx(compared["delta_pct"], rel=1e-9)


def test_noise_judges_runs_as_compare_does_when_run_order_drifts(tmp_path):
    """Runs stored in the order of their means (a drift along the run order): a flat comparison of the
    run centres would widen its interval for the serial correlation; compare of stored runs does not,
    and noise's A/A is compare's."""
    from abstat.noise import analyse_experiment

    rng = random.Random(11)
    runs = {v: sorted((_hcall(rng) for _ in range(12)), key=sum) for v in ("a", "b")}
    path = str(tmp_path / "drift.db")
    _write(path, runs)
    compared = _compare(path)
    with open_store(path, create=False) as store:
        (noise,) = analyse_experiment(store, "nz", metrics=["cycles"])
    assert noise.aa_ci_pct == pytest.approx(compared["ci_pct"], rel=1e-9)


def test_two_runs_of_several_samples_stay_pooled(tmp_path):
    """Two process runs cannot estimate the run-to-run variation (two run centres: compare could never show a
    change with them), so a one-invocation set of two runs keeps its samples as one group, as before."""
    runs = {"a": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "b": [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]}
    path = str(tmp_path / "two.db")
    _write(path, runs)
    with open_store(path, create=False) as store:
        found = {s.labels["variant"]: s.runs for s in store.sample_sets({"metric": "cycles"})}
    assert found == {variant: [values[0] + values[1]] for variant, values in runs.items()}
