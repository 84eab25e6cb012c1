"""attack22 A13: in docs/ci.md's fork-safe flow a PR's artifact is imported beside the trusted baseline, and
``compare baseline:main pr:bench --fail-on slower`` took the metric's direction from every experiment's stored
analysis (a union) and from a unit on either side: a fork that ran with ``--higher-is-better t``, or stored ``t``
in ``op/s``, turned its +20% slowdown into "higher (better)" and passed the gate.  compare now takes the stored
analysis and the direction's unit from the baseline only; report over experiments whose stored directions
disagree refuses unless a flag names the metric."""

from __future__ import annotations

import random

from abstat.report.analysis import Judging, stored_judging
from abstat.store import open_store
from support.store_runs import add_ok_run


def _experiment(store, name, centre, analysis=None, unit=None, seed=1):
    rng = random.Random(seed)
    settings = {"spec": {"abstat_spec": 1, "analysis": analysis}} if analysis is not None else {}
    invocation = store.start_invocation(name, {"hostname": "h"}, settings=settings, variants=["bench"])
    for i in range(12):
        add_ok_run(store, invocation, "bench", i, {"t": [centre * rng.gauss(1, 0.01)]}, {"t": unit} if unit else None)
    store.finish_invocation(invocation, "complete")


def _gate(tmp_path, abstat_cli, pr_analysis=None, pr_unit=None):
    db = str(tmp_path / "gate.db")
    with open_store(db) as store:
        _experiment(store, "main", 100.0, analysis={"baseline": None, "confidence": 95.0, "higher_is_better": []})
        _experiment(store, "pr", 120.0, analysis=pr_analysis, unit=pr_unit, seed=2)
    assert abstat_cli("baseline", "save", "--store", db, "main", "main").returncode == 0
    return db


GATE = ("--metric", "t", "--fail-on", "slower", "--threshold", "2")


def test_a_forks_stored_higher_is_better_does_not_pass_the_gate(abstat_cli, tmp_path):
    db = _gate(tmp_path, abstat_cli, pr_analysis={"confidence": 95.0, "higher_is_better": ["t"]})
    done = abstat_cli("compare", "baseline:main", "pr:bench", "--store", db, *GATE)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "higher (worse)" in done.stdout
    # the trusted side's own analysis still counts: a baseline run with --higher-is-better t is judged so
    db2 = str(tmp_path / "g2.db")
    with open_store(db2) as store:
        _experiment(store, "main", 100.0, analysis={"higher_is_better": ["t"]})
        _experiment(store, "pr", 120.0, seed=2)
    done = abstat_cli("compare", "main:bench", "pr:bench", "--store", db2, *GATE)
    assert done.returncode == 0 and "higher (better)" in done.stdout, done.stdout + done.stderr


def test_a_forks_rate_unit_does_not_pass_the_gate(abstat_cli, tmp_path):
    db = _gate(tmp_path, abstat_cli, pr_unit="op/s")
    done = abstat_cli("compare", "baseline:main", "pr:bench", "--store", db, *GATE)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "higher (worse)" in done.stdout


def test_report_refuses_experiments_that_disagree_on_a_direction(abstat_cli, tmp_path):
    db = _gate(tmp_path, abstat_cli, pr_analysis={"higher_is_better": ["t"]})
    layout = ("--by", "experiment", "--baseline", "baseline@main", "--where", "experiment=baseline@main,pr")
    done = abstat_cli("report", "--store", db, *layout, *GATE)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "abstat report: the experiments compared were run with different directions for 't' (named higher- or "
        "lower-is-better in one, not in another): say which with --higher-is-better or --lower-is-better"
    ]
    done = abstat_cli("report", "--store", db, *layout, "--lower-is-better", "t", *GATE)
    assert done.returncode == 1, done.stdout + done.stderr


def test_stored_judging_keeps_what_the_experiments_agree_on(tmp_path):
    db = str(tmp_path / "s.db")
    with open_store(db) as store:
        _experiment(store, "a", 100.0, analysis={"higher_is_better": ["t", "u"], "lower_is_better": ["v"]})
        _experiment(store, "b", 100.0, analysis={"higher_is_better": ["u"], "lower_is_better": ["v"]})
        _experiment(store, "c", 100.0)  # stored without an analysis: names no metric (attack23 #6)
    with open_store(db, create=False) as store:
        judged = stored_judging(store, ["a", "b"])
        assert judged.higher_is_better == ("u",) and judged.lower_is_better == ("v",) and judged.disputed == ("t",)
        assert stored_judging(store, ["a", "b", "c"]).disputed == ("t", "u", "v")
        assert stored_judging(store, ["b", "c"]).disputed == ("u", "v")
        assert stored_judging(store, ["c"]) == Judging()
    assert judged.over(higher_is_better=["t"]).higher_is_better == ("u", "t")
    assert Judging(disputed=("t",)).over(lower_is_better=["all"]).lower_is_better == ("all",)


def test_a_baseline_stored_without_an_analysis_leaves_the_forks_direction_disputed(abstat_cli, tmp_path):
    """attack23 #6: the trusted experiment stored without an analysis (an older abstat, bisect's runs, damaged
    settings) had no say, so the PR's stored --higher-is-better t alone decided report's gate: +20% passed."""
    db = str(tmp_path / "gate.db")
    with open_store(db) as store:
        _experiment(store, "main", 100.0)
        _experiment(store, "pr", 120.0, analysis={"higher_is_better": ["t"]}, seed=2)
    layout = ("--by", "experiment", "--baseline", "main")
    done = abstat_cli("report", "--store", db, *layout, *GATE)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "different directions for 't'" in done.stderr
    done = abstat_cli("report", "--store", db, *layout, "--lower-is-better", "t", *GATE)
    assert done.returncode == 1, done.stdout + done.stderr
