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


def test_the_median_beside_the_interval_is_the_run_medians_median(abstat_cli, tmp_path):
    """attack23 #7: the median column stayed the pooled samples' while its interval came from the run medians; a
    first run of 100 samples at 2x and eleven of 2 at 1x put the median (~200) outside its own interval (~100)."""
    rng = np.random.default_rng(3)
    runs = [list(200 * rng.normal(1, 0.001, 100))] + [list(100 * rng.normal(1, 0.01, 2)) for _ in range(11)]
    other = [list(200 * rng.normal(1, 0.001, 100))] + [list(100 * rng.normal(1, 0.01, 2)) for _ in range(11)]
    c = abstat.compare(runs, other)
    medians = np.sort([float(np.median(run)) for run in runs])
    summary = c.summaries[0]
    assert summary.median == float(np.median(medians)) and summary.median_ci == median_ci_of_sorted(medians, 0.95)
    assert summary.median_ci[0] <= summary.median <= summary.median_ci[1]
    # the table says what it shows: each file one run
    for name, data in (("a", runs), ("b", other)):
        for i, run in enumerate(data):
            (tmp_path / f"{name}-{i:02d}.txt").write_text("".join(f"{v}\n" for v in run))
    done = abstat_cli("compare", "--verbose", "--format", "markdown", "a=a-*.txt", "b=b-*.txt")
    row = next(line for line in done.stdout.splitlines() if line.startswith("| a |"))
    cells = [cell.strip() for cell in row.split("|")]
    assert float(cells[5]) < 101 and "median, CI: of run medians" in row, done.stdout + done.stderr
