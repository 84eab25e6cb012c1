"""A decimal comma with text around it, or inside white-space columns, is refused (attack19 F6, F10), and a
run-number column 1 is named (F12).  Before: ``time: 12,5`` lines were read as a CSV whose header was
``time: 12`` and ``5`` (exit 0, -71%), and ``-C 2`` on ``1 12,5`` read 12."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_abstat

_VALUES = ["12,5", "12,7", "12,9", "13,1", "12,6", "12,8"]


@pytest.mark.parametrize(
    ("line", "args"),
    [("time: {v}", []), ("{v} ms", []), ("x={v}", []), ("{i} {v}", ["-C", "2"])],
    ids=["prefix", "unit", "equals", "index-then-value"],
)
def test_decimal_commas_with_text_are_refused(tmp_path: Path, line: str, args: list[str]) -> None:
    paths = []
    for side, shift in (("a", 0), ("b", 1)):
        path = tmp_path / f"{side}.txt"
        values = [v[:-1] + str((int(v[-1]) + shift) % 10) for v in _VALUES]
        path.write_text("".join(line.format(i=i + 1, v=v) + "\n" for i, v in enumerate(values)))
        paths.append(str(path))
    result = run_abstat("compare", *args, *paths)
    assert result.returncode == 2, result.stdout
    assert "a decimal comma, a thousands separator or two columns?" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "a.txt:1:" in result.stderr


def test_columns_joined_by_commas_alone_are_still_read(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"{i},{100 + i % 3}\n" for i in range(1, 9)))
    b.write_text("".join(f"{i},{110 + i % 3}\n" for i in range(1, 9)))
    result = run_abstat("compare", "-C", "2", str(a), str(b))
    assert result.returncode == 0, result.stderr
    assert "101 → 111" in result.stdout


def test_a_run_number_in_column_1_is_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("".join(f"{i} {12.5 + 0.1 * (i % 4)}\n" for i in range(1, 7)))
    b.write_text("".join(f"{i} {12.0 + 0.1 * (i % 4)}\n" for i in range(1, 7)))
    result = run_abstat("compare", str(a), str(b))
    assert result.returncode == 0, result.stderr
    assert "column 1 of the file holds 1, 2, ..., 6: a run number? --column 2 reads the next column" in result.stdout
    plain = run_abstat("compare", "-C", "2", str(a), str(b))
    assert "run number" not in plain.stdout
    one, other = tmp_path / "one.txt", tmp_path / "other.txt"
    one.write_text("1\n2\n3\n4\n5\n6\n")  # one column: the values are the samples
    other.write_text("2\n3\n4\n5\n6\n7\n")
    assert "run number" not in run_abstat("compare", str(one), str(other)).stdout
