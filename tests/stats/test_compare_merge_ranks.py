"""The second round of shortcuts of the default comparison (issue 42) against plain computations and
scipy: Brunner-Munzel's placements at a shift from one merge of the samples, the integer running
counts, the weighted pick of an order statistic through an unstable argsort, closed-form sums of
squared ranks and the early answer of is_sorted.  Seeded data:
normal, tied integers, a grid, constant and two-valued samples, and samples of unequal sizes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abstat.stats import brunner_munzel as bm
from abstat.stats import diagnostics
from abstat.stats.dependence import is_sorted
from abstat.stats.pairwise import differences, walsh_sums


def _samples(shape: str, nx: int, ny: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(0.0, 1.0, nx), rng.normal(0.2, 1.5, ny)
    if shape == "tied":
        return rng.integers(0, 6, nx).astype(float), rng.integers(1, 7, ny).astype(float)
    if shape == "grid":
        return 20.0 * np.round(rng.normal(440, 7, nx) / 20), 20.0 * np.round(rng.normal(444, 7, ny) / 20)
    if shape == "constant":
        return np.full(nx, 3.0), np.full(ny, 3.0)
    return rng.choice([1.0, 2.0], nx), rng.choice([1.0, 2.0], ny, p=[0.3, 0.7])  # two values


SHAPES = ["normal", "tied", "grid", "constant", "two-valued"]
SIZES = [(1, 1), (2, 3), (40, 40), (300, 2400), (2400, 300), (1500, 1700)]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_merge_counts_what_the_binary_searches_count(shape):
    rng = np.random.default_rng(sum(map(ord, shape)) + 21)
    for nx, ny in SIZES:
        x, y = _samples(shape, nx, ny, rng)
        xs, ys = np.sort(x), np.sort(y)
        for delta in (0.0, 1.0, -20.0, float(ys[-1] - xs[0])):
            target = xs + delta
            left, at_most = bm._merged(ys, target)
            assert np.array_equal(left, np.searchsorted(ys, target, side="left")), (shape, nx, ny, delta)
            assert np.array_equal(at_most, np.searchsorted(target, ys, side="right")), (shape, nx, ny, delta)
            # brute force, pair by pair
            assert np.array_equal(left, (ys[None, :] < target[:, None]).sum(axis=1))
            assert np.array_equal(at_most, (target[None, :] <= ys[:, None]).sum(axis=1))


@pytest.mark.parametrize("shape", SHAPES)
def test_brunner_munzel_through_the_merge_is_the_searched_one(shape, monkeypatch):
    rng = np.random.default_rng(sum(map(ord, shape)) + 22)
    cases = [_samples(shape, nx, ny, rng) for nx, ny in ((300, 2400), (1500, 1700), (6000, 7000))]
    spread = [(bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y))) for x, y in cases]
    shifts = (0.0, 0.5, -20.0)
    searched = [bm.bm_statistic(sx, sy, d, (1.2, 0.8)) for sx, sy in spread for d in shifts]
    monkeypatch.setattr(bm, "MERGE_FROM", 1)
    assert [bm.bm_statistic(sx, sy, d, (1.2, 0.8)) for sx, sy in spread for d in shifts] == searched


@pytest.mark.parametrize("shape", ["normal", "tied", "grid", "two-valued"])
def test_brunner_munzel_at_zero_through_the_merge_is_scipys(shape, monkeypatch):
    """At shift 0, on one grid, the statistic is Brunner-Munzel's with mid-ranks (the module's rule)."""
    monkeypatch.setattr(bm, "MERGE_FROM", 1)
    rng = np.random.default_rng(sum(map(ord, shape)) + 23)
    for nx, ny in ((40, 40), (300, 2400), (1500, 1700)):
        x, y = _samples(shape, nx, ny, rng)
        s = bm.bm_statistic(bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y)), 0.0)
        ref = stats.brunnermunzel(x, y, distribution="t")
        assert s.t == pytest.approx(ref.statistic, rel=1e-9), (shape, nx, ny)
        assert bm.bm_p_value(s, nx, ny) == pytest.approx(ref.pvalue, rel=1e-7, abs=1e-300), (shape, nx, ny)


def test_running_counts_are_the_brute_force_counts():
    rng = np.random.default_rng(24)
    for size, m in ((1, 5), (10, 0), (50, 200), (2000, 1500)):
        positions = rng.integers(0, size + 1, m)
        got = bm._below(size, positions, None)
        assert got.dtype == np.float64
        assert np.array_equal(got, (positions[None, :] <= np.arange(size)[:, None]).sum(axis=1).astype(float))
        w = rng.integers(1, 5, m) / 8.0
        weighted = bm._below(size, positions, w)
        assert np.array_equal(weighted, ((positions[None, :] <= np.arange(size)[:, None]) * w).sum(axis=1))


def _brute_kth(a: np.ndarray, b: np.ndarray, wa: np.ndarray, wb: np.ndarray, walsh: bool, k: float) -> float:
    values, weights = np.add.outer(b, a).ravel(), np.multiply.outer(wb, wa).ravel()
    if walsh:  # i <= j, the diagonal counting w (w + 1) / 2
        j, i = np.divmod(np.arange(values.size), a.size)
        keep = i <= j
        weights = np.where(i == j, wb[j] * (wb[j] + 1.0) / 2.0, weights)
        values, weights = values[keep], weights[keep]
    order = np.argsort(values, kind="stable")
    running = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(running, k, side="right")])


@pytest.mark.parametrize("shape", ["grid", "tied", "two-valued"])
def test_weighted_order_statistics_are_the_brute_force_ones(shape, monkeypatch):
    monkeypatch.setattr(bm, "POINTS", 8)  # levels of more than 8 values: weighted points
    rng = np.random.default_rng(sum(map(ord, shape)) + 27)
    x, y = _samples(shape, 120, 150, rng)
    sx, sy = bm.spread_ties(np.sort(x)), bm.spread_ties(np.sort(y))
    assert sx.weights is not None and sy.weights is not None
    a, wa = -sx.values[::-1], sx.weights[::-1]
    matrix = differences(sx.values, sy.values, sx.weights, sy.weights)
    for k in (0.0, 1.5, matrix.size / 3, matrix.size / 2, matrix.size - 1.0):
        assert matrix.kth(k) == _brute_kth(a, sy.values, wa, sy.weights, False, k), (shape, k)
    walsh = walsh_sums(sx.values, sx.weights)
    for k in (0.0, walsh.size / 2, walsh.size - 1.0):
        assert walsh.kth(k) == _brute_kth(sx.values, sx.values, sx.weights, sx.weights, True, k), (shape, k)


def _plain_rank_correlations(values: np.ndarray) -> tuple[float, float]:
    ranks = stats.rankdata(values)
    centred = ranks - ranks.mean()
    idx = np.arange(values.size, dtype=float)
    idx -= idx.mean()
    spread = float(np.sum(centred * centred))
    rho = float(np.sum(idx * centred)) / np.sqrt(float(np.sum(idx * idx)) * spread)
    return rho, float(np.sum(centred[1:] * centred[:-1])) / spread


@pytest.mark.parametrize("n", [10, 11, 997, 4096, 30_001, 200_000, 200_001])
def test_rank_correlations_with_closed_form_sums_are_the_summed_ones(n):
    rng = np.random.default_rng(n)
    for values in (rng.normal(0, 1, n), rng.integers(0, 7, n).astype(float), np.cumsum(rng.normal(0, 1, n))):
        distinct = diagnostics.distinct_count(np.sort(values))
        got = diagnostics.rank_correlations(values, distinct)
        assert got == _plain_rank_correlations(values), n  # bit for bit
        assert got is not None and got[0] == pytest.approx(stats.spearmanr(np.arange(n), values)[0], abs=1e-12)


def test_a_sorted_sample_is_told_from_a_shuffled_one_as_by_all_its_steps():
    rng = np.random.default_rng(28)
    cases = [rng.normal(0, 1, 500), np.sort(rng.normal(0, 1, 500)), -np.sort(rng.normal(0, 1, 500))]
    cases += [np.r_[np.sort(rng.normal(0, 1, 100)), 0.0], np.r_[np.arange(70.0), 3.0], np.full(100, 2.0)]
    cases += [np.r_[1.0, np.nan, np.arange(200.0)], np.array([3.0, 2.0, 1.0]), np.r_[np.arange(64.0), 70.0, -1.0]]
    for values in cases:
        steps = np.diff(values)
        expected = bool(np.any(steps != 0) and (np.all(steps >= 0) or np.all(steps <= 0)))
        assert is_sorted(values) is expected, values[:5]
