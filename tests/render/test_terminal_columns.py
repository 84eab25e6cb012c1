"""Widths in terminal columns (issue 27): wide characters (CJK, full-width forms) take two columns and
combining marks none, so names in them do not shift the columns of ``list`` and the text tables.  The
reference for a string's width is rich's own cell table (``rich.cells.cell_len``), not our function."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from abstat.cli import main as cli_main
from abstat.render import tables
from abstat.render.terminal import ONE_COLUMN, columns, ljust, rjust
from support import paths

SRC = paths.SRC
NAMES = ["plain", "測試", "ベンチマーク-ipi", "cafe\u0301-x", "ｆｕｌｌ", "e\u0301\u0301\u0301", "Ünïcödé"]


@pytest.mark.parametrize(
    "text", NAMES + ["", "中文 and ascii", "\u00ad", "\u200b", "".join(sorted(ONE_COLUMN)), "1 µs → 2 µs"]
)
def test_columns_agree_with_richs_cell_table(text):
    assert columns(text) == cell_len(text)
    assert cell_len(ljust(text, 20)) == 20 and cell_len(rjust(text, 20)) == 20
    assert ljust(text, 0) == text


def test_zero_width_joiner_takes_no_column():
    # rich joins a ZWJ sequence into one cluster (emoji); between letters terminals draw both letters
    assert columns("\u200d") == 0 and columns("a\u200db") == 2


def _starts(line: str) -> list[int]:
    """The terminal column at which each field (separated by two spaces or more) starts."""
    return [cell_len(line[: m.start()]) for m in re.finditer(r"(?:^|(?<=  ))\S", line)]


def _aligned(lines: list[str], fields: int) -> None:
    starts = [_starts(line)[:fields] for line in lines if line.strip()]
    assert all(len(s) == fields for s in starts), lines
    assert all(s == starts[0] for s in starts), "\n".join(lines)


def test_plain_tables_align_wide_and_combining_cells():
    body = [[name, "12", "x"] for name in NAMES]
    lines = tables.plain(["NAME", "N", "END"], body, ["l", "r", "l"])
    _aligned(lines[2:], 3)
    assert {cell_len(line[: line.index("END")]) for line in lines[:1]} == {_starts(lines[2])[2]}
    # right-aligned: every line ends its second field at one column
    ends = {cell_len(line[: line.index("12") + 2]) for line in lines[2:]}
    assert len(ends) == 1


def test_list_columns_do_not_shift(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC}
    for name in ("測試-ipi", "cafe\u0301", "plain"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "abstat",
                "run",
                "-n",
                "1",
                "--no-progress",
                "--store",
                str(tmp_path / "s.db"),
                "--experiment",
                name,
                "-v",
                "a=true",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert done.returncode == 0, done.stderr
    out = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--store", str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    ).stdout
    lines = out.splitlines()
    assert len(lines) == 4 and "測試-ipi" in out
    _aligned(lines, 8)


def test_compare_summary_aligns_wide_variant_names(tmp_path, capsys):
    os.chdir(tmp_path)
    Path("a.txt").write_text("\n".join(str(100 + i % 7) for i in range(30)))
    Path("b.txt").write_text("\n".join(str(90 + i % 7) for i in range(30)))
    Path("c.txt").write_text("\n".join(str(110 + i % 7) for i in range(30)))
    assert cli_main(["compare", "base=a.txt", "新しい版=b.txt", "x=c.txt"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "→" in line]
    assert len(lines) == 2, lines
    # the name, the change and the verdict columns start at one terminal column on both lines, and the
    # (right-aligned) pair of centres ends at one
    starts = [_starts(line) for line in lines]
    assert starts[0][1] == starts[1][1] and starts[0][3:5] == starts[1][3:5], lines
    pair_ends = {cell_len(line[: line.index("%")].rstrip("-+.0123456789")) for line in lines}
    assert len(pair_ends) == 1, lines


def test_list_names_hosts_as_report_does(tmp_path, capsys):
    """The host label when an invocation has one (as report and show name it), else the hostname."""
    from abstat.report import api
    from abstat.store import open_store

    path = str(tmp_path / "h.db")
    with open_store(path) as store:
        for experiment, hostname, labels in (
            ("ab", "box-17.lab", {"host": "milan"}),
            ("ab", "box-18.lab", {}),
            ("other", "ci", {}),
        ):
            invocation = store.start_invocation(experiment, {"hostname": hostname}, labels=labels, variants=["a"])
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
                values={"wall": [0.01]},
                units={"wall": "s"},
            )
            store.finish_invocation(invocation, "complete")
    assert cli_main(["list", "--store", path, "--format", "json"]) == 0
    import json

    listed = {e["name"]: e["hosts"] for e in json.loads(capsys.readouterr().out)}
    assert listed == {"ab": ["box-18.lab", "milan"], "other": ["ci"]}
    report_hosts = sorted({s.labels["host"] for s in api.load([], store=path, where={"experiment": {"ab"}})})
    assert listed["ab"] == report_hosts
    assert cli_main(["list", "--store", path]) == 0
    assert "box-18.lab,milan" in capsys.readouterr().out


def test_history_change_table_aligns_wide_revision_names(tmp_path, capsys):
    """Revisions named in CJK (a CSV's rev column) do not shift the change-point table's columns."""
    import random

    rng = random.Random(5)
    rows = ["rev,ns"]
    for i in range(40):
        name = f"版本{i:02d}" if i % 2 else f"r{i:02d}"
        rows += [f"{name},{rng.gauss(1000 if i < 21 else 1100, 5):.2f}" for _ in range(5)]
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    assert cli_main(["history", "--input", str(tmp_path / "h.csv"), "--metric", "ns"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("revision"))
    table = [lines[start]] + [line for line in lines[start + 1 : start + 4] if line.startswith("  ") and "%" in line]
    assert len(table) >= 2 and any(columns(line) != len(line) for line in table[1:]), lines
    _aligned(table, 4)
