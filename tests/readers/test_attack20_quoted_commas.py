"""attack20 A11: a CSV column of quoted decimal-comma numbers (``"12,5"``: how Python's csv module, like a
spreadsheet's export, writes a cell holding a comma) was read as labels, exit 0, nothing compared.  It is refused
as the unquoted ``12,5`` is; the same values written with a decimal point are read."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from abstat.readers import csvtable
from support.cli import run_abstat


def _write(path: Path, cells: list[str]) -> str:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)  # QUOTE_MINIMAL: a cell with a comma is quoted
        writer.writerow(["time", "x"])
        writer.writerows([cell, "1"] for cell in cells)
    return str(path)


@pytest.mark.parametrize(
    "spell",
    [lambda v: f"{v:.1f}".replace(".", ","), lambda v: f"{v * 1000:,.0f}", lambda v: f"{v * 1000:,.1f}"],
    ids=["decimal-comma", "grouped", "grouped-with-point"],
)
def test_a_column_of_comma_numbers_is_refused_not_taken_for_labels(tmp_path: Path, spell) -> None:
    a = _write(tmp_path / "a.csv", [spell(12.5 + 0.1 * i) for i in range(6)])
    b = _write(tmp_path / "b.csv", [spell(13.5 + 0.1 * i) for i in range(6)])
    assert '"' in Path(a).read_text()
    result = run_abstat("compare", a, b)
    assert result.returncode == 2, result.stdout
    assert "a.csv:2: column 'time':" in result.stderr
    assert "a decimal comma or a thousands separator?" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_same_values_with_a_decimal_point_are_compared(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.csv", [f"{12.5 + 0.1 * i:.1f}" for i in range(6)])
    b = _write(tmp_path / "b.csv", [f"{13.5 + 0.1 * i:.1f}" for i in range(6)])
    result = run_abstat("compare", a, b)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^time +12\.75 s +13\.75 s +\+7\.8%", result.stdout, re.M), result.stdout


def test_labels_with_commas_among_others_and_chosen_labels_stay_labels() -> None:
    text = 'cpus,t\n"0,1",5\nall,6\n"0,1",5.5\nall,6.5\n'
    sets = csvtable.read_csv("x.csv", text)
    assert sorted(s.labels["cpus"] for s in sets) == ["0,1", "all"]
    chosen = csvtable.read_csv("y.csv", 'cpus,t\n"0,1",5\n"2,3",6\n', label_columns=["cpus"])
    assert sorted(s.labels["cpus"] for s in chosen) == ["0,1", "2,3"]


def test_a_column_of_cpu_lists_beside_chosen_values_is_a_label() -> None:
    """With the value columns chosen, a column of CPU lists ("0,1", "2,3": every cell digits around commas) is
    only a label, as it is when named as one; refused only when abstat must guess which columns hold values."""
    text = 'cpus,t\n"0,1",5\n"2,3",6\n"0,1",5.5\n'
    sets = csvtable.read_csv("z.csv", text, value_columns=["t"])
    assert sorted(s.labels["cpus"] for s in sets) == ["0,1", "2,3"]
    with pytest.raises(Exception, match="a decimal comma or a thousands separator"):
        csvtable.read_csv("z.csv", text)
