"""The shortcuts of the default comparison against the plain computations they replace (issue 42):
Brunner-Munzel's placements from a guess of the differences' positions, its half counts of a few
ties, the Tukey counts, the modes' histogram and the median read from one sort of the sample. Each
must give the very same numbers, on normal, tied, grid, constant, two-mode and extreme data."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats import brunner_munzel as bm
from abstat.stats import diagnostics, outliers
from abstat.stats.hl_binned import guided_differences
from abstat.stats.pairwise import median_of


def _samples(shape: str, nx: int, ny: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(0.0, 1.0, nx), rng.normal(0.3, 2.0, ny)
    if shape == "tied":
        return rng.integers(0, 5, nx).astype(float), rng.integers(1, 6, ny).astype(float)
    if shape == "grid":  # many values on few levels: spread with weights
        return 20.0 * np.round(rng.normal(440, 7, nx) / 20), 20.0 * np.round(rng.normal(444, 7, ny) / 20)
    if shape == "constant":
        return np.full(nx, 3.0), np.full(ny, 2.5)
    return np.r_[rng.normal(0.0, 0.01, nx // 2), rng.normal(0.7, 0.01, nx - nx // 2)], rng.normal(0.005, 0.01, ny)


SHAPES = ["normal", "tied", "grid", "constant", "two-mode"]


@pytest.mark.parametrize("shape", SHAPES)
def test_counts_from_any_guess_are_the_binary_searches(shape):
    rng = np.random.default_rng(sum(map(ord, shape)) + 11)
    x, y = _samples(shape, 900, 1300, rng)
    xs, ys = np.sort(x), np.sort(y)
    for delta in (0.0, 0.01, float(ys[300] - xs[200]), -1.5):
        t = xs + delta
        exact = np.searchsorted(t, ys, side="right")
        guesses = [
            exact.copy(),
            np.clip(exact + rng.integers(-3, 4, exact.size), 0, t.size),  # off by a few
            np.zeros(ys.size, dtype=np.int64),  # wrong everywhere
            np.full(ys.size, t.size, dtype=np.int64),
            rng.integers(0, t.size + 1, ys.size),
        ]
        for guess in guesses:
            assert np.array_equal(bm._counts_at_most(t, ys, guess.copy()), exact), (shape, delta)
            left, at_most = bm._left(ys, t, t.size - guess)  # rows: the guess seen from the differences
            assert np.array_equal(left, np.searchsorted(ys, t, side="left")), (shape, delta)
            assert np.array_equal(at_most, exact)
            assert np.array_equal(bm._below(ys.size, left, None), exact)  # what the statistic reads from it


@pytest.mark.parametrize("shape", SHAPES)
def test_brunner_munzel_from_the_differences_positions_is_the_searched_one(shape):
    rng = np.random.default_rng(sum(map(ord, shape)) + 12)
    nx, ny = (6000, 7000) if shape == "grid" else (1500, 1700)  # grid: levels of > POINTS values (weighted)
    x, y = _samples(shape, nx, ny, rng)
    sx, sy = bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y))
    if shape == "grid":
        assert sx.weights is not None
    m = guided_differences(sx.values, sy.values, sx.weights, sy.weights)
    estimate = median_of(m)
    shifts = [estimate, float(np.nextafter(estimate, np.inf)), float(sy.values[7] - sx.values[3]), 0.0]
    for delta in shifts:
        rows = m.rows_near(delta)
        guesses = [np.zeros(sy.values.size, dtype=np.int64), m.positions(delta)]
        for guess in guesses + ([rows] if rows is not None else []):
            assert bm.bm_statistic(sx, sy, delta, (1.3, 0.9), guess) == bm.bm_statistic(sx, sy, delta, (1.3, 0.9))


@pytest.mark.parametrize("shape", SHAPES)
def test_the_few_ties_half_counts_are_the_general_forms(shape, monkeypatch):
    rng = np.random.default_rng(sum(map(ord, shape)) + 13)
    x, y = _samples(shape, 400, 500, rng)
    sx, sy = bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y))
    # shifts at which some x_i + delta equal some y_j exactly: differences of the values themselves
    shifts = [0.0] + [float(sy.values[j] - sx.values[i]) for i, j in ((3, 5), (100, 400), (399, 0))]
    few = [bm.bm_statistic(sx, sy, d) for d in shifts]
    monkeypatch.setattr(bm, "FEW_TIES", -1)  # every tie through the general form
    assert few == [bm.bm_statistic(sx, sy, d) for d in shifts]


@pytest.mark.parametrize("shape", SHAPES)
def test_ties_with_distinct_points_are_the_general_forms(shape, monkeypatch):
    """Points all distinct (``Spread.increasing``): half of each tie's weight taken off at its one point,
    for any number of ties and weighted baselines, gives the general form's placements exactly."""
    rng = np.random.default_rng(sum(map(ord, shape)) + 14)
    x, y = _samples(shape, *((6000, 7000) if shape == "grid" else (400, 500)), rng)
    sx, sy = bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y))
    assert sy.increasing == (shape != "constant")
    shifts = [0.0] + [float(sy.values[j] - sx.values[i]) for i, j in ((3, 5), (100, 400), (399, 0))]
    fast = [bm.bm_statistic(sx, sy, d) for d in shifts]
    general = bm.Spread(sy.values, sy.n, sy.groups, sy.counts, sy.weights, sy.spread, False, sy.running)
    monkeypatch.setattr(bm, "FEW_TIES", -1)  # every tie through the general form (searched, two sums)
    assert fast == [bm.bm_statistic(sx, general, d) for d in shifts]
    assert fast == [bm.bm_statistic(sx, sy, d) for d in shifts]  # many ties: taken off at their points


def _outlier_cases(rng: np.random.Generator) -> list[np.ndarray]:
    spiky = rng.normal(1000, 5, 3000)
    spiky[rng.random(3000) < 0.03] += 5000
    return [
        rng.normal(0, 1, 5000),
        spiky,
        np.round(spiky),
        20.0 * np.round(rng.normal(440, 3, 2000) / 20),  # IQR 0: one grid step instead
        np.r_[np.full(50, 7.0), 9.0, 12.0, 100.0],
        np.full(40, 2.5),  # IQR 0 and no gap
        np.array([1.0, 2.0, 3.0, 50.0]),
        np.array([1.0, 2.0, 3.0]),  # too few: none
        np.array([-1e308, 0.0, 0.0, 0.0, 1e308]),  # gaps beyond the doubles
        rng.lognormal(0, 2, 999),
    ]


def test_tukey_counts_from_the_sorted_run_are_classify_runs():
    for values in _outlier_cases(np.random.default_rng(14)):
        mild, severe, _, _ = outliers.classify_runs([values], "none")
        assert outliers.sorted_run_counts(np.sort(values)) == (mild, severe), values[:5]


def test_the_modes_histogram_from_the_sorted_values_is_numpys():
    rng = np.random.default_rng(15)
    cases = [*_outlier_cases(rng), np.r_[rng.normal(0, 1, 700), rng.normal(6, 1, 300)]]
    on_edges = np.repeat(np.arange(1.0, 512.0), 3)  # on the edges of 512 bins over [0, 512]
    ordered = np.sort(on_edges)
    counts, _ = diagnostics._histogram(on_edges, 512, 0.0, 512.0, ordered)
    assert np.array_equal(counts, np.histogram(on_edges, bins=512, range=(0.0, 512.0))[0])
    for values in cases:
        ordered = np.sort(values)
        assert diagnostics.mode_count(values, ordered) == diagnostics.mode_count(values)
        lo, hi = float(ordered[0]) - 1e-9 * (1 + abs(float(ordered[0]))), float(ordered[-1]) + 1.0
        if np.isfinite(hi - lo):
            counts, edges = diagnostics._histogram(values, 512, lo, hi, ordered)
            expected, expected_edges = np.histogram(values, bins=512, range=(lo, hi))
            assert np.array_equal(counts, expected) and np.array_equal(edges, expected_edges)


def test_a_median_read_from_the_sort_is_the_partitioned_one():
    from abstat.comparison.summaries import describe_array

    rng = np.random.default_rng(16)
    # the partition leaves -0.0 in the middle of this one, the sort 0.0 (numpy 2.4)
    zeros = np.array([-0.0, 0.0, -0.0, -1.4313942795106365, 2.040761939896942, 0.0])
    cases = [*_outlier_cases(rng), zeros, np.array([3.0, np.nan, 1.0, 2.0, 5.0])]
    for values in cases:
        plain, shared = describe_array(values), describe_array(values, 1.0, np.sort(values))
        assert repr(plain) == repr(shared)  # (repr: NaN fields compare, and a zero's sign shows)


def test_the_grids_differ_warning_reads_the_ties_warnings_of_the_summaries():
    import abstat

    rng = np.random.default_rng(17)
    on_20, on_21 = 20.0 * np.round(rng.normal(440, 7, 3000) / 20), 21.0 * np.round(rng.normal(444, 7, 3000) / 21)
    smooth = rng.normal(444, 7, 3000)
    for x, y, expected in ((on_20, on_21, True), (on_20, smooth, False), (on_20, on_20 + 20.0, False)):
        codes = [w.code for w in abstat.compare(x, y).warnings]
        assert ("grids-differ" in codes) is expected
        assert bool(diagnostics.grids_differ("a", x, "b", y)) is expected


def test_the_joined_test_lies_within_the_permutation_sizes():
    """The default comparison imports the permutation code only up to PERMUTE_MAX values on a side
    (start-up), so the trimmed t's join must apply below it."""
    from abstat.stats.hodges_lehmann import PERMUTE_MAX
    from abstat.stats.permutation_power import JOIN_MAX

    assert JOIN_MAX <= PERMUTE_MAX
