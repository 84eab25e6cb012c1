"""newcomer22 #3: with 5 runs a side and several metrics, ``run`` and ``show`` said "no difference proven" for
intervals far from 0 (-17% [-19, -16]) where ``compare`` and ``report --metric`` said faster: Holm over every
metric needs p below 0.05/m, which 5 against 5 ranks cannot give (0.0079).  report said so in one line; run and
show now say it too."""

from __future__ import annotations

import random

from abstat.store import open_store
from support.store_runs import add_ok_run

METRICS = ("a-ipi", "b-ipi", "c-ipi", "wall", "user", "sys", "vcsw")


def _store(path):
    rng = random.Random(11)
    with open_store(str(path)) as store:
        invocation = store.start_invocation("ipi", {"hostname": "h"}, variants=["without", "with"])
        for i in range(5):
            for variant, centre in (("without", 680.0), ("with", 560.0)):
                values = {m: [centre * rng.gauss(1, 0.01)] for m in METRICS}
                add_ok_run(store, invocation, variant, i, values, {m: "ns" for m in METRICS})
        store.finish_invocation(invocation, "complete")
    return str(path)


def test_show_says_why_no_cell_can_be_significant(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db")
    shown = abstat_cli("show", "--store", db, "ipi")
    assert shown.returncode == 0, shown.stderr
    assert "no difference proven" in shown.stdout
    assert (
        "No cell can be significant: with 5 samples against 5 the smallest p-value the rank test can give is "
        "0.0079, and Holm over 7 comparisons needs one below 0.0071" in shown.stdout
    ), shown.stdout
    one = abstat_cli("show", "--store", db, "ipi", "--metric", "a-ipi")
    assert "faster" in one.stdout and "No cell" not in one.stdout, one.stdout


def test_report_of_a_store_leaves_its_saved_baselines_out(abstat_cli, tmp_path):
    """newcomer22 #5: a saved baseline (a copy of an experiment's runs) was reported beside the experiment
    itself, so Holm's family and the summary row counted the same runs twice."""
    db = _store(tmp_path / "s.db")
    assert abstat_cli("baseline", "save", "--store", db, "base", "ipi").returncode == 0
    done = abstat_cli("report", "--store", db, "--metric", "a-ipi", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert "baseline@base" not in done.stdout and done.stdout.count("\ncell,") == 2, done.stdout
    assert "left out the saved baseline(s) baseline@base" in done.stderr
    named = abstat_cli("report", "--store", db, "--metric", "a-ipi", "--where", "experiment=baseline@base")
    assert named.returncode == 0 and "left out" not in named.stderr, named.stderr
