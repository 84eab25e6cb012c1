"""A metric whose unit changed between runs (``t`` stored in ns, then in µs; ``c`` in ops, then in ns)
is never pooled: the store keys its samples by (metric, unit), ``show``/``run`` print one row per unit
naming it, ``report`` one row per unit, ``compare`` refuses the mix and takes ``--where unit=...``; and
every number agrees across the three with a brute-force Hodges-Lehmann ratio (issue 35)."""
from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter

import pytest
from support.cli import run_abstat as abstat
from support.hl_oracle import hl_ratio_pct

from abstat.store import open_store

# invocation -> (unit of t, factor from ns, unit of c): t is a +4% change measured in ns, then in µs twice
INVOCATIONS = [("ns", 1.0, "ops"), ("us", 1e-3, "ops"), ("us", 1e-3, "ns")]


def _write(path: str, invocations=INVOCATIONS) -> None:
    rng = random.Random(7)
    with open_store(path, create=True) as store:
        for unit, scale, c_unit in invocations:
            invocation = store.start_invocation("e", machine={"hostname": "h"}, argv=["x"], variants=["a", "b"])
            for i in range(10):
                for variant, centre in (("a", 12000.0), ("b", 12500.0)):
                    store.add_run(invocation, variant=variant, command="true", iteration=i, position=0,
                                  status="ok", exit_code=0, started_at=1.0, wall=0.01,
                                  values={"t": [rng.gauss(centre, 100) * scale], "c": [rng.gauss(centre, 100)]},
                                  units={"t": unit, "c": c_unit})
            store.finish_invocation(invocation, "ok")


def _raw(path: str) -> list[tuple[str, str, str, float]]:
    """(variant, metric, unit, value) of every stored sample, read with plain SQL."""
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT v.name, s.metric, s.unit, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
                          " JOIN variants v ON v.id = r.variant_id").fetchall()
    finally:
        db.close()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("units") / "s.db")
    _write(path)
    return path


def test_the_store_keys_samples_by_metric_and_unit(mixed):
    raw = _raw(mixed)
    with open_store(mixed, create=False) as store:
        groups = store.unit_groups("e")
        sets = list(store.sample_sets({"experiment": "e"}))
        named = store.groups_by_metric("e")
    assert set(groups) == {("c", "ns"), ("c", "ops"), ("t", "ns"), ("t", "us")}
    # nothing lost, nothing moved: each (variant, metric, unit)'s values are exactly the stored ones
    for (metric, unit), by_variant in groups.items():
        for variant, runs in by_variant.items():
            expected = Counter(v for n, m, u, v in raw if (n, m, u) == (variant, metric, unit))
            assert Counter(v for run in runs for v in run) == expected
    assert sum(len(run) for by_variant in groups.values() for runs in by_variant.values() for run in runs) \
        == len(raw)
    # the sample sets: one unit each, told apart by a unit label, every sample in exactly one
    assert len(sets) == 8 and all(s.labels["unit"] == s.unit for s in sets)
    for sample_set in sets:
        expected = Counter(v for n, m, u, v in raw
                           if (n, m, u) == (sample_set.labels["variant"], sample_set.labels["metric"], sample_set.unit))
        assert Counter(v for run in sample_set.runs for v in run) == expected
    assert set(named) == {"c [ns]", "c [ops]", "t [ns]", "t [us]"}


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
    metrics = json.loads(shown.stdout)["metrics"]
    assert {k: (v["metric"], v["unit"]) for k, v in metrics.items()} == {
        "c [ns]": ("c", "ns"), "c [ops]": ("c", "ops"), "t [ns]": ("t", "ns"), "t [us]": ("t", "us")}
    # the rows of one invocation each (10 against 10 samples): the brute-force Hodges-Lehmann ratio
    for row, (metric, unit) in (("t [ns]", ("t", "ns")), ("c [ns]", ("c", "ns"))):
        expected = hl_ratio_pct(_by_unit(raw, metric, unit, "a"), _by_unit(raw, metric, unit, "b"))
        assert metrics[row]["comparisons"]["comparisons"][0]["delta_pct"] == pytest.approx(expected, rel=1e-9)
    text = abstat("show", "e", "--store", mixed).stdout
    lines = {line.split("  ")[0]: line for line in text.splitlines() if line.startswith(("t [", "c ["))}
    assert set(lines) == {"c [ns]", "c [ops]", "t [ns]", "t [us]"}  # one line per row, each naming its unit
    delta = metrics["t [ns]"]["comparisons"]["comparisons"][0]["delta_pct"]
    assert f"{delta:+.1f}%" in lines["t [ns]"] and lines["t [ns]"].count("µs") == 2  # 12,000 ns shown as µs
    reported = abstat("report", "--store", mixed, "--metric", "t", "--format", "json")
    assert reported.returncode == 0, reported.stderr
    cells = {row["labels"]["unit"]: row for row in json.loads(reported.stdout)["rows"]}
    assert set(cells) == {"ns", "us"}
    compared = abstat("compare", "e:a", "e:b", "--metric", "t", "--store", mixed)
    assert compared.returncode == 2 and "unit=ns|us" in compared.stderr and "Traceback" not in compared.stderr
    for unit in ("ns", "us"):
        one = abstat("compare", "e:a", "e:b", "--metric", "t", "--store", mixed, "--where", f"unit={unit}",
                     "--format", "json")
        assert one.returncode == 0, one.stderr
        mine = json.loads(one.stdout)["comparisons"][0]
        theirs = metrics[f"t [{unit}]"]["comparisons"]["comparisons"][0]
        assert (mine["delta_pct"], mine["verdict"], mine["n"]) == (theirs["delta_pct"], theirs["verdict"], theirs["n"])
        assert cells[unit]["cells"]["b"]["comparison"]["detail"]["delta_pct"] == mine["delta_pct"]
        assert cells[unit]["cells"]["b"]["unit"] == unit
