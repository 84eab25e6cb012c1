"""``--center median`` on discrete data, few values against many: the order-statistic intervals share the
non-coverage by the sizes (most of it to the few; rev19: 9 grid values against 500 had 5.3% power at +4%
where a permutation test of the medians had 45.7%, because each interval was taken at sqrt(0.95))."""

from __future__ import annotations

import math

import numpy as np

import abstat
from abstat.stats.medians import exact_medians, split


def _grid(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    return np.sort(np.round((rng.normal(1000, 40, n) + shift) / 20) * 20)


def test_nine_values_get_the_second_order_statistics_and_the_levels_multiply_to_the_confidence() -> None:
    rng = np.random.default_rng(3)
    big, small = _grid(rng, 500), _grid(rng, 9, 40.0)
    found = exact_medians(big, small, 0.95)
    assert found.y == (small[1], small[7])  # at sqrt(0.95) each it was (small[0], small[8]), 99.6%
    assert math.isclose(found.levels[0] * found.levels[1], 0.95, rel_tol=1e-12)
    assert found.levels[1] < 0.97 < found.levels[0]
    swapped = exact_medians(small, big, 0.95)  # the split follows the sizes, not the order
    assert swapped.x == found.y and swapped.y == found.x


def test_equal_sizes_split_evenly_and_a_normal_interval_keeps_half() -> None:
    assert split((20, 20), 0.95, (True, True)) == 0.5
    assert split((500, 20), 0.95, (True, False)) <= 0.5  # the 20 values' Bonett-Price interval: >= sqrt(0.95)
    assert split((20, 500), 0.95, (False, True)) >= 0.5


def test_p_value_and_interval_agree() -> None:
    rng = np.random.default_rng(8)
    for _ in range(200):
        big, small = _grid(rng, 500), _grid(rng, int(rng.integers(6, 15)), float(rng.choice([0.0, 20.0, 40.0])))
        found = exact_medians(big, small, 0.95)
        if found.x is None or found.y is None:
            continue
        disjoint = found.x[1] < found.y[0] or found.y[1] < found.x[0]
        assert disjoint == (found.p_value < 0.05)


def test_more_power_and_no_more_false_calls_than_before() -> None:
    rng = np.random.default_rng(11)
    false = power = 0
    for _ in range(150):
        false += bool(abstat.compare(_grid(rng, 500), _grid(rng, 9), center="median").significant)
        power += bool(abstat.compare(_grid(rng, 500), _grid(rng, 9, 40.0), center="median").significant)
    assert false / 150 <= 0.03
    assert power / 150 >= 0.2  # was 0.08 at sqrt(0.95) each (300 draws); 0.33 now
