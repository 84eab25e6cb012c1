"""A pasted line of a million characters costs memory of its own order in the ministat finder (attack19 F7:
one 8 MB line of numbers peaked at 1.6 GB; Python's re held ~800 bytes a word repeating its groups)."""

from __future__ import annotations

import tracemalloc

from abstat.audit.scan import find_blocks


def test_find_blocks_on_a_long_line_of_numbers_stays_small() -> None:
    text = "1.5 " * 262_144 + "\n"  # 1 MiB
    tracemalloc.start()
    try:
        blocks = find_blocks(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert blocks == []
    assert peak < 10 * len(text)  # was 210 MB
