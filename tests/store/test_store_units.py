"""A metric whose unit changed between runs (``t`` stored in ns, then in µs; ``c`` in ops, then in ns).
Units that convert (a fixed table: ns, µs, ms, s; B, KiB, MiB...) are read as one metric in the finest of
them, said in a note, while the store keeps every sample in the unit it was stored in: ``t`` is one row in
ns in ``show``, ``report`` and ``compare``, and every number agrees with the stored values converted here.
Units that do not convert (``c``: ops and ns; cycles never convert) are never pooled: one row per unit
naming it, and ``compare`` asks for ``--where unit=...`` (issue 35)."""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
from collections import Counter

import numpy as np
import pytest
from support.cli import run_abstat as abstat
from support.hl_oracle import hl_ratio_pct, pseudo_median

from abstat.store import open_store
from support.store_runs import add_ok_run

# invocation -> (unit of t, factor from ns, unit of c): t is a +4% change measured in ns, then in µs twice
INVOCATIONS = [("ns", 1.0, "ops"), ("us", 1e-3, "ops"), ("us", 1e-3, "ns")]


def _write(path: str, invocations=INVOCATIONS) -> None:
    rng = random.Random(7)
    with open_store(path, create=True) as store:
        for unit, scale, c_unit in invocations:
            invocation = store.start_invocation("e", machine={"hostname": "h"}, argv=["x"], variants=["a", "b"])
            for i in range(10):
                for variant, centre in (("a", 12000.0), ("b", 12500.0)):
                    add_ok_run(
                        store,
                        invocation,
                        variant,
                        i,
                        {"t": [rng.gauss(centre, 100) * scale], "c": [rng.gauss(centre, 100)]},
                        {"t": unit, "c": c_unit},
                    )
            store.finish_invocation(invocation, "ok")


def _raw(path: str) -> list[tuple[str, str, str, float]]:
    """(variant, metric, unit, value) of every stored sample, read with plain SQL."""
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT v.name, s.metric, s.unit, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id"
        ).fetchall()
    finally:
        db.close()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("units") / "s.db")
    _write(path)
    return path


TO_NS = {"ns": 1.0, "us": 1000.0}  # the conversions the test expects, written here


def _converted(raw, metric, variant):
    """The stored values of ``variant``'s ``metric`` in ns (t), converted here."""
    return [v * TO_NS[u] for n, m, u, v in raw if (n, m) == (variant, metric)]


def test_units_that_convert_are_one_metric_and_the_store_keeps_its_own(mixed):
    raw = _raw(mixed)
    assert {(m, u) for _, m, u, _ in raw} == {("c", "ns"), ("c", "ops"), ("t", "ns"), ("t", "us")}  # as stored
    with open_store(mixed, create=False) as store:
        notes: list[str] = []
        groups = store.unit_groups("e", notes=notes)
        sets = list(store.sample_sets({"experiment": "e"}))
        named = store.groups_by_metric("e")
    assert set(groups) == {("c", "ns"), ("c", "ops"), ("t", "ns")}
    assert notes == ["t: stored in ns, us; all shown in ns (converted; the store keeps each sample in its own unit)"]
    for variant in ("a", "b"):  # t: every sample once, in ns; its three run groups in invocation order
        runs = groups[("t", "ns")][variant]
        assert [v for run in runs for v in run] == _converted(raw, "t", variant)
        assert [len(run) for run in runs] == [10, 10, 10]
        for unit in ("ns", "ops"):  # c: never pooled
            assert Counter(v for run in groups[("c", unit)][variant] for v in run) == Counter(
                _by_unit(raw, "c", unit, variant)
            )
    assert len(sets) == 6
    for sample_set in sets:
        variant, metric = sample_set.labels["variant"], sample_set.labels["metric"]
        if metric == "t":
            assert "unit" not in sample_set.labels and sample_set.unit == "ns" and sample_set.notes == notes
            assert sample_set.runs == groups[("t", "ns")][variant] and sample_set.invocations == [1, 2, 3]
        else:
            assert sample_set.labels["unit"] == sample_set.unit and not sample_set.notes
            assert Counter(v for run in sample_set.runs for v in run) == Counter(
                _by_unit(raw, "c", sample_set.unit, variant)
            )
    assert set(named) == {"c [ns]", "c [ops]", "t"}


def test_the_fixed_table(tmp_path):
    from abstat.readers.unit_table import convertible_groups, factor

    assert factor("us", "ns") == 1000.0 and factor("s", "ns") == 1e9 and factor("ms", "µs") == 1000.0
    assert factor("MiB", "KiB") == 1024.0 and factor("GiB", "B") == 2.0**30 and factor("MB", "kB") == 1000.0
    assert factor("us/op", "ns/op") == 1000.0 and factor("us/op", "ns") is None
    assert all(factor(u, "ns") is None for u in ("cycles", "ops", "count", "", None, "B"))
    assert factor("cycles", "cycles") is None  # no unit of the table: nothing to convert
    assert convertible_groups(["us", "ops", "ns", "µs", "KiB", "cycles", "B"]) == [
        ("ns", ["us", "ns", "µs"]),
        ("B", ["KiB", "B"]),
    ]
    # cycles and ns stay two metrics in the store's sets; KiB and MiB become one in KiB
    path = str(tmp_path / "k.db")
    with open_store(path, create=True) as store:
        for unit, size_unit, size in (("cycles", "MiB", 2.0), ("ns", "KiB", 2048.0)):
            invocation = store.start_invocation("e", machine={"hostname": "h"}, argv=["x"], variants=["a"])
            store.add_run(
                invocation,
                variant="a",
                command="true",
                iteration=0,
                position=0,
                status="ok",
                exit_code=0,
                started_at=1.0,
                wall=0.01,
                values={"t": [5.0], "rss": [size]},
                units={"t": unit, "rss": size_unit},
            )
            store.finish_invocation(invocation, "ok")
    with open_store(path, create=False) as store:
        sets = {(s.labels["metric"], s.unit): s for s in store.sample_sets({"experiment": "e"})}
    assert set(sets) == {("t", "cycles"), ("t", "ns"), ("rss", "KiB")}
    assert sets[("rss", "KiB")].runs == [[2048.0], [2048.0]] and "unit" not in sets[("rss", "KiB")].labels
    assert sets[("t", "ns")].labels["unit"] == "ns" and sets[("t", "cycles")].runs == [[5.0]]


def test_a_store_whose_metrics_have_one_unit_reads_as_before(tmp_path):
    path = str(tmp_path / "one.db")
    _write(path, [("ns", 1.0, "ops"), ("ns", 1.0, "ops")])
    with open_store(path, create=False) as store:
        sets = list(store.sample_sets({"experiment": "e"}))
        named = store.groups_by_metric("e")
    assert len(sets) == 4 and not any("unit" in s.labels for s in sets)  # no new label
    assert {s.unit for s in sets} == {"ns", "ops"} and set(named) == {"c", "t"}
    assert all(len(s.runs) == 2 and all(len(r) == 10 for r in s.runs) for s in sets)  # both invocations


def _by_unit(raw, metric, unit, variant):
    return [v for n, m, u, v in raw if (n, m, u) == (variant, metric, unit)]


def test_show_report_and_compare_agree_row_by_row(mixed):
    raw = _raw(mixed)
    shown = abstat("show", "e", "--store", mixed, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    metrics = found["metrics"]
    assert {k: (v["metric"], v["unit"]) for k, v in metrics.items()} == {
        "c [ns]": ("c", "ns"),
        "c [ops]": ("c", "ops"),
        "t": ("t", "ns"),
    }
    assert any(n["note"].startswith("t: stored in ns, us; all shown in ns") for n in found["run_notes"])
    # the row of one invocation each (10 against 10 samples): the brute-force Hodges-Lehmann ratio
    expected = hl_ratio_pct(_by_unit(raw, "c", "ns", "a"), _by_unit(raw, "c", "ns", "b"))
    assert metrics["c [ns]"]["comparisons"]["comparisons"][0]["delta_pct"] == pytest.approx(expected, rel=1e-9)
    # t: three runs a side (a ns one, two µs ones), the centres those of the run medians in ns
    t_shown = metrics["t"]["comparisons"]["comparisons"][0]
    for variant, centre in zip(("a", "b"), t_shown["centers"], strict=True):
        values = _converted(raw, "t", variant)
        medians = [float(np.median(values[i : i + 10])) for i in range(0, 30, 10)]
        assert centre == pytest.approx(pseudo_median(medians), rel=1e-9)
        assert 11_000 < centre < 13_500  # ns: the µs runs were not taken as ns
    text = abstat("show", "e", "--store", mixed).stdout
    lines = {line.split("  ")[0]: line for line in text.splitlines() if line.startswith(("t ", "c ["))}
    assert set(lines) == {"c [ns]", "c [ops]", "t"} and lines["t"].count("µs") == 2  # one row for t, in µs
    assert "note: t: stored in ns, us; all shown in ns (converted" in text
    rows_csv = {
        r["metric"] + r["metric_unit"]: r["notes"]
        for r in csv.DictReader(io.StringIO(abstat("show", "e", "--store", mixed, "--format", "csv").stdout))
    }
    assert rows_csv["tns"].startswith("t: stored in ns, us") and not rows_csv["cns"] and not rows_csv["cops"]
    reported = abstat("report", "--store", mixed, "--metric", "t", "--format", "json")
    assert reported.returncode == 0, reported.stderr
    rows = json.loads(reported.stdout)["rows"]
    assert len(rows) == 1 and "unit" not in rows[0]["labels"]
    cells = rows[0]["cells"]
    assert cells["a"]["unit"] == "ns" and cells["b"]["unit"] == "ns"
    assert "t: stored in ns, us" in abstat("report", "--store", mixed, "--metric", "t").stdout
    compared = abstat("compare", "e:a", "e:b", "--metric", "t", "--store", mixed, "--format", "json")
    assert compared.returncode == 0, compared.stderr
    mine = json.loads(compared.stdout)["comparisons"][0]
    assert (mine["centers"], mine["verdict"], mine["n"]) == (t_shown["centers"], t_shown["verdict"], t_shown["n"])
    assert any(w["code"] == "units-converted" for w in mine["warnings"])
    assert [cells["a"]["center"], cells["b"]["center"]] == pytest.approx(mine["centers"], rel=1e-12)
    # units that do not convert: compare asks which, and takes --where unit=...
    mixed_c = abstat("compare", "e:a", "e:b", "--metric", "c", "--store", mixed)
    assert mixed_c.returncode == 2 and "unit=ns|ops" in mixed_c.stderr and "Traceback" not in mixed_c.stderr
    one = abstat("compare", "e:a", "e:b", "--metric", "c", "--store", mixed, "--where", "unit=ns", "--format", "json")
    assert one.returncode == 0, one.stderr
    assert (
        json.loads(one.stdout)["comparisons"][0]["delta_pct"]
        == metrics["c [ns]"]["comparisons"]["comparisons"][0]["delta_pct"]
    )
