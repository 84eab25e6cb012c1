"""The counts of sorted keys in a sorted sample from interpolated guesses (issue 42, wave 17):
``brunner_munzel.sorted_search`` against ``np.searchsorted`` on both sides, and the guided differences'
and Walsh sums' positions against the plain binary searches of ``SortedSums.positions``.  Seeded data:
normal, tied, a grid, constant, two-valued, huge and tiny magnitudes, keys beyond either end, unsorted
keys (every guess checked, so still exact) and non-finite values."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats import brunner_munzel as bm
from abstat.stats.hl_binned import guided_differences, guided_walsh
from abstat.stats.pairwise import SortedSums


def _sample(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.normal(0.0, 1.0, n)
    if kind == "tied":
        return rng.integers(0, 6, n).astype(float)
    if kind == "grid":
        return 20.0 * np.round(rng.normal(440, 7, n) / 20)
    if kind == "constant":
        return np.full(n, 3.0)
    if kind == "two-valued":
        return rng.choice([1.0, 2.0], n)
    if kind == "huge":
        return rng.normal(0.0, 1.0, n) * 1e300
    return rng.normal(0.0, 1.0, n) * 1e-300  # tiny (subnormal steps)


KINDS = ["normal", "tied", "grid", "constant", "two-valued", "huge", "tiny"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_search_counts_what_searchsorted_counts(kind, side):
    rng = np.random.default_rng(sum(map(ord, kind + side)))
    for n, m in [(1, 1), (2, 5), (7, 3), (100, 100), (1000, 37), (37, 1000), (5000, 5000)]:
        t = np.sort(_sample(kind, n, rng))
        for keys in (
            np.sort(_sample(kind, m, rng)),
            np.sort(t[rng.integers(0, n, m)]),  # every key equal to a value: ties on both sides
            np.sort(np.concatenate((t[rng.integers(0, n, m)], [t[0] - 1.0, t[-1] + 1.0]))),
            np.sort(np.nextafter(t[rng.integers(0, n, m)], rng.choice([-np.inf, np.inf], m))),  # one step off
            _sample(kind, m, rng),  # not sorted: the guesses are mostly wrong, each is checked
        ):
            np.testing.assert_array_equal(bm.sorted_search(t, keys, side), np.searchsorted(t, keys, side=side))


@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_search_with_non_finite_values(side):
    t = np.array([-np.inf, -1.0, 0.0, 0.0, 2.0, np.inf, np.nan])
    keys = np.array([-np.inf, -2.0, 0.0, 1.0, np.inf, np.nan])
    np.testing.assert_array_equal(bm.sorted_search(t, keys, side), np.searchsorted(t, keys, side=side))
    finite = np.array([-1.0, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(bm.sorted_search(finite, keys, side), np.searchsorted(finite, keys, side=side))
    np.testing.assert_array_equal(bm.sorted_search(finite, keys[:0], side), np.searchsorted(finite, keys[:0]))


@pytest.mark.parametrize("kind", ["normal", "grid", "tied"])
def test_guided_positions_are_the_binary_searches(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 3)
    for nx, ny in [(2000, 2000), (2500, 4000), (6000, 2100)]:
        sx = bm.spread_ties(np.sort(_sample(kind, nx, rng)))
        sy = bm.spread_ties(np.sort(_sample(kind, ny, rng) + 1.0))
        for matrix in (
            guided_differences(sx.values, sy.values, sx.weights, sy.weights),
            guided_walsh(sx.values, sx.weights),
        ):
            entries = matrix.a[rng.integers(0, matrix.a.size, 20)] + matrix.b[rng.integers(0, matrix.b.size, 20)]
            for p in [*entries.tolist(), float(np.nextafter(entries[0], np.inf)), -1e9, 1e9]:
                for side in ("left", "right"):
                    np.testing.assert_array_equal(matrix.positions(p, side), SortedSums.positions(matrix, p, side))
