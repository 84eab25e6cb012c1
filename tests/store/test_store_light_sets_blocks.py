"""The column read makes its sets' indexes Python lists a block of sets at a time
(``store.columns.SETS_AT_ONCE``): with blocks of 1, 3 and 7 sets, every block boundary falling inside
the experiments' sets (of one invocation and of several), the sets are still the row path's."""

from __future__ import annotations

import importlib

import pytest

from abstat.store import columns

light = importlib.import_module("test_store_light_sets")


@pytest.mark.parametrize("block", [1, 3, 7])
def test_blocks_of_sets_make_the_row_paths_sets(tmp_path, monkeypatch, block):
    path = str(tmp_path / "s.db")
    light._seeded(path, 2)
    monkeypatch.setattr(columns, "SETS_AT_ONCE", block)
    assert light._column_path(path)
    rows, made, _, _ = light._both(path, {})
    assert made == rows
    assert len(rows) > 3 * block
    assert {len(s[4]) > 1 for s in made} == {True, False}  # sets of several invocations and of one
