"""A report cell's own centre (:func:`abstat.report.centres.cell_centre`) is computed only when no comparison
replaces it (``start_centre`` and ``settle``): the cells must read as when it was computed first, for the
baseline, compared cells, cells whose comparison failed, and cells with no baseline, on arrays and lists."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.readers.sampleset import SampleSet
from abstat.report import centres
from abstat.report.matrix import build_report


def _cells(sets: list[SampleSet], **options: object) -> list[tuple[object, ...]]:
    report = build_report(sets, **options)
    return [
        (row.labels.get("host"), cell.column, cell.center, cell.n, cell.dropped, cell.center_kind)
        for row in report.rows
        for cell in row.cells.values()
    ]


def _sets(rng: np.random.Generator, arrays: bool) -> list[SampleSet]:
    def run(values: np.ndarray) -> object:
        return values if arrays else values.tolist()

    grid = 20.0 * np.round(rng.normal(440, 7, 300) / 20)
    return [
        SampleSet(labels={"variant": "before", "host": "a"}, runs=[run(rng.lognormal(3, 0.5, 200))]),
        SampleSet(labels={"variant": "after", "host": "a"}, runs=[run(rng.lognormal(3.1, 0.5, 150))]),
        SampleSet(labels={"variant": "other", "host": "a"}, runs=[run(grid)]),
        SampleSet(labels={"variant": "after", "host": "b"}, runs=[run(rng.normal(-1, 1, 90))]),  # no baseline
        SampleSet(labels={"variant": "before", "host": "c"}, runs=[run(np.full(40, 7.0))]),
        SampleSet(labels={"variant": "after", "host": "c"}, runs=[run(np.array([1.0]))]),  # not comparable
    ]


@pytest.mark.parametrize("options", [{}, {"center": "mean"}, {"center": "median"}, {"outliers": "tukey"}])
def test_deferred_centres_read_as_computed_first(monkeypatch: pytest.MonkeyPatch, options: dict) -> None:
    rng = np.random.default_rng(3)
    sets = _sets(rng, arrays=True)
    deferred = _cells(sets, **options)
    assert _cells(_sets(np.random.default_rng(3), arrays=False), **options) == deferred  # lists: never deferred
    eager = centres.start_centre

    def at_once(cell: object, center: str, outliers: str) -> None:  # the centre computed before any comparison
        cell.center, cell.shown_kind, cell.n, cell.dropped = centres.cell_centre(cell.sample_set.runs, center, outliers)

    monkeypatch.setattr("abstat.report.matrix.start_centre", at_once)
    assert _cells(sets, **options) == deferred
    monkeypatch.setattr("abstat.report.matrix.start_centre", eager)
    alone = {(host, column): (centre, n) for host, column, centre, n, _, _ in deferred}[("b", "after")]
    values = sets[3].runs[0]
    if options.get("outliers", "none") == "none":  # no baseline: the cell's own centre, of all its values
        assert alone == (float(values.mean() if options.get("center") == "mean" else np.median(values)), 90)
