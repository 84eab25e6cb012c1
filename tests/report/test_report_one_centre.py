"""A report's row, and ``compare A B C``, show one centre per variant: the comparisons' own (wave 20).

A baseline whose run medians lie on two levels 500 apart (15 x 900, 25 x 1,400) against a candidate measured
to 0.1 and one on the same two levels: the first comparison reads the baseline's levels as they are (cells
limited by the fine candidate's gaps), the second spread them over 500-wide cells, and the baseline's cell
showed the second's pseudo-median (1,194.12) beside the first's (1,122.5).  The reference: the median of all
Walsh averages of the baseline's run medians' logarithms, unspread."""

from __future__ import annotations

import math

import numpy as np

from abstat.readers.sampleset import SampleSet
from abstat.report.analysis import analyse
from abstat.report.api import build_report

BASE = [[900.0] * 3] * 15 + [[1400.0] * 3] * 25
FINE = [list(run) for run in np.round(np.random.default_rng(1).normal(1000.0, 30.0, (40, 3)), 1)]
COARSE = [[900.0] * 3] * 20 + [[1400.0] * 3] * 20


def _unspread_centre(runs: list[list[float]]) -> float:
    logs = np.log([float(np.median(run)) for run in runs])
    i, j = np.triu_indices(logs.size)
    return math.exp(float(np.median((logs[i] + logs[j]) / 2.0)))


def test_a_row_shows_its_baseline_one_way() -> None:
    sets = [SampleSet(labels={"variant": name}, runs=runs) for name, runs in (("a", BASE), ("b", FINE), ("c", COARSE))]
    cells = build_report(sets, by="variant", baseline="a").to_dict()["rows"][0]["cells"]
    truth = _unspread_centre(BASE)
    assert math.isclose(cells["a"]["center"], truth, rel_tol=1e-12)
    for name in ("b", "c"):
        assert cells[name]["comparison"]["detail"]["centers"][0] == cells["a"]["center"]
        assert cells[name]["comparison"]["detail"]["centers"][1] == cells[name]["center"]


def test_compare_of_several_candidates_shows_one_baseline_centre() -> None:
    comparisons = analyse({"a": BASE, "b": FINE, "c": COARSE})
    assert len({c.centers[0] for c in comparisons}) == 1
    assert math.isclose(comparisons[0].centers[0], _unspread_centre(BASE), rel_tol=1e-12)
