"""``abstat run --format csv`` (and ``show --format csv``) carry the run notes
in a ``notes`` column, as ``abstat export --format csv`` does: same column
name, same join, same escaping; the files are read back with Python's csv
module, and the notes checked against what ``export`` says each run left."""

from __future__ import annotations

import csv
import io

from abstat.render.run_report import comparison_report
from abstat.store import open_store
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC
KILLED = "killed processes the command left running in its process group"


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_run_csv_has_the_notes_each_variants_runs_left(tmp_path):
    store = str(tmp_path / "s.db")
    # b leaves a child behind in its process group on every run: a note on each of its runs
    ran = abstat(
        "run",
        "--shell",
        "-n",
        "3",
        "--seed",
        "1",
        "--no-progress",
        "--store",
        store,
        "--experiment",
        "e",
        "-v",
        "a=true",
        "-v",
        "b=sleep 3 & true",
        "--format",
        "csv",
    )
    assert ran.returncode == 0, ran.stderr
    rows = rows_of(ran.stdout)
    exported = rows_of(abstat("export", "--store", store, "--format", "csv").stdout)
    assert list(rows[0])[-1] == "notes" and "notes" in exported[0]  # the same column name
    assert {r["metric"] for r in rows} >= {"wall", "user", "sys"}
    # the reference: the notes export wrote for each run (one row per sample; the wall sample is one per run)
    left = {
        variant: [r["notes"] for r in exported if r["variant"] == variant and r["metric"] == "wall"]
        for variant in ("a", "b")
    }
    assert len(left["b"]) == 3 and all(KILLED in notes for notes in left["b"])
    assert not any(KILLED in notes for notes in left["a"])
    for row in rows:
        assert (row["baseline"], row["candidate"]) == ("a", "b")
        assert f"{KILLED} (b: 3 runs)" in row["notes"].split("; ")
        for note in {n for notes in left["a"] + left["b"] for n in notes.split("; ") if n}:
            if note != KILLED:  # e.g. peak RSS not recorded on this kernel: figures may be merged to a range
                stem = note.split(" at most ")[0]
                assert any(part.startswith(stem) for part in row["notes"].split("; ")), (note, row["notes"])
    shown = rows_of(abstat("show", "e", "--store", store, "--format", "csv").stdout)
    assert shown == rows


def test_one_variant_summary_csv_has_the_notes_too(tmp_path):
    store = str(tmp_path / "s.db")
    ran = abstat(
        "run", "--shell", "-n", "2", "--no-progress", "--store", store, "-v", "b=sleep 3 & true", "--format", "csv"
    )
    assert ran.returncode == 0, ran.stderr
    rows = rows_of(ran.stdout)
    assert list(rows[0]) == ["metric", "variant", "n", "median", "min", "max", "unit", "notes"]
    assert all(f"{KILLED} (b: 2 runs)" in r["notes"].split("; ") for r in rows)


def _store_with_notes(path: str, notes_by_variant: dict[str, list[str]]) -> None:
    with open_store(path) as store:
        inv = store.start_invocation("x", {"hostname": "h"}, variants=list(notes_by_variant))
        position = 0
        for variant, notes in notes_by_variant.items():
            for i in range(6):
                value = (10.0 if variant == "before" else 9.0) + i * 0.1
                store.add_run(
                    inv,
                    variant=variant,
                    command="./b",
                    iteration=i,
                    position=position,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=value,
                    values={"wall": [value]},
                    units={"wall": "s"},
                    notes=notes,
                )
                position += 1
        store.finish_invocation(inv, "complete")


def test_notes_from_data_are_escaped_as_export_escapes_them(tmp_path):
    path = str(tmp_path / "s.db")
    evil = '=HYPERLINK("http://127.0.0.1/x","click"), with "quotes"\nand a new line'
    _store_with_notes(path, {"before": [evil], "after": []})
    with open_store(path, create=False) as store:
        text = comparison_report(store, "x", fmt="csv")
    [row] = rows_of(text)
    shown = evil.replace("\n", "\\x0a")  # csv_cell: a leading ' against formulas, control characters escaped
    assert row["notes"] == "'" + shown + " (before: 6 runs)"
    exported = rows_of(abstat("export", "--store", path).stdout)
    assert {r["notes"] for r in exported if r["variant"] == "before"} == {"'" + shown}
    assert not any(line.startswith("=") for line in text.splitlines())


def test_rows_without_notes_have_an_empty_cell_and_differing_figures_are_merged(tmp_path):
    path = str(tmp_path / "s.db")
    _store_with_notes(path, {"before": [], "after": ["peak RSS not recorded: at most 18368 KiB"]})
    with open_store(path) as store:
        inv = store.start_invocation("x", {"hostname": "h"}, variants=["after"])
        store.add_run(
            inv,
            variant="after",
            command="./b",
            iteration=0,
            position=0,
            status="ok",
            exit_code=0,
            started_at=0.0,
            wall=9.0,
            values={"wall": [9.0]},
            units={"wall": "s"},
            notes=["peak RSS not recorded: at most 18400 KiB"],
        )
        store.finish_invocation(inv, "complete")
        [row] = rows_of(comparison_report(store, "x", fmt="csv"))
        assert row["notes"] == "peak RSS not recorded: at most 18368 to 18400 KiB (after: 7 runs)"
        [first] = rows_of(comparison_report(store, "x", fmt="csv", invocations=[inv.id - 1]))
        assert first["notes"] == "peak RSS not recorded: at most 18368 KiB (after: 6 runs)"
    quiet = str(tmp_path / "quiet.db")
    _store_with_notes(quiet, {"before": [], "after": []})
    with open_store(quiet, create=False) as store:
        [row] = rows_of(comparison_report(store, "x", fmt="csv"))
    assert row["notes"] == ""
