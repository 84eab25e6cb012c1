"""``ministat.counted``'s search path for a few distinct lines of one length (TSC counts): a block whose
every line is one of them is counted by ``bytes.count``; any other block (a new value, a longer or shorter
line, a blank line, a last line without its newline, a decimal) by splitting, with the same statistics as
the general reader's."""

from __future__ import annotations

import io
import random

import pytest

from abstat.ministat import counted
from abstat.ministat.dataset import sample_set
from abstat.readers.text import FGETS_CHUNK, parse_ministat

FIELDS = ("n", "min", "max", "median", "mean", "variance", "stddev")
ODD = ["4401", "44", "0440", "", "500", "-420", "440 ", "1" * 30]  # (none of them refused)


def _same(found, data: bytes) -> None:
    expected = sample_set(parse_ministat(data, "x"), "classic")
    assert found is not None
    for field in FIELDS:
        assert repr(getattr(found, field)) == repr(getattr(expected, field)), field
    ordered = expected.sorted_values
    x0, dx = ordered[0] - 0.5, (ordered[-1] - ordered[0] + 1) / 60
    assert found.column_counts(x0, dx) == expected.column_counts(x0, dx)


@pytest.mark.parametrize("seed", range(40))
def test_few_lines_counted_by_search_equal_the_general_reader(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    values = rng.sample(["400", "420", "440", "460", "480", "500", "520", "540", "560", "580"], rng.randint(1, 9))
    lines = [rng.choice(values) for _ in range(rng.randint(200, 3000))]
    odd = rng.choice([0, 0, 1, 3])
    for _ in range(odd):
        lines.insert(rng.randrange(len(lines)), rng.choice(ODD).replace(" ", ""))
    data = ("\n".join(lines) + rng.choice(["\n", ""])).encode()
    monkeypatch.setattr(counted, "BLOCK", rng.choice([16, 100, 1000, 1 << 18]))
    monkeypatch.setattr(counted, "DISTINCT_SHARE", 1.0)  # (small first blocks: not for being mostly distinct)
    searched = []
    original = counted._count_few
    monkeypatch.setattr(counted, "_count_few", lambda *a: searched.append(original(*a)) or searched[-1])
    for source in (data, io.BytesIO(data)):
        _same(counted.counted_sample_set(source, FGETS_CHUNK), data)
    if not odd and len(values) <= counted.FEW and len(data) // 4 > counted.BLOCK:
        assert any(searched), "no block was counted by searching"


def test_a_block_is_searched_only_when_every_line_is_known() -> None:
    counts = {b"440": 2, b"460": 1}
    assert counted._count_few(b"440\n460\n440\n", counts) == 3
    assert counts == {b"440": 4, b"460": 2}
    for block in (b"440\n4401\n", b"440\n46\n", b"440\n\n460\n", b"440\n460", b"\n440\n", b"440\n480\n", b""):
        before = dict(counts)
        assert counted._count_few(block, counts) == 0, block
        assert counts == before
    assert counted._count_few(b"7\n", {b"7": 1, b"07": 1}) == 0  # (two lengths: not searched)
    assert counted._count_few(b"7\n", {str(i).encode(): 1 for i in range(counted.FEW + 1)}) == 0


@pytest.mark.parametrize("late", [b"440.5\n", b"-0\n", b"4-4\n", b"x\n"])
def test_a_refused_line_after_searched_blocks_still_gives_none(late: bytes, monkeypatch) -> None:
    """A decimal after integers is refused too (the sums so far were not kept in order)."""
    monkeypatch.setattr(counted, "BLOCK", 64)
    data = b"440\n460\n" * 200 + late + b"440\n" * 10
    assert counted.counted_sample_set(io.BytesIO(data), FGETS_CHUNK) is None
    assert counted.counted_sample_set(data, FGETS_CHUNK) is None
