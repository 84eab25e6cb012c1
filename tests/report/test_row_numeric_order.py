"""A sweep's rows in numeric order (attack23's leftover: a shuffled ``threads`` sweep printed its rows 2, 1, 4, 8,
the order the values were first met); labels that are not all numbers keep the order first seen."""

from __future__ import annotations

import csv
import io
import random

from abstat.report.layout import _numeric_order


def test_numbers_sort_as_numbers_and_anything_else_keeps_its_order():
    assert _numeric_order(["2", "1", "16", "4", "8"]) == ["1", "2", "4", "8", "16"]
    assert _numeric_order(["0.5", "-1", "1e3"]) == ["-1", "0.5", "1e3"]
    for kept in (["b", "a"], ["2", "x", "1"], ["2", "nan", "1"], ["2", "inf", "1"], []):
        assert _numeric_order(kept) == kept


def test_a_shuffled_sweep_reports_its_rows_in_numeric_order(abstat_cli, tmp_path):
    rng = random.Random(2)
    rows = [
        (variant, threads, f"{factor * rng.gauss(10, 0.1) / threads:.4f}")
        for variant, factor in (("old", 1.0), ("new", 1.05))
        for threads in (1, 2, 4, 8)
        for _ in range(5)
    ]
    rng.shuffle(rows)
    assert rows[0][1] != 1  # the first row met is not the smallest setting
    path = tmp_path / "sweep.csv"
    path.write_text("variant,threads,time\n" + "".join(f"{v},{t},{x}\n" for v, t, x in rows))
    done = abstat_cli("report", str(path), "--metric", "time", "--format", "csv")
    assert done.returncode == 0, done.stderr
    table = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [row["threads"] for row in table if row["column"] == "new" and row["kind"] == "cell"] == [
        "1",
        "2",
        "4",
        "8",
    ], done.stdout
