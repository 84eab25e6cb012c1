"""attack18 M2: a kernel table's change relative to a baseline mean at or below 0 is undefined (as the Welch
line of the same block, judge.py and compare say): the audit shows the difference of the means instead of
``-100 -> -120 (+20%)``.  Reference: the difference computed here from the printed means."""

from __future__ import annotations

import json

import pytest

from support.cli import run_abstat

TABLE = (
    "Mean (standard deviation) of 10 runs:\n\n                 before            after\n"
    "offset_ns     {b} (5.0)     {a} (5.0)\n"
)


@pytest.mark.parametrize(("before", "after"), [(-100.0, -120.0), (0.0, 20.0), (-0.5, 3.0)])
def test_no_percent_against_a_baseline_mean_at_or_below_zero(tmp_path, before, after):
    path = tmp_path / "msd.txt"
    path.write_text(TABLE.format(b=before, a=after))
    text = run_abstat("audit", path)
    head = next(line for line in text.stdout.splitlines() if line.strip().startswith("offset_ns:"))
    assert f"({after - before:+g})" in head and "%" not in head, head
    data = json.loads(run_abstat("audit", path, "--format", "json").stdout)
    comparison = data["blocks"][0]["comparisons"][0]
    assert comparison["recomputed"]["percent"] is None
    assert comparison["recomputed"]["difference"] == pytest.approx(after - before)


def test_a_positive_baseline_keeps_its_percent(tmp_path):
    path = tmp_path / "msd.txt"
    path.write_text(TABLE.format(b=100.0, a=120.0))
    head = next(line for line in run_abstat("audit", path).stdout.splitlines() if "offset_ns:" in line)
    assert "(+20%)" in head
