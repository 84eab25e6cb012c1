"""When tied values are spread over cells (abstat.stats.tie_cells, wave 19; attack18 M4).

References: the median of all candidate/baseline ratios by brute force (numpy), and the spreading rule
computed by hand on a grid."""

from __future__ import annotations

import numpy as np

from abstat.stats.brunner_munzel import spread_ties
from abstat.stats.hodges_lehmann import hodges_lehmann
from abstat.stats.tie_cells import STEPS, cell_limit


def _median_log_ratio(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.median(np.subtract.outer(np.log(y), np.log(x))))


def test_two_far_levels_against_a_fine_baseline_are_not_spread() -> None:
    # attack18 M4: 15 x 900 and 25 x 1,400 against 40 values measured to the cycle; spreading the two
    # levels over 500-wide cells printed +24% [0, +33] while the median of the 1,600 ratios is +38.6%
    x = np.round(np.random.default_rng(3).normal(1000.0, 30.0, 40), 1)
    y = np.array([900.0] * 15 + [1400.0] * 25)
    truth = _median_log_ratio(x, y)
    r = hodges_lehmann(np.log(x), np.log(y), 0.95)
    assert not r.spread
    assert r.low <= truth <= r.high
    assert abs(r.estimate - truth) < 1e-9


def test_one_grid_is_spread_as_before() -> None:
    # TSC cycles on a grid of 20: every level's cell is within STEPS steps, so the limit never bites
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(440.0, 7.0, 30) / 20.0) * 20.0
    y = np.round(rng.normal(444.4, 7.0, 30) / 20.0) * 20.0
    lx, ly = np.sort(np.log(x)), np.sort(np.log(y))
    limit = cell_limit(lx, ly)
    for s in (lx, ly):
        assert np.array_equal(spread_ties(s, limit).values, spread_ties(s).values)
    assert hodges_lehmann(np.log(x), np.log(y), 0.95).spread


def test_a_level_beyond_the_steps_keeps_its_value() -> None:
    step = 20.0
    far = 440.0 + (STEPS + 1) * step  # its gap to 440 spans STEPS + 1 steps: half of it exceeds the limit
    x = np.array([420.0, 440.0, 440.0, 440.0, far, far])
    y = np.array([420.0, 420.0, 440.0, 460.0])
    limit = cell_limit(x, y)
    assert limit == STEPS * step / 2.0
    s = spread_ties(x, limit)
    assert np.all(s.values[-2:] == far)  # the far level's points are its value
    assert np.allclose(s.values[1:4], [440.0 - 20.0 / 3.0, 440.0, 440.0 + 20.0 / 3.0])  # the 440s: cell +-10
