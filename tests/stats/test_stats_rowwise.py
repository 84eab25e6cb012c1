"""The row-wise forms used on many runs (``outliers.classify_runs``, ``diagnostics.drifting_runs``)
give exactly what the one-run functions give run by run, on awkward data: ties, quantized
grids with a zero IQR, trends, autocorrelation, outliers, NaN, mixed sizes."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats import diagnostics, outliers


def _runs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    runs: list[np.ndarray] = []
    for index in range(300):
        size = int(rng.choice([3, 4, 9, 10, 12, 50]))
        kind = index % 6
        if kind == 0:
            run = rng.normal(100, 5, size)
        elif kind == 1:  # quantized (TSC steps of 20), often a zero IQR
            run = 20.0 * rng.choice([50, 50, 50, 51, 60], size)
        elif kind == 2:  # a trend
            run = np.arange(size) * 0.5 + rng.normal(0, 1, size)
        elif kind == 3:  # AR(1)
            run = np.empty(size)
            run[0] = 0.0
            for i in range(1, size):
                run[i] = 0.9 * run[i - 1] + rng.normal()
        elif kind == 4:  # outliers, mild and severe
            run = rng.normal(10, 1, size)
            run[: max(1, size // 5)] += rng.choice([4.0, 40.0])
        else:  # constant, or with a NaN
            run = np.full(size, 7.0)
            if index % 12 == 5:
                run = rng.normal(0, 1, size)
                run[size // 2] = np.nan
        runs.append(run)
    return runs


@pytest.mark.parametrize("rule", ["none", "tukey", "mad"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_classify_runs_is_classify_and_keep_mask_per_run(rule: str, seed: int) -> None:
    runs = _runs(seed)
    mild = severe = dropped = 0
    expected = []
    for run in runs:
        counts = outliers.classify(run)
        mild, severe = mild + counts.mild, severe + counts.severe
        mask = outliers.keep_mask(run, rule)
        dropped += int(run.size - mask.sum())
        expected.append(run[mask])
    got = outliers.classify_runs(runs, rule)
    assert got[:3] == (mild, severe, dropped)
    assert severe > 0 and mild > 0 and (dropped > 0) == (rule != "none")
    for want, have in zip(expected, got[3]):
        np.testing.assert_array_equal(want, have)


@pytest.mark.parametrize("level", [0.01, 0.2])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_drifting_runs_counts_what_drift_flags_per_run(level: float, seed: int) -> None:
    runs = _runs(seed)
    expected = sum(1 for run in runs if run.size >= diagnostics.DRIFT_MIN_N and diagnostics.drift("x", run, level))
    assert expected > 0
    assert diagnostics.drifting_runs(runs, level) == expected


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError):
        outliers.classify_runs([np.arange(5.0)], "iqr")
