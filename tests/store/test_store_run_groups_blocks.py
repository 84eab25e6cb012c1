"""``store.run_groups.run_groups`` read a block of rows at a time (a block without a run's second
sample of a metric filed by one loop) against a reference written here: each key's values in row
order, and, for the keys some run of which held several samples, where each of their runs starts;
on random row streams (one or several samples per run and metric, units changing, blocks of 1 to 9
rows so that runs cross the blocks' edges, a first row of NULLs as a damaged store hands out)."""

from __future__ import annotations

import random

import pytest

from abstat.store import run_groups as module


def _reference(rows):
    groups, runs_of = {}, {}  # key -> values; key -> [(run, count)] in order
    previous = None
    for variant, metric, invocation, value, unit, run in rows:
        key = (variant, metric, invocation, unit)
        same = previous is not None and (run, metric, unit) == previous[0]
        if same:
            previous[1].append(value)
            runs_of[previous[2]][-1][1] += 1
            continue
        if previous is None and (run, metric, unit) == (None, None, None):
            previous = ((run, metric, unit), [value], ())  # a first row of NULLs: the row path's "next sample"
            runs_of.setdefault((), []).append([run, 2])
            continue
        values = groups.setdefault(key, [])
        values.append(value)
        runs_of.setdefault(key, []).append([run, 1])
        previous = ((run, metric, unit), values, key)
    starts = {}
    for key, runs in runs_of.items():
        if any(count > 1 for _, count in runs):
            offsets, at = [], 0
            for _, count in runs:
                offsets.append(at)
                at += count
            starts[key] = offsets
    return groups, starts


def _rows(rng: random.Random) -> list[tuple]:
    rows = []
    several = rng.random() < 0.4
    for run in range(1, rng.randint(1, 61)):
        variant, invocation = rng.randint(1, 2), rng.randint(1, 3)
        for metric in rng.sample(["wall", "user", "sys"], rng.randint(1, 3)):
            unit = rng.choice([None, "s"])
            for _ in range(rng.randint(2, 4) if several and rng.random() < 0.3 else 1):
                rows.append((variant, metric, invocation, rng.random(), unit, run))
    if rows and rng.random() < 0.1:
        rows.insert(0, (None, None, None, 0.5, None, None))
    return rows


@pytest.mark.parametrize("block", [1, 2, 3, 9, 1 << 14])
def test_run_groups_is_the_reference(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(module, "BLOCK", block)
    rng = random.Random(block)
    kinds = set()
    for _ in range(400):
        rows = _rows(rng)
        groups, starts = module.run_groups(iter(rows))
        expected_groups, expected_starts = _reference(rows)
        expected_starts.pop((), None)
        assert groups == expected_groups
        assert {k: v for k, v in starts.items() if k != ()} == expected_starts
        kinds.add(bool(starts))
    assert kinds == {True, False}
