"""``history --store`` makes its series of the store's columns (``history.stored.stored_series``): the
same series as ``build_series`` makes of the sets ``Store.light_sets`` hands out, on random stores
(re-measured revisions, several variants, hosts and labels, revisions without a time or a label)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

import abstat.history.stored as stored
from abstat.history.columnar import ColumnPoints
from abstat.history.load import INVOCATION_ORDER, load_history
from abstat.history.series import History, build_series
from abstat.store import open_store
from support.store_runs import add_revision_run


def _store(path: str, seed: int, role: bool = False) -> None:
    rng = random.Random(seed)
    with open_store(path) as store:
        for r in range(rng.randint(1, 40)):
            labels = {} if rng.random() < 0.1 else {"rev": f"r{rng.randint(0, 12):02d}"}  # reruns of a revision
            if rng.random() < 0.6:
                labels["commit_time"] = str(1_700_000_000 + 60 * rng.randint(0, 12))
            if rng.random() < 0.3:
                labels["host"] = rng.choice(["x", "m0"])
            if rng.random() < 0.3:
                labels["opt"] = rng.choice(["O2", "O3"])
            if role and rng.random() < 0.2:
                labels["role"] = "good"
            variants = rng.sample(["a", "b", "c"], rng.randint(1, 3))
            machine = {"hostname": rng.choice(["m0", "m1"])} if rng.random() < 0.8 else {}
            invocation = store.start_invocation("h", machine, labels=labels, variants=variants)
            for variant in variants:
                for i in range(rng.randint(1, 3)):
                    value = 10.0 + rng.gauss(0, 1)
                    ok = rng.random() > 0.05
                    values = {"wall": [value + 1], "user": [value] if rng.random() < 0.7 else []}
                    add_revision_run(store, invocation, variant, i, r, values, {"wall": "s", "user": "s"}, ok)
            store.finish_invocation(invocation, "complete")


def _listed(series: list) -> list:
    return [replace(s, points=list(s.points)) for s in series]


@pytest.mark.parametrize("seed", range(30))
def test_the_series_of_the_columns_are_those_of_the_sets(tmp_path, seed):
    path = str(tmp_path / "s.db")
    _store(path, seed)
    rng = random.Random(seed)
    where = {"experiment": "h", "metric": rng.choice([["wall"], ["wall", "user"], ["user"]])}
    if rng.random() < 0.3:
        where["variant"] = ["a", "c"]
    with open_store(path, create=False, read_only=True) as store:
        reference = build_series(list(store.light_sets(where)), first_seen=INVOCATION_ORDER)
        read = store.column_read(where)
    assert read is not None
    made = stored.stored_series(read, "rev")
    assert made is not None
    assert all(isinstance(s.points, ColumnPoints) for s in made[0])
    assert (_listed(made[0]), made[1]) == reference
    walls = sorted({i for s in reference[0] if s.metric == "wall" for p in s.points for i in [p.first_seen]})
    assert set(stored.latest_walls(read, 10**6)) >= set(walls)


@pytest.mark.parametrize("seed", range(8))
def test_load_history_from_the_columns_is_load_history_from_the_sets(tmp_path, monkeypatch, seed):
    path = str(tmp_path / "s.db")
    _store(path, seed, role=seed % 2 == 1)  # a role label: build_series' points (stored_series says None)
    made = load_history(store_path=path, experiment="h", repo=None)
    with monkeypatch.context() as patched:
        patched.setattr(stored, "stored_series", lambda read, rev_label: None)
        reference = load_history(store_path=path, experiment="h", repo=None)
    listed = History(_listed(made.series), made.ordering, made.subjects, made.warnings)
    assert listed == replace(reference, series=_listed(reference.series))


def test_labels_the_query_does_not_choose_are_read_as_sets(tmp_path):
    path = str(tmp_path / "s.db")
    _store(path, 1)
    with open_store(path, create=False, read_only=True) as store:
        assert store.column_read({"experiment": "h", "host": "x"}) is None
        assert store.column_read({"experiment": "nothing"}) is None
        assert store.column_read({"experiment": "h"}) is not None
