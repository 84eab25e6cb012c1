"""A table row answered at once (``tables.measured``: the cells joined, checked for what the escape
would change and for characters wider or narrower than one column) and padded by one format
(``tables.narrow_format``) against the cell-by-cell reference: ``escape.terminal`` of each cell,
``terminal.columns`` (unicodedata's widths) of each, ``tables.pad``; on random rows of printable and
control characters, CI commands, wide, combining and format characters and abstat's one-column marks."""

from __future__ import annotations

import random

from abstat.render import escape, tables, terminal

PIECES = ["a", "1,000.2", " ", "µs", "→", "±", "語", "\u0301", "\xad", "\u200b", "\x1b", "\n", "\u202e",
          ":", "::", "#", "##[", "é", "Ａ", "-", "\t", "\ud800", "", "x" * 12]  # fmt: skip


def _row(rng: random.Random) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 6))]


def test_measured_is_the_cell_by_cell_answer() -> None:
    rng = random.Random(7)
    narrow_seen = wide_seen = 0
    for _ in range(4000):
        row = _row(rng)
        cells, sizes, narrow = tables.measured(row)
        reference = [escape.terminal(c) for c in row]
        assert list(cells) == reference
        assert sizes == [terminal.columns(c) for c in reference]
        assert row == [c for c in row]  # the caller's row unchanged
        if narrow:
            narrow_seen += 1
            assert all(len(c) == terminal.columns(c) for c in cells)
            assert list(cells) == row and cells is row  # nothing to escape: the row itself
        else:
            wide_seen += 1
    assert narrow_seen > 200 and wide_seen > 200


def test_narrow_format_pads_as_pad() -> None:
    rng = random.Random(8)
    checked = 0
    for _ in range(3000):
        row = _row(rng)
        cells, sizes, narrow = tables.measured(row)
        if not narrow:
            continue
        widths = [size + rng.randint(0, 3) for size in sizes]
        align = [rng.choice("lr") for _ in row]
        assert tables.narrow_format(widths, align).format(*cells).rstrip() == tables.pad(cells, widths, align)
        checked += 1
    assert checked > 200
