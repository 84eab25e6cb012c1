"""The work the default comparison now does once and shares (issue 42, grid data at 10^4 a side): each
sample's groups of equal values (:func:`abstat.stats.levels.level_starts`) read by the ties warning,
the grid step, the ranks and the spreading of ties; the mean and standard deviation from one sum; the
extremes from the sort; the cell limit from the levels; the grid step without ``np.unique``.  Every form
must give the very numbers of the computation it replaces, on continuous, tied, grid, constant, signed-zero
and NaN data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.comparison.centres import grid_step
from abstat.comparison.summaries import describe_array
from abstat.stats import brunner_munzel as bm
from abstat.stats import diagnostics
from abstat.stats.levels import level_starts
from abstat.stats.tie_cells import cell_limit, spread_levels


def _sample(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.normal(1000.0, 10.0, n)
    if kind == "grid":
        return 20.0 * np.round(rng.normal(440.0, 7.0, n) / 20.0)
    if kind == "counts":
        return rng.poisson(3.0, n).astype(float)
    if kind == "constant":
        return np.full(n, 2.5)
    if kind == "zeros":  # signed zeros at the ends and inside
        return rng.choice([-0.0, 0.0, 1.0, -1.0], n)
    if kind == "nan":
        values = 20.0 * np.round(rng.normal(440.0, 7.0, n) / 20.0)
        values[rng.integers(0, max(n, 1), 3 if n else 0)] = np.nan
        return values
    return np.round(rng.normal(100.0, 5.0, n), 1)  # mixed: some ties


KINDS = ["normal", "grid", "counts", "constant", "zeros", "nan", "mixed"]
SIZES = [1, 2, 3, 10, 57, 400, 5000]


def _old_starts(ordered: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (a != a and b != b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("kind", KINDS)
def test_level_starts_are_the_groups_every_diagnostic_read(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    for n in [0, *SIZES]:
        values = _sample(kind, n, rng)
        ordered = np.sort(values)
        starts = level_starts(ordered)
        assert np.array_equal(starts, _old_starts(ordered))  # ([0] when empty, as before)
        counts = diagnostics._sorted_tie_counts(ordered, starts)
        assert np.array_equal(counts, np.diff(np.r_[_old_starts(ordered), n]))
        assert np.array_equal(diagnostics._sorted_tie_counts(ordered), counts)
        if not n:
            continue
        assert diagnostics.heavily_tied(values, ordered, starts) == diagnostics.heavily_tied(values)
        assert diagnostics.ties("a", values, ordered, starts) == diagnostics.ties("a", values)
        if not np.isnan(values).any():
            plain = diagnostics.quantization_step(values)
            assert diagnostics.quantization_step(values, ordered, starts) == plain


@pytest.mark.parametrize("kind", KINDS)
def test_ranks_and_their_correlations_from_the_shared_levels(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 1)
    for n in SIZES:
        values = _sample(kind, n, rng)
        ordered = np.sort(values)
        starts = level_starts(ordered)
        distinct = diagnostics.distinct_count(ordered)
        plain = diagnostics.average_ranks(values)  # from one argsort
        for args in [(distinct, ordered), (distinct, ordered, starts), (distinct, None), (n, None)]:
            if args[0] == n and distinct != n:
                continue
            assert np.array_equal(diagnostics.average_ranks(values, *args), plain, equal_nan=True)
            shifted = diagnostics.average_ranks(values, *args, less=(n + 1) / 2)
            assert np.array_equal(shifted, plain - (n + 1) / 2, equal_nan=True)
        found = diagnostics.rank_correlations(values, distinct, ordered, starts)
        assert _same(found, _old_rank_correlations(values)), (kind, n)


def _old_rank_correlations(values: np.ndarray) -> tuple[float, float] | None:
    """Main's arithmetic before wave 22 (n <= EXACT_SUMS): the mean of tied ranks by numpy, sums by np.sum."""
    n = values.size
    if n < diagnostics.DRIFT_MIN_N or values.min() == values.max():
        return None
    ranks = diagnostics.average_ranks(values)
    untied = diagnostics.distinct_count(np.sort(values)) == n
    centred = ranks - ((n + 1) / 2 if untied else ranks.mean())
    spread = n * (n * n - 1) / 12 if untied else float(np.sum(centred * centred))
    if spread == 0.0:
        return None
    idx = np.arange(n, dtype=float)
    idx -= (n - 1) / 2
    rho = float(np.sum(idx * centred)) / math.sqrt(n * (n * n - 1) / 12 * spread)
    return rho, float(np.sum(centred[1:] * centred[:-1])) / spread


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "nan"])
def test_description_from_one_sum_and_the_sort(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 2)
    for n in SIZES:
        values = _sample(kind, n, rng) * (2.0**-1000 if n == 57 else 1.0)
        d = describe_array(values, 1.0, np.sort(values))
        stddev = float(np.std(values, ddof=1)) if n > 1 else math.nan
        expected = (float(np.mean(values)), stddev, float(np.min(values)), float(np.max(values)))
        assert _same((d.mean, d.stddev, d.min, d.max), expected), (kind, n)


@pytest.mark.parametrize("kind", ["normal", "grid", "counts", "constant", "mixed"])
def test_spread_ties_from_given_starts_and_the_limit_from_the_levels(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 3)
    for n in [2, 3, 10, 400, 5000, 9000]:
        xs, ys = np.sort(_sample(kind, n, rng)), np.sort(_sample(kind, n + 17, rng))
        sx, sy = level_starts(xs), level_starts(ys)
        limit = cell_limit(xs, ys)
        assert cell_limit(xs[sx], ys[sy]) == limit
        for values, starts in ((xs, sx), (ys, sy)):
            for cap in (limit, math.inf, 0.0):
                given, found = bm.spread_ties(values, cap, starts), bm.spread_ties(values, cap)
                for field in ("values", "groups", "counts", "weights", "running"):
                    a, b = getattr(given, field), getattr(found, field)
                    assert (a is None and b is None) or np.array_equal(a, b), (kind, n, field)
                assert (given.n, given.spread, given.increasing) == (found.n, found.spread, found.increasing)
                if found.groups is not None:
                    old_starts = np.flatnonzero(np.diff(found.groups, prepend=-1))
                    wide = np.maximum.reduceat(found.values, old_starts) > np.minimum.reduceat(found.values, old_starts)
                    tied = found.counts > 1
                    assert spread_levels(found) == (int(tied.sum()), int((tied & wide).sum()))


def test_grid_step_without_unique():
    rng = np.random.default_rng(4)
    for _ in range(50):
        sides = [np.sort(20.0 * np.round(rng.normal(440.0, 7.0, int(rng.integers(1, 300))) / 20.0)) for _ in range(2)]
        sides[1] = sides[1] + float(rng.choice([0.0, 5.0, -0.0]))
        values = np.unique(np.concatenate(sides))
        gaps = np.diff(values).astype(np.int64)
        expected = float(np.gcd.reduce(gaps)) if values.size > 1 else 0.0
        assert grid_step(sides) == expected


@pytest.mark.parametrize("kind", ["grid", "counts", "constant", "mixed", "zeros"])
def test_group_variance_is_the_variance_of_the_group_means(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 5)
    for n in [2, 3, 10, 400, 5000, 9000]:  # (9000 grid values: levels of more than POINTS values, weighted)
        sample = bm.spread_ties(np.sort(_sample(kind, n, rng)))
        points = sample.values.size
        for per_value in (rng.integers(0, 4 * n, points) * 0.25, rng.normal(0.0, 1.0, points), np.zeros(points)):
            assert sample.group_variance(per_value) == sample.variance(sample.group_means(per_value)), (kind, n)
