"""The change ``abstat bisect`` reports is ``abstat compare``'s on the same runs (issue 34, "one result, one story"):
the culprit's (the ends'), each step's of a ``several`` answer, in text and JSON: the same number, interval, p-value
and label, on untied data and on a grid (integer cycles), where the plain Hodges-Lehmann shift of the raw values,
which bisect reported before, differs from the comparison's ratio of the spread values."""

from __future__ import annotations

import json

import numpy as np
import pytest

from abstat.comparison.core import compare
from abstat.history.bisect.driver import Report
from abstat.history.bisect.render import render
from abstat.history.bisect.segments import Bisection, simulate
from abstat.render.units import format_change


def _runs(search: Bisection, commit: int) -> list[float]:
    """The values measured at ``commit``, in their own unit (the search keeps them divided by a power of two)."""
    return [v * (search.unit or 1.0) for c, v, _ in search.samples if c == commit]


def _report(outcome, n: int) -> Report:
    return Report(outcome, [f"{i:040x}" for i in range(n + 1)], {}, experiment="x", confidence=0.95)


def _one_change(seed: int, grid: bool) -> tuple[Bisection, object]:
    """+0.4% at commit 5 of 8 in 0.15% noise at 2000 (cycles: rounded to whole ones on the ``grid``)."""
    rng = np.random.default_rng([34, 20, seed])

    def measure(commit: int) -> float:
        value = 2000.0 * (1.004 if commit >= 5 else 1.0) * (1 + 0.0015 * rng.normal())
        return float(round(value)) if grid else value

    search = Bisection(8, budget=600)
    return search, simulate(search, measure)


def _same(change, expected) -> None:
    assert change.delta_pct == expected.delta_pct and change.ci_pct == expected.ci_pct
    assert change.p_value == expected.p_value and change.estimand_label == expected.estimand_label


@pytest.mark.parametrize("grid", [False, True])
def test_the_culprits_change_is_compares_on_the_ends_runs(grid):
    search, outcome = _one_change(int(grid), grid)
    assert (outcome.status, outcome.culprit) == ("found", 5)
    expected = compare(_runs(search, 0), _runs(search, 8))
    _same(outcome.change, expected)
    text = render(_report(outcome, 8), "text")
    assert f"change {format_change(expected.delta_pct, expected.ci_pct)} (bad vs good: " in text
    assert expected.estimand_label in text and ("after spreading tied values" in text) == grid
    doc = json.loads(render(_report(outcome, 8), "json"))["change"]
    assert (doc["delta_pct"], doc["ci_pct"], doc["estimand_label"]) == (
        expected.delta_pct,
        expected.ci_pct,
        expected.estimand_label,
    )


def test_on_a_grid_compares_change_is_not_the_raw_shift():
    """The data of the test above, where the two estimands part: the raw shift and its Mann-Whitney interval move in
    whole cycles (1 of 2000: 0.05%), the comparison's ratio of the spread values does not, so before this change
    bisect printed another change than compare did on the same runs."""
    from abstat.stats.shift import hodges_lehmann

    search, outcome = _one_change(1, True)
    good, bad = _runs(search, 0), _runs(search, 8)
    raw = hodges_lehmann(np.asarray(good), np.asarray(bad), 0.95)
    before = [x / np.median(good) * 100 for x in (raw.estimate, raw.low, raw.high)]
    assert format_change(before[0], before[1:]) == "+0.38% [+0.30, +0.45]"  # what bisect printed
    assert format_change(outcome.change.delta_pct, outcome.change.ci_pct) == "+0.37% [+0.29, +0.46]"


def test_each_step_of_several_and_the_whole_range_are_compares():
    rng = np.random.default_rng([34, 20, 2])
    steps = {4: 0.05, 12: 0.05}

    def measure(commit: int) -> float:
        return float(round(1000.0 * (1 + sum(s for k, s in steps.items() if commit >= k)) + 3 * rng.normal()))

    search = Bisection(16, budget=800)
    outcome = simulate(search, measure)
    assert outcome.status == "several" and outcome.steps
    _same(outcome.change, compare(_runs(search, 0), _runs(search, 16)))
    text = render(_report(outcome, 16), "text")
    parts = {part.outcome.culprit: part for part in search.parts if part.outcome and part.outcome.status == "found"}
    for step in outcome.steps:
        part = parts[step.culprit]
        expected = compare(_runs(search, part.low), _runs(search, part.high))
        _same(step.change, expected)
        assert f"change {format_change(expected.delta_pct, expected.ci_pct)} (bad vs good: " in text
    doc = json.loads(render(_report(outcome, 16), "json"))
    assert [s["change"]["delta_pct"] for s in doc["steps"]] == [s.change.delta_pct for s in outcome.steps]
