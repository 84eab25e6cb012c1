"""Changes of 10^200-fold and more print short and render (attack19 L7: a 200-digit percentage, and
``report --format html`` ended in an internal OverflowError from the log axis at 1e300)."""

from __future__ import annotations

import re
from pathlib import Path

from abstat.render.units import format_pct
from support.cli import run_abstat


def _files(tmp_path: Path, scale: float) -> tuple[str, str]:
    one, big = tmp_path / "one.txt", tmp_path / "big.txt"
    one.write_text("".join(f"{1 + 0.001 * i}\n" for i in range(8)))
    big.write_text("".join(f"{scale * (1 + 0.001 * i)}\n" for i in range(8)))
    return str(one), str(big)


def test_a_huge_change_prints_three_significant_digits() -> None:
    assert format_pct(1.0019477662202624e202, 1) == "+1e+202"
    assert format_pct(-99.9, 1) == "-99.9" and format_pct(999_999.0, 0) == "+999999"
    assert format_pct(1_234_567.0, 2) == "+1.23e+06"


def test_compare_and_report_at_the_float_limit(tmp_path: Path) -> None:
    one, big = _files(tmp_path, 1e200)
    result = run_abstat("compare", one, big)
    assert result.returncode == 0, result.stderr
    assert re.search(r"\d{20}", result.stdout) is None and "+1e+202%" in result.stdout
    one, big = _files(tmp_path, 1.02e300)
    for fmt in ("html", "text", "json"):
        shown = run_abstat("report", one, big, "--format", fmt)
        assert shown.returncode == 0, shown.stderr
    assert "<svg" in run_abstat("report", one, big, "--format", "html").stdout


def test_documents_past_the_limit_are_refused_not_dropped() -> None:
    """attack19 L5: the 10,001st fio document and everything after it were dropped without a word."""
    import pytest

    from abstat.errors import InputError
    from abstat.readers.fio import load_document, load_documents

    text = '{"a": 1}\n' * 5
    assert len(load_documents("f.json", text, limit=5)) == 5
    with pytest.raises(InputError, match="more than 4 JSON documents"):
        load_documents("f.json", text, limit=4)
    assert load_document("f.json", text) == {"a": 1}
