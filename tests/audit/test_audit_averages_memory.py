"""attack18 M5 (the rest): the averages finder took about 60 times a one-line input in memory (a 2 MB line of
``x x x ...``: 122 MB), a (start, end) pair per word of the line.  It now reads a row's words from the end,
only while they are numbers and at most ``MAX_VALUES`` of them.  Reference: the input's own size, measured by
tracemalloc (allocations, not time); the rows found are those of the whole-line reading for short lines."""

from __future__ import annotations

import tracemalloc

import pytest

from abstat.audit.averages import MAX_VALUES, find_averages

SIZE = 1024 * 1024  # characters of the one line


@pytest.mark.parametrize("word", ["x ", "1 ", "1ms "], ids=["words", "numbers", "glued"])
def test_a_one_line_paste_costs_a_few_times_its_size(word):
    line = "Average " + word * (SIZE // len(word))
    text = f"{line}\n{line}\n"
    tracemalloc.start()
    try:
        find_averages(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(text), f"{peak / len(text):.1f} times the text"


def _table(width: int) -> str:
    values = " ".join(str(k) for k in range(1, width + 1))
    return f"mean unpatched: {values} ms\nmean patched: {values} ms\n"


def test_a_row_of_averages_holds_up_to_max_values_numbers():
    (claim,) = find_averages(_table(MAX_VALUES))
    assert [label for label, _ in claim.rows] == ["mean unpatched", "mean patched"]
    assert claim.rows[1][1] == [float(k) for k in range(1, MAX_VALUES + 1)]
    assert claim.unit == "ms"
    assert find_averages(_table(MAX_VALUES + 1)) == []
