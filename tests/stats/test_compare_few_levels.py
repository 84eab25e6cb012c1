"""Wave 14's shortcuts of the default comparison on tied data against independent references (issue 42):
the average ranks of a sample of few distinct values (a comparison per level instead of an argsort)
against scipy's ``rankdata`` and the argsort path, and the weighted order statistics of the pairwise
differences picked from entries sorted once per gather against the formed and sorted differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abstat.stats import diagnostics
from abstat.stats.pairwise import differences


def _few_levels(rng: np.random.Generator, n: int) -> np.ndarray:
    k = int(rng.integers(2, diagnostics.FEW_LEVELS + 1))
    levels = rng.choice([-np.inf, -3.5, -0.0, 0.0, 1e-300, 2.0, 7.25, 1e300, np.inf, 440.0, 460.0], k, replace=False)
    values = rng.choice(levels, n, p=rng.dirichlet(np.full(k, 0.5)))
    return values if len(np.unique(values)) > 1 else np.r_[values, levels[levels != values[0]][:1]]


def test_ranks_of_few_levels_are_scipys_and_the_argsort_paths():
    rng = np.random.default_rng(14)
    for _ in range(400):
        values = _few_levels(rng, int(rng.integers(2, 300)))
        distinct = diagnostics.distinct_count(np.sort(values))
        assert 1 < distinct <= diagnostics.FEW_LEVELS
        fast = diagnostics.average_ranks(values, distinct)
        np.testing.assert_array_equal(fast, stats.rankdata(values))
        np.testing.assert_array_equal(fast, diagnostics.average_ranks(values))  # (no count: the argsort)
        assert fast.dtype == np.float64


def test_few_levels_with_nan_take_the_argsort_path():
    values = np.array([2.0, np.nan, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(diagnostics.average_ranks(values, 3), diagnostics.average_ranks(values))


def _expanded(x, y, wx, wy):
    d = np.subtract.outer(y, x).ravel()
    w = np.multiply.outer(wy, wx).ravel()
    order = np.argsort(d, kind="stable")
    return d[order], np.cumsum(w[order])


@pytest.mark.parametrize("seed", range(6))
def test_weighted_order_statistics_picked_again_are_the_sorted_differences(seed):
    """Ranks close together (read from one gather, sorted once) and far apart (a new gather) on
    weighted tied samples of 60-160 points: each order statistic is the formed differences'."""
    rng = np.random.default_rng(seed)
    nx, ny = (int(v) for v in rng.integers(60, 160, 2))
    x = np.sort(rng.integers(0, 12, nx) * 0.25 + rng.normal(0, 0.01, nx))
    y = np.sort(rng.integers(0, 12, ny) * 0.25 + rng.normal(0, 0.01, ny))
    wx = rng.integers(1, 64, nx) / 16.0  # multiples of a power of two: exact sums in any order
    wy = rng.integers(1, 64, ny) / 16.0
    d, running = _expanded(x, y, wx, wy)
    m = differences(x, y, wx, wy)
    total = float(running[-1])
    assert m.size == total
    ranks = [0.5 * total, 0.5 * total + 3.0, 0.5 * total - 40.0, 0.02 * total, 0.97 * total, 0.97 * total + 1.0]
    for k in ranks:
        expected = float(d[min(int(np.searchsorted(running, k, side="right")), d.size - 1)])
        assert m.kth(k) == expected
        if m.last_count == m.last_count:  # the weight up to it and the next entry, when known
            assert m.last_count == float(running[np.searchsorted(d, expected, side="right") - 1])
            above = d[d > expected]
            if m.last_next == m.last_next:
                assert m.last_next == float(above.min())


@pytest.mark.parametrize("seed", range(4))
def test_binned_brackets_on_weighted_points_select_the_same_differences(seed):
    """Spread ties (weighted points) searched from the binned brackets (wave 14) and from sampled ones:
    the same order statistics, weight up to them and next entries; checked against the formed
    differences on samples small enough to form."""
    from abstat.stats.hl_binned import guided_differences

    rng = np.random.default_rng(100 + seed)
    nx, ny = (int(v) for v in rng.integers(200, 700, 2))
    x = np.sort(rng.integers(0, 6, nx) * 20.0 + rng.uniform(-9.9, 9.9, nx))
    y = np.sort(rng.integers(0, 6, ny) * 20.0 + rng.uniform(-9.9, 9.9, ny))
    wx, wy = rng.integers(1, 2048, nx) / 256.0, rng.integers(1, 2048, ny) / 256.0
    d, running = _expanded(x, y, wx, wy)
    total = float(running[-1])
    guided, plain = guided_differences(x, y, wx, wy), differences(x, y, wx, wy)
    for q in (0.5, 0.5 + 1e-4, 0.025, 0.975, 0.3, 0.0):
        k = q * total
        expected = float(d[min(int(np.searchsorted(running, k, side="right")), d.size - 1)])
        assert guided.kth(k) == plain.kth(k) == expected


def test_grid_step_from_the_sorted_levels_is_the_step_of_every_value():
    rng = np.random.default_rng(3)
    for _ in range(300):
        step = float(rng.choice([1, 2, 3, 20, 7, 2**40]))
        values = step * rng.integers(-5, 9, int(rng.integers(1, 200))) + float(rng.choice([0, 3, 0.5, 2**52]))
        if rng.random() < 0.2:
            values[int(rng.integers(values.size))] = rng.choice([np.nan, np.inf, 0.25, -0.0])
        expected = diagnostics.quantization_step(values)
        assert diagnostics.quantization_step(values, np.sort(values)) == expected
        assert diagnostics.quantization_step(np.round(values), np.sort(np.round(values))) == (
            diagnostics.quantization_step(np.round(values))
        )
