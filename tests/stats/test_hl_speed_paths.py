"""The shortcuts of the pairwise selection (abstat.stats.pairwise) against brute force: the
positions found by walking from a nearby count equal numpy's binary search on every row, and an
order statistic taken from the entries gathered for the previous one (no count) is the one
every difference sorted gives, on normal, tied, grid, constant and two-mode data."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats import pairwise
from abstat.stats.brunner_munzel import spread_ties
from abstat.stats.hl_binned import guided_differences


def _samples(shape: str, nx: int, ny: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(0.0, 1.0, nx), rng.normal(0.3, 2.0, ny)
    if shape == "tied":
        return rng.integers(0, 5, nx).astype(float), rng.integers(1, 6, ny).astype(float)
    if shape == "grid":
        return (
            spread_ties(np.sort(20.0 * np.round(rng.normal(440, 7, nx) / 20))).values,
            spread_ties(np.sort(20.0 * np.round(rng.normal(444, 7, ny) / 20))).values,
        )
    if shape == "constant":
        return np.full(nx, 3.0), np.full(ny, 2.5)
    return np.r_[rng.normal(0.0, 0.01, nx // 2), rng.normal(0.7, 0.01, nx - nx // 2)], rng.normal(0.005, 0.01, ny)


SHAPES = ["normal", "tied", "grid", "constant", "two-mode"]


def _matrices(x: np.ndarray, y: np.ndarray) -> list[pairwise.SortedSums]:
    return [pairwise.differences(x, y), pairwise.walsh_sums(x), pairwise.walsh_sums(y, np.arange(1.0, y.size + 1.0))]


@pytest.mark.parametrize("shape", SHAPES)
def test_walked_positions_are_the_binary_searches(shape):
    rng = np.random.default_rng(sum(map(ord, shape)) + 1)
    x, y = _samples(shape, 700, 900, rng)
    x, y = np.sort(x), np.sort(y)
    for m in _matrices(x, y):
        entries = np.sort((m.a[:, None] + m.b[None, :]).ravel())
        for q_lo, q_hi in [(0.49, 0.51), (0.4999, 0.5001), (0.0, 1.0), (0.2, 0.9), (0.5, 0.5)]:
            lo, hi = float(np.quantile(entries, q_lo)), float(np.quantile(entries, q_hi))
            start, stop = m.positions(lo), m.positions(hi)
            for p in np.r_[np.linspace(lo, hi, 7), np.nextafter(lo, np.inf), np.nextafter(hi, -np.inf)]:
                if not lo <= p <= hi:
                    continue
                expected = m.positions(float(p))
                assert np.array_equal(m.walk(float(p), start, stop, True), expected), (shape, p)
                assert np.array_equal(m.walk(float(p), start, stop, False), expected), (shape, p)


@pytest.mark.parametrize("shape", SHAPES)
def test_an_order_statistic_among_the_last_gathered_entries_costs_no_count(shape, monkeypatch):
    rng = np.random.default_rng(sum(map(ord, shape)) + 2)
    x, y = _samples(shape, 1200, 1500, rng)
    x, y = np.sort(x), np.sort(y)
    every = np.sort(np.subtract.outer(y, x).ravel())
    counts = []
    original = pairwise.SortedSums.positions

    def counted(self, p, side="right"):
        counts.append(p)
        return original(self, p, side)

    monkeypatch.setattr(pairwise.SortedSums, "positions", counted)
    for matrix in (guided_differences(x, y), pairwise.differences(x, y)):
        k = int(every.size * 0.4975)
        assert matrix.kth(float(k)) == every[k]
        kept = matrix._kept
        if kept is None:  # a block of equal entries held it: nothing gathered
            continue
        before = len(counts)
        for rank in np.unique(np.linspace(kept[0], kept[1] - 1, 9).astype(np.int64)):
            assert matrix.kth(float(rank)) == every[rank], (shape, rank)
        assert len(counts) == before  # every one among the kept entries
        for beyond in (int(kept[1]), int(kept[0]) - 1, every.size - 1 - k):  # not among them: counted again
            if 0 <= beyond < every.size:
                assert matrix.kth(float(beyond)) == every[beyond], (shape, beyond)


def test_the_grid_step_is_the_gcd_of_the_gaps_between_the_sorted_distinct_values():
    from math import gcd

    from abstat.stats.diagnostics import quantization_step

    rng = np.random.default_rng(3)
    cases = [
        20.0 * np.round(rng.normal(440, 7, 5000) / 20),  # TSC-like ticks of 20
        20.0 * np.round(rng.normal(4.4e8, 7e3, 5000) / 20) + 6.0,  # large values, offset from the grid's 0
        np.round(rng.normal(1000, 30, 3000)),  # step 1: None
        np.full(1000, 440.0),  # one value: None
        np.array([-30.0, 12.0, 12.0, 54.0]),  # negative values, step 42
        rng.integers(-5, 5, 200).astype(float) * 6.0,
        np.r_[rng.normal(0, 1, 10), 3.0],  # not integers: None
    ]
    for values in cases:
        expected = None
        if np.all(values == np.round(values)):
            distinct = sorted({int(v) for v in values})
            step = 0
            for low, high in zip(distinct[:-1], distinct[1:], strict=True):
                step = gcd(step, high - low)
            expected = float(step) if step > 1 else None
        assert quantization_step(values) == expected


def test_a_constant_sample_has_no_rank_correlations():
    from abstat.stats.diagnostics import DRIFT_MIN_N, rank_correlations

    assert rank_correlations(np.full(DRIFT_MIN_N + 50, 7.25)) is None
    varied = np.r_[np.full(DRIFT_MIN_N + 50, 7.25), 7.5]
    assert rank_correlations(varied) is not None


@pytest.mark.parametrize("nan", [False, True])
def test_the_ties_warning_counts_the_distinct_values_as_numpy_unique(nan):
    from abstat.stats.diagnostics import ties

    rng = np.random.default_rng(4)
    values = 20.0 * np.round(rng.normal(440, 7, 3000) / 20)
    values[:5] = [-0.0, 0.0, 0.0, -0.0, 20.0]  # signed zeros are one value
    if nan:
        values[5:9] = np.nan
    uniq, counts = np.unique(values, return_counts=True)
    (warning,) = ties("a", values)
    grid = "" if nan else ", on a grid of 20"  # (NaN is no integer: no grid)
    assert f"({uniq.size} distinct values in {values.size}{grid};" in warning.message
    assert f"the most common value holds {counts.max() / values.size:.0%})" in warning.message
