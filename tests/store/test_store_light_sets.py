"""The store's sets read as columns (``Store.light_sets``, what ``abstat history --store`` reads) against
the row path (``Store.sample_sets(machines=False)``) on seeded stores: the same sets in the same order,
labels (and their order), runs, units, invocations and notes; and the cases the columns hand to the row
path (a damaged sample, a run of several samples, a metric in two units), with the same damage notes."""

from __future__ import annotations

import random
import sqlite3

import pytest
from support.cli import run_abstat as abstat
from support.store_runs import add_ok_run

from abstat.history.load import load_history
from abstat.history.series import build_series
from abstat.store import open_store
from abstat.store.columns import grouped

WHERE = [
    {},
    {"experiment": "nightly"},
    {"experiment": "nightly", "metric": ["wall"]},
    {"metric": ["wall", "cycles"]},
    {"variant": "b"},
    {"experiment": "nightly", "host": "box2"},
    {"experiment": "nightly", "rev": ["r3", "r7", "nothing"]},
    {"unit": "s"},
    {"experiment": "nobody"},
]


def _invocation(store, rng, experiment, variants, labels, hostname, metrics):
    invocation = store.start_invocation(
        experiment, machine={"hostname": hostname}, argv=["x"], labels=labels, variants=variants
    )
    for variant in variants:
        for i in range(rng.choice([1, 2, 3, 5])):
            values = {metric: [rng.uniform(0.5, 2.0)] for metric in metrics}
            add_ok_run(store, invocation, variant, i, values, {m: "s" if m != "cycles" else "cycles" for m in metrics})
        store.add_run(
            invocation, variant=variant, command="x", iteration=9, position=0, status="failed", exit_code=1,
            started_at=1.0, wall=0.01, values={metrics[0]: [99.0]}, units={metrics[0]: "s"},
        )  # fmt: skip
    store.finish_invocation(invocation, "ok")


def _seeded(path: str, seed: int) -> None:
    """Two experiments; revisions r0..r11 (some measured twice, one of them with another role, some without
    a revision label), two hosts (one named by a --label host=), three metrics, variants a and b."""
    rng = random.Random(seed)
    with open_store(path, create=True) as store:
        for step in range(40):
            rev = f"r{rng.randrange(12)}"
            labels = {"rev": rev, "commit_time": str(1_700_000_000 + 3600 * int(rev[1:]))}
            if rng.random() < 0.15:
                labels = {"mode": "x"}  # no revision
            elif rng.random() < 0.15:
                labels["role"] = "confirm"
            if rng.random() < 0.2:
                labels["host"] = "box2"
            metrics = ["wall", "user", "cycles"] if rng.random() < 0.7 else ["wall"]
            variants = rng.choice([["a"], ["b"], ["a", "b"]])
            experiment = "nightly" if step % 5 else "other"
            _invocation(store, rng, experiment, variants, labels, rng.choice(["box1", "box3"]), metrics)


def _shown(sample_set):
    return (
        sample_set.labels,
        list(sample_set.labels),
        sample_set.runs,
        sample_set.unit,
        sample_set.invocations,
        sample_set.notes,
        sample_set.machine,
        sample_set.source,
    )


def _both(path, where):
    with open_store(path, create=False) as store:
        rows = [_shown(s) for s in store.sample_sets(where, machines=False)]
        rows_damage = list(store.damage)
    with open_store(path, create=False) as store:
        columns = [_shown(s) for s in store.light_sets(where)]
        columns_damage = list(store.damage)
    return rows, columns, rows_damage, columns_damage


def _column_path(path) -> bool:
    with open_store(path, create=False) as store:
        rows = store.db.execute(
            "SELECT r.variant_id, s.metric, r.invocation_id, s.value, s.unit, s.run_id FROM samples s"
            " JOIN runs r ON r.id = s.run_id WHERE r.status = 'ok' ORDER BY r.id, s.metric, s.idx"
        ).fetchall()
    return grouped(rows) is not None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_columns_make_the_row_paths_sets(tmp_path, seed):
    path = str(tmp_path / "s.db")
    _seeded(path, seed)
    assert _column_path(path)  # the columns' own path, not the row path they fall back on
    found = 0
    for where in WHERE:
        rows, columns, _, _ = _both(path, where)
        assert columns == rows, where
        found += len(rows)
    assert found > 100
    # a set of several invocations (a revision measured twice alike) and sets of one are both there
    _, columns, _, _ = _both(path, {})
    assert {len(c[4]) > 1 for c in columns} == {True, False}


def test_history_from_the_columns_is_the_row_paths(tmp_path):
    """The whole load (series, points, their values, runs, order, first seen, roles, skipped sets)."""
    path = str(tmp_path / "s.db")
    _seeded(path, 4)
    loaded = load_history(store_path=path, experiment="nightly", metrics=["wall", "cycles"], repo=None)
    with open_store(path, create=False) as store:
        sets = list(store.sample_sets({"experiment": "nightly", "metric": ["cycles", "wall"]}, machines=False))
    series, skipped = build_series(sets, first_seen={i: i for s in sets for i in s.invocations})
    assert skipped > 0 and any(w.code == "no-revision-label" for w in loaded.warnings)
    shown = [(s.labels, s.metric, s.unit, [vars(p) for p in s.points]) for s in loaded.series]
    assert sorted(map(repr, shown)) == sorted(
        repr((s.labels, s.metric, s.unit, [vars(p) for p in sorted(s.points, key=_order)])) for s in series
    )
    assert any(p.roles for s in loaded.series for p in s.points) and any(
        len(p.runs) > 1 for s in loaded.series for p in s.points
    )


def _order(point):
    return (point.commit_time is None, point.commit_time or 0.0, point.first_seen)


def _damaged(path, sql):
    with sqlite3.connect(path) as db:
        db.execute(sql)


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE samples SET value = 'garbage' WHERE metric = 'user' AND run_id % 7 = 0",
        "UPDATE samples SET value = 'garbage' WHERE run_id = (SELECT min(run_id) FROM samples)",
        "UPDATE samples SET unit = 'ms' WHERE metric = 'wall' AND run_id < 20",
        "UPDATE samples SET idx = 1 WHERE metric = 'wall' AND run_id % 2 = 0",
    ],
    ids=["damaged-values", "damaged-run", "two-units", "split-keys"],
)
def test_what_the_columns_do_not_take_reads_as_the_rows_do(tmp_path, damage):
    path = str(tmp_path / "s.db")
    _seeded(path, 5)
    _damaged(path, damage)
    if "idx" in damage:  # a run of two samples of wall: several samples a run
        with sqlite3.connect(path) as db:
            db.execute(
                "INSERT INTO samples (run_id, metric, idx, value, unit)"
                " SELECT run_id, metric, 0, value * 2, unit FROM samples WHERE metric = 'wall' AND idx = 1"
            )
    assert not _column_path(path)
    for where in WHERE:
        rows, columns, rows_damage, columns_damage = _both(path, where)
        assert columns == rows and columns_damage == rows_damage, where
    if "garbage" in damage:
        _, _, rows_damage, _ = _both(path, {})
        assert rows_damage and "is not a number" in rows_damage[0]


def test_history_of_a_store_with_an_unreadable_key_is_one_line(tmp_path):
    """A run whose invocation the store cannot read (a damaged page): history's columns hand it to the row
    path, which refuses the store in one line (exit 2), as before."""
    path = str(tmp_path / "s.db")
    _seeded(path, 6)
    _damaged(
        path,
        "UPDATE runs SET invocation_id = 'x' WHERE id = (SELECT min(r.id) FROM runs r JOIN variants v"
        " ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id WHERE e.name = 'nightly'"
        " AND r.status = 'ok')",
    )
    assert not _column_path(path)
    for metric in ([], ["--metric", "wall"]):
        done = abstat("history", "--store", path, "nightly", *metric, "--no-state", "--repo", str(tmp_path))
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "damaged store (unreadable run, variant or metric in 1 of " in done.stderr
        assert "Traceback" not in done.stderr
