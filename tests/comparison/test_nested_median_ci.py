"""attack22 A10: with runs as the unit, the variant's "median CI" (show, compare --verbose, JSON
``summaries[].median_ci``) was the order-statistic interval of every sample pooled, as if 30 samples of 6 runs
were independent: a 90% interval held the true median in 59% of the draws.  It is now the distribution-free
interval from the run medians."""

from __future__ import annotations

import abstat
import numpy as np
from abstat.stats.location import median_ci_of_sorted


def _runs(rng, k=6, n=5):
    return [list(100 + rng.normal(0, 3) + rng.normal(0, 1, n)) for _ in range(k)]


def test_the_interval_of_nested_data_holds_its_confidence():
    rng = np.random.default_rng(1)
    held = 0
    draws = 400
    for _ in range(draws):
        c = abstat.compare(_runs(rng), _runs(rng), confidence=0.90)
        low, high = c.summaries[0].median_ci
        held += low <= 100 <= high
    assert held / draws >= 0.88  # main: 0.59


def test_it_is_the_run_medians_interval():
    rng = np.random.default_rng(2)
    runs = _runs(rng, k=9)
    c = abstat.compare(runs, _runs(rng, k=9), confidence=0.95)
    expected = median_ci_of_sorted(np.sort([float(np.median(run)) for run in runs]), 0.95)
    assert c.summaries[0].median_ci == expected
    few = abstat.compare(_runs(rng, k=4), _runs(rng, k=4), center="median")  # 4 run medians: no 95% interval
    assert few.summaries[0].median_ci is None
    assert any("4 runs (their medians) cannot give" in w.message for w in few.warnings), few.warnings
