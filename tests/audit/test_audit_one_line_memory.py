"""attack18 M5: audit took about 100 times a one-line input in memory (8 MB of ``x x x ...``: 849 MB), most of
it in the ``mean (sd)`` label match (a lazy repeated group over millions of words) and the per-run header
split.  The kernel tables' finders now stay within a few times the line.  Reference: the input's own size,
measured by tracemalloc (allocations, not time)."""

from __future__ import annotations

import tracemalloc

import pytest

from abstat.audit import kernel_tables

LINE = "x " * (512 * 1024)  # 1 MiB, one line


@pytest.mark.parametrize("finder", [kernel_tables.find_mean_sd, kernel_tables.find_per_run], ids=["mean_sd", "per_run"])
def test_a_one_line_paste_costs_a_few_times_its_size(finder):
    lines = [LINE]
    tracemalloc.start()
    try:
        finder(lines, set())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(LINE), f"{peak / len(LINE):.1f} times the line"
