"""publish makes an experiment's history series from the sets its report read
(``render.site.series.history_from_sets``): the same History ``load_history`` reads from the store."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from abstat.history.columnar import ColumnPoints
from abstat.history.load import load_history
from abstat.history.series import History
from abstat.render.site.series import history_from_sets
from abstat.report import api
from abstat.store import open_store
from support.store_runs import add_ok_run, add_revision_run


def _store(path: str, *, without_rev: bool, times: bool) -> None:
    rng = random.Random(3)
    with open_store(path) as store:
        for r in range(30):
            labels = {} if without_rev and r % 7 == 3 else {"rev": f"r{r % 26:02d}"}  # r26.. rerun r00..
            if times and r % 5:
                labels["commit_time"] = str(1_700_000_000 + 60 * ((r * 7) % 26))
            variants = ["a", "b"] if r % 4 == 0 else ["a"]
            invocation = store.start_invocation("h", {"hostname": f"m{r % 2}"}, labels=labels, variants=variants)
            for variant in variants:
                for i in range(1 + r % 3):
                    user = 10.0 * (1.1 if r >= 15 else 1.0) * (1 + rng.gauss(0, 0.01))
                    ok = not (r == 9 and i == 1)
                    values = {"wall": [user + 1], "user": [user], "bytes": [float(r)] if r % 2 else []}
                    add_revision_run(
                        store, invocation, variant, i, r, values, {"wall": "s", "user": "s", "bytes": "B"}, ok
                    )
            store.finish_invocation(invocation, "complete")


def _listed(history: History) -> History:
    """``history`` with each series' points made (:class:`abstat.history.series.Point` objects)."""
    return replace(history, series=[replace(s, points=list(s.points)) for s in history.series])


@pytest.mark.parametrize("without_rev", [False, True])
@pytest.mark.parametrize("times", [False, True])
def test_the_series_of_the_report_sets_are_load_historys(tmp_path, without_rev, times):
    path = str(tmp_path / "s.db")
    _store(path, without_rev=without_rev, times=times)
    with open_store(path, create=False, read_only=True) as store:
        metrics = store.metrics("h")
    reference = load_history(store_path=path, experiment="h", repo=None, metrics=metrics)
    sets = api.load([], store=path, where={"experiment": {"h"}}, machines=False)
    api.add_machines(sets, path)
    api.build(sets)  # what publish does with them first
    made = history_from_sets(sets, path, "h", None)
    assert made is not None and all(isinstance(s.points, ColumnPoints) for s in made.series)
    assert _listed(made) == _listed(reference)  # (load_history makes ColumnPoints too: history.stored)
    assert len(made.series) == 7  # (wall, user) x (a on m0 and m1, b on m0), bytes of a on m1
    assert any(w.code == "no-revision-label" for w in made.warnings) == without_rev
    assert any(p.runs for s in made.series for p in s.points)  # revisions measured twice: merged points


def test_no_series_without_revisions(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        invocation = store.start_invocation("h", {"hostname": "m"}, labels={}, variants=["a"])
        add_ok_run(store, invocation, "a", 0, {"wall": [1.0]}, {"wall": "s"}, command="x")
        store.finish_invocation(invocation, "complete")
    assert history_from_sets(api.load([], store=path, machines=False), path, "h", None) is None
