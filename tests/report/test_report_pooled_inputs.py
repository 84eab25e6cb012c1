"""A report never changes the sets it is given: a set alone in its cell is used as it is, and two sets
with the same labels are pooled into a copy (report/layout.fill_grid shares instead of copying, for
memory on history stores; issue 42)."""

from __future__ import annotations

import copy

from abstat.report.matrix import build_report
from abstat.report.sampleset import SampleSet


def _sets() -> list[SampleSet]:
    base = [100.0 + 0.1 * i for i in range(20)]
    return [
        SampleSet(labels={"variant": "a", "metric": "wall"}, runs=[base], source="a1.txt", notes=["first"]),
        SampleSet(labels={"variant": "a", "metric": "wall"}, runs=[[x + 0.05 for x in base]], source="a2.txt"),
        SampleSet(labels={"variant": "b", "metric": "wall"}, runs=[[x + 5.0 for x in base]], source="b.txt"),
    ]


def test_pooling_leaves_the_inputs_unchanged() -> None:
    sets = _sets()
    before = copy.deepcopy(sets)
    report = build_report(sets, by="variant", baseline="a")
    assert [(s.labels, s.runs, s.notes) for s in sets] == [(s.labels, s.runs, s.notes) for s in before]
    (row,) = report.rows
    pooled = row.cells["a"].sample_set
    assert pooled is not sets[0] and pooled is not sets[1]
    assert pooled.runs == before[0].runs + before[1].runs  # both files' runs, in input order
    assert any("pooled as separate runs" in note for note in pooled.notes)
    assert row.cells["b"].sample_set is sets[2]  # alone in its cell: the input itself, unchanged
    assert row.cells["b"].n == 20 and row.cells["a"].n == 40


def test_a_second_report_of_the_same_sets_is_the_same() -> None:
    sets = _sets()
    first, second = (build_report(sets, by="variant", baseline="a") for _ in range(2))
    assert first.to_dict() == second.to_dict()
