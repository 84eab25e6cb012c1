"""The report's text table (``render.matrix.plain_table``) made in two passes, each report row's
numbers kept in one flat list between them and the lines padded a block of rows at a time (a history
report's 10^5 x metrics rows no longer held a list per row), is the text :func:`tables.plain` gives
for :func:`render.matrix.table_grid`, joined, byte for byte: widths over every row, control
characters escaped, wide characters counted as two columns, the geometric-mean rows last."""

from __future__ import annotations

import random

import pytest

from abstat.render import tables
from abstat.render.matrix import BLOCK, plain_table, table_grid
from abstat.report import api
from abstat.report.sampleset import SampleSet

PIECES = ["1700000000.0", "c9e9c61", "wall", "語", "a\x1bb", "x\ny", "", "::warn", "é"]


def _sets(count: int, variants: list[str], seed: int) -> list[SampleSet]:
    rng = random.Random(seed)
    sets = []
    for index in range(count):
        rev = f"{index:05d}" + rng.choice(PIECES) * rng.randint(0, 3)
        for metric in ("wall", "u\x1b[31ms語"):
            for variant in variants:
                scale = rng.choice([1e-7, 1.0, 1e4])
                runs = [[scale * rng.uniform(1, 2) for _ in range(rng.randint(1, 6))]]
                sets.append(SampleSet(labels={"rev": rev, "metric": metric, "variant": variant}, runs=runs))
    return sets


def _expected(report) -> str:
    headers, body, align = table_grid(report)
    return "\n".join(tables.plain(headers, body, align))


@pytest.mark.parametrize("count", [1, 5, BLOCK // 2 - 1, BLOCK // 2 + 1])
def test_plain_table_is_plain_of_the_grid(count: int) -> None:
    report = api.build(_sets(count, ["a"], seed=count))
    text = plain_table(report)
    assert text == _expected(report)
    assert text.count("\n") == 2 * count + 1  # header, rule, one line a row


def test_plain_table_with_comparisons_and_geomean_rows() -> None:
    report = api.build(_sets(6, ["a", "b", "c\x07語"], seed=3), baseline="a")
    assert report.summaries  # geometric-mean rows at the end
    text = plain_table(report)
    assert text == _expected(report)
    assert "geomean" in text.splitlines()[-1]


def test_plain_table_without_row_keys() -> None:
    sets = [SampleSet(labels={"variant": v}, runs=[[1.0, 2.0, 3.0 + i]]) for i, v in enumerate(["a", "b"])]
    report = api.build(sets)
    assert plain_table(report) == _expected(report)


def test_escaped_rows_are_copies_only_when_a_cell_changed() -> None:
    clean = ["1", "µs", "語"]
    assert tables.escaped(clean) is clean
    dirty = ["1", "a\x1bb"]
    assert tables.escaped(dirty) == ["1", "a\\x1bb"]
    assert dirty == ["1", "a\x1bb"]  # the caller's row unchanged
