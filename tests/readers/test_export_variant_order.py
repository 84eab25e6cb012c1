"""attack23 #2: ``report export.csv`` took the variant met first in the file for the baseline, but ``abstat
export`` writes the rows in the order the runs ran (shuffled round by round): about half the exports reversed
the comparison of ``report --store`` (gcc/clang: +4.4% slower read -4.2% faster, the gate passed).  The export
says each variant's place (``variant_order``) and the reader orders by it: on every seed, the report of the
export is the report of the store, cell for cell (the reference: ``report --store`` itself)."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from support.cli import run_abstat

SEEDS = (1, 2, 3, 4)


def _cells(text: str) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if k != "source"} for row in csv.DictReader(io.StringIO(text))]


def _store(tmp_path: Path, seed: int) -> Path:
    store = tmp_path / f"s{seed}.db"
    (tmp_path / "v.py").write_text(
        "import random, sys\nfor _ in range(3): print('t: %.4f' % (float(sys.argv[1]) * random.gauss(1, 0.005)))\n"
    )
    variants = ["-v", f"gcc={sys.executable} v.py 100", "-v", f"clang={sys.executable} v.py 105"]
    run = run_abstat(
        "run", "--store", store, "-n", "6", "--seed", seed, "--experiment", "e", "--metric", "t=t: ([0-9.]+):ns",
        "--no-progress", "--no-json-lines", *variants, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return store


def test_the_export_reports_as_the_store_on_every_seed(tmp_path: Path) -> None:
    first_met = set()
    for seed in SEEDS:
        store = _store(tmp_path, seed)
        export = tmp_path / f"e{seed}.csv"
        assert run_abstat("export", "--store", store, "-o", export).returncode == 0
        rows = list(csv.DictReader(export.open()))
        first_met.add(rows[0]["variant"])
        stored = run_abstat("report", "--store", store, "--metric", "t", "--format", "csv", cwd=tmp_path)
        exported = run_abstat("report", export, "--metric", "t", "--format", "csv", cwd=tmp_path)
        assert stored.returncode == exported.returncode == 0, stored.stderr + exported.stderr
        cells = _cells(exported.stdout)
        assert cells == _cells(stored.stdout), seed
        assert [c["baseline"] for c in cells] == ["gcc", "gcc"] and cells[1]["verdict"] == "slower"
        gate = run_abstat("report", export, "--metric", "t", "--fail-on", "slower", cwd=tmp_path)
        assert gate.returncode == 1, gate.stdout + gate.stderr
        assert {(r["variant"], r["variant_order"]) for r in rows} == {("gcc", "1"), ("clang", "2")}
    assert first_met == {"gcc", "clang"}  # some exports begin with the candidate: the order is not the rows'


def test_an_older_export_says_its_baseline_is_the_first_met(tmp_path: Path) -> None:
    export = tmp_path / "old.csv"
    assert run_abstat("export", "--store", _store(tmp_path, 1), "-o", export).returncode == 0
    table = list(csv.reader(export.open()))
    keep = [i for i, name in enumerate(table[0]) if name != "variant_order"]
    older = tmp_path / "older.csv"
    with older.open("w", newline="") as out:
        csv.writer(out).writerows([[row[i] for i in keep] for row in table])
    result = run_abstat("report", older, "--metric", "t", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no column 'variant_order' (an older abstat export)" in result.stdout
    assert "--baseline" in result.stdout
