"""The report's text table written a block of lines at a time (``tables.plain_text``, what
``render.matrix.plain_table`` uses: a history report's 10^5 x metrics rows no longer held every
row's cells and every padded line at once) is the text :func:`tables.plain` gives joined, byte for
byte: widths over every row, control characters escaped, wide characters counted as two columns."""

from __future__ import annotations

import random

import pytest

from abstat.render import tables


def _rows(count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    pieces = ["1700000000.0", "c9e9c61", "wall", "963.8 µs", "3", "-", "語", "a\x1bb", "x\ny", "", "::warn"]
    return [[rng.choice(pieces) * rng.randint(1, 3) for _ in range(4)] for _ in range(count)]


@pytest.mark.parametrize("count", [0, 1, 5, tables._BLOCK - 1, tables._BLOCK, 2 * tables._BLOCK + 3])
def test_plain_text_is_plain_joined_and_consumes_the_body(count: int) -> None:
    headers = ["commit_time", "rev", "metric", "a"]
    align = ["l", "l", "l", "r"]
    body = _rows(count, seed=count)
    expected = "\n".join(tables.plain(headers, [list(row) for row in body], align))
    assert tables.plain_text(headers, body, align) == expected
    assert all(row == [] for row in body)  # every row let go once written
    assert expected.count("\n") == count + 1  # header, rule, one line a row


def test_escaped_rows_are_copies_only_when_a_cell_changed() -> None:
    clean = ["1", "µs", "語"]
    assert tables._escaped(clean) is clean
    dirty = ["1", "a\x1bb"]
    assert tables._escaped(dirty) == ["1", "a\\x1bb"]
    assert dirty == ["1", "a\x1bb"]  # the caller's row unchanged
