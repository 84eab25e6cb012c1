"""attack21 B6: ``report`` of abstat's own ``export --format csv`` took every numeric column (run, iteration,
index, invocation, started_at) for a metric and pooled wall, user and sys (one unit) into one sample set.  The
export is read back as the store's sets: the reference is ``report --store`` of the store exported, cell for
cell (two invocations, and a metric of several samples per run, so both run-group rules are met).  Another CSV
with a ``metric`` column beside several columns of numbers is refused naming ``--csv-value``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from support.cli import run_abstat

EMIT = "sh -c 'echo t: {a}; echo t: {b}; echo t: {c}'"


def _cells(text: str) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if k != "source"} for row in csv.DictReader(io.StringIO(text))]


def test_report_of_the_export_is_the_report_of_the_store(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    for _ in range(2):  # two invocations
        variants = ["-v", "old=" + EMIT.format(a=5, b=7, c=9), "-v", "new=" + EMIT.format(a=6, b=8, c=11)]
        metric = ["--metric", "t=t: ([0-9.]+):ns"]
        run = run_abstat(
            "run", "--store", store, "-n", "3", "--experiment", "rt", "--no-json-lines", *metric, *variants
        )
        assert run.returncode == 0, run.stderr
    export = run_abstat("export", "--store", store, "-o", tmp_path / "e.csv", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    stored = run_abstat("report", "--store", store, "--format", "csv", cwd=tmp_path)
    exported = run_abstat("report", tmp_path / "e.csv", "--format", "csv", cwd=tmp_path)
    assert exported.returncode == stored.returncode == 0, exported.stderr + stored.stderr
    cells = _cells(exported.stdout)
    assert cells == _cells(stored.stdout)
    assert {"wall", "user", "sys", "t"} <= {c["metric"] for c in cells}
    assert not {"run", "iteration", "index", "invocation", "started_at", "value"} & {c["metric"] for c in cells}
    one = run_abstat("report", tmp_path / "e.csv", "--metric", "t", cwd=tmp_path)
    assert one.returncode == 0 and "metric=t" in one.stdout, one.stderr


def test_a_metric_column_beside_several_numbers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("variant,metric,value,run\nold,wall,1.0,1\nold,wall,1.1,2\nnew,wall,1.2,1\nold,user,0.5,1\n")
    result = run_abstat("report", path)
    assert result.returncode == 2, result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert "a 'metric' column names each row's metric" in line and "(value, run)" in line and "--csv-value" in line
    chosen = run_abstat("report", path, "--csv-value", "value")
    assert chosen.returncode == 0 and "wall" in chosen.stdout and "user" in chosen.stdout, chosen.stderr
