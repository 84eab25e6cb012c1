"""The SQL views a Grafana or Metabase panel queries (docs/store.md), on SQLite and on a real PostgreSQL:
``abstat_runs`` (runs with their labels), ``abstat_samples`` and ``abstat_revision_medians``, checked
against values computed here from what was stored (numpy's median) -- and the queries docs/store.md shows
run as written."""

from __future__ import annotations

import re

import numpy as np
from support.store_pg import backend, store_name  # noqa: F401 -- fixtures

from abstat.store import open_store
from support import paths

DOCS = paths.ROOT / "docs" / "store.md"
# rev -> the wall values of its runs (even and odd counts, ties, an outlier)
NIGHTLY = {"aaa111": [12.0, 12.5, 11.9, 40.0], "bbb222": [13.1, 13.0, 13.3], "ccc333": [13.2, 13.2, 13.2, 13.4]}


def _fill(name: str) -> None:
    with open_store(name) as store:
        for number, (rev, values) in enumerate(NIGHTLY.items()):
            invocation = store.start_invocation(
                "nightly",
                {"hostname": "ci-box"},
                labels={"rev": rev, "commit_time": f"2026-01-0{number + 1}", "kernel": "6.8"},
                variants=["build"],
            )
            for i, value in enumerate(values):
                store.add_run(
                    invocation,
                    variant="build",
                    command="make",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=1.7e9 + 100 * number + i,
                    wall=value,
                    values={"wall": [value], "ctx": [float(i)]},
                    units={"wall": "s", "ctx": "count"},
                )
            store.add_run(
                invocation,
                variant="build",
                command="make",
                iteration=9,
                position=9,
                status="failed",
                exit_code=1,
                started_at=1.7e9 + 100 * number + 9,
                wall=99.0,
                values={"wall": [99.0]},
                units={"wall": "s"},
            )
            store.finish_invocation(invocation, "complete")
        invocation = store.start_invocation(
            "ab", {"hostname": "milan-box"}, labels={"host": "milan"}, variants=["before", "after"]
        )
        store.add_run(
            invocation,
            variant="before",
            command="./b",
            iteration=0,
            position=0,
            status="ok",
            exit_code=0,
            started_at=1.8e9,
            wall=1.0,
            values={"wall": [1.0]},
            units={"wall": "s"},
        )
        store.finish_invocation(invocation, "complete")


def _query(name: str, sql: str) -> list[tuple]:
    with open_store(name, create=False) as store:
        return [tuple(row) for row in store.db.execute(sql).fetchall()]


def test_runs_carry_their_labels(store_name):  # noqa: F811
    _fill(store_name)
    rows = _query(
        store_name,
        "SELECT experiment, variant, status, host, rev, commit_time, labels, wall FROM abstat_runs ORDER BY started_at",
    )
    assert len(rows) == sum(len(v) + 1 for v in NIGHTLY.values()) + 1
    first = rows[0]
    assert first[:7] == (
        "nightly",
        "build",
        "ok",
        "ci-box",
        "aaa111",
        "2026-01-01",
        "commit_time=2026-01-01,kernel=6.8,rev=aaa111",
    )
    assert rows[-1][:5] == ("ab", "before", "ok", "milan", None)  # the host label wins over the hostname
    times = _query(store_name, "SELECT time FROM abstat_runs WHERE experiment = 'ab'")
    assert str(times[0][0]).startswith("2027-01-15")  # 1.8e9 s after the epoch, UTC


def test_revision_medians_match_numpy(store_name):  # noqa: F811
    _fill(store_name)
    rows = _query(
        store_name,
        "SELECT rev, median, n, unit, host, commit_time, first_run FROM abstat_revision_medians"
        " WHERE experiment = 'nightly' AND metric = 'wall' ORDER BY commit_time",
    )
    assert [r[0] for r in rows] == list(NIGHTLY)
    for (rev, median, n, unit, host, _, first_run), number in zip(rows, range(3)):
        values = NIGHTLY[rev]  # the failed run's 99 is left out
        assert abs(median - float(np.median(values))) < 1e-12 and n == len(values)
        assert (unit, host, first_run) == ("s", "ci-box", 1.7e9 + 100 * number)
    counts = _query(store_name, "SELECT median FROM abstat_revision_medians WHERE metric = 'ctx' ORDER BY rev")
    assert [c[0] for c in counts] == [float(np.median(range(len(v)))) for v in NIGHTLY.values()]
    assert _query(store_name, "SELECT COUNT(*) FROM abstat_revision_medians WHERE experiment = 'ab'") == [(0,)]


def test_the_documented_queries_run(store_name, backend):  # noqa: F811
    _fill(store_name)
    queries = re.findall(r"```sql\n(.*?)```", DOCS.read_text(), re.S)
    assert len(queries) >= 3
    ran = 0
    for query in queries:
        if "to_timestamp" in query and backend == "sqlite":
            continue  # written for a PostgreSQL data source
        grafana = re.sub(r"\$__timeFilter\((?:[^()]|\([^()]*\))*\)", "1 = 1", query)  # Grafana's macro
        assert _query(store_name, grafana.strip().rstrip(";")), query
        ran += 1
    assert ran >= 2
