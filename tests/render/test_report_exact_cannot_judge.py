"""A cell whose sides are constant and equal shows its exact change beside "cannot judge", as compare does,
and as its footnote says ("the change shown is exact"; attack18 L6: the cell showed no change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_abstat

GO = "BenchmarkX-8   1000   {ns} ns/op   64 B/op   1 allocs/op\n"


@pytest.fixture
def go_files(tmp_path: Path) -> Path:
    (tmp_path / "old.txt").write_text("".join(GO.format(ns=n) for n in (120, 122, 125, 121, 123, 124)))
    (tmp_path / "new.txt").write_text("".join(GO.format(ns=n) for n in (126, 125, 128, 127, 124, 129)))
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "table", "markdown", "email"])
def test_constant_equal_sides_show_the_exact_change(go_files: Path, fmt: str) -> None:
    result = run_abstat("report", "old.txt", "new.txt", "--format", fmt, cwd=go_files)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if "64.00 B/op" in line]
    assert rows and all("0.0% cannot judge" in row for row in rows)
    assert "the change shown is exact" in " ".join(result.stdout.split())  # (email wraps it)


def test_compare_shows_the_same_change(go_files: Path) -> None:
    result = run_abstat("compare", "old.txt", "new.txt", cwd=go_files)
    row = next(line for line in result.stdout.splitlines() if "64.00 B/op" in line)
    assert "0.0% cannot judge" in row


def test_the_html_line_says_cannot_judge_once(go_files: Path) -> None:
    # fix18c's left-over: "change cannot judge [1,2] — cannot judge"
    result = run_abstat("report", "old.txt", "new.txt", "--format", "html", "-o", "r.html", cwd=go_files)
    assert result.returncode == 0, result.stderr
    page = (go_files / "r.html").read_text()
    lines = [part for part in page.split("<p>") if "change 0.0% cannot judge" in part]
    assert len(lines) == 2 and all(line.count("cannot judge") == 1 for line in lines)
