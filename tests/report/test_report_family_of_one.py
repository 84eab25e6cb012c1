"""A table of one comparison is not adjusted (abstat.report.adjust.adjust_family: a family of one), so its
footer names no rule: newcomer22's item 11 saw "after Holm over the 1 comparisons" on a two-file report.
Two comparisons or more still name Holm and how many."""

from __future__ import annotations

import random

import pytest


@pytest.fixture
def files(tmp_path):
    rng = random.Random(3)
    for name, centre in (("a", 100), ("b", 102), ("c", 101)):
        (tmp_path / name).write_text("".join(f"{rng.gauss(centre, 3):.3f}\n" for _ in range(20)))
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "email"])
def test_one_comparison_names_no_adjustment(abstat_cli, files, fmt):
    out = abstat_cli("report", "a", "b", "--format", fmt, check=True).stdout
    (star,) = [line for line in out.splitlines() if line.startswith("* = ")]
    assert star.startswith("* = significant at 5%"), star
    assert "Holm" not in out and "1 comparisons" not in out, star
    three = abstat_cli("report", "a", "b", "c", "--format", fmt, check=True).stdout
    assert "Holm" in three and "over the 2 comparisons" in three or "table's 2 comparisons" in three
