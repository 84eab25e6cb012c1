"""A tied level of more than POINTS values is integrated with POINTS weighted points: the estimate moves by
at most about h / POINTS on the analysis scale (attack18 L3: the docstring had claimed 1e-6 relative, and
10^6 fives against 10^6 fives and one 6 moved by 4.5e-5).  Reference: the same computation with every value
its own point (POINTS raised above the level's size)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.stats import brunner_munzel
from abstat.stats.hodges_lehmann import hodges_lehmann


@pytest.mark.parametrize("n", [5_000, 9_000])
def test_the_weighted_points_move_the_estimate_by_at_most_h_over_points(monkeypatch, n: int) -> None:
    x = np.log(np.full(n, 5.0))
    y = np.log(np.r_[np.full(n - 1, 5.0), 6.0])
    h = math.log(6.0 / 5.0) / 2.0  # the cell's half-width of both levels
    points = brunner_munzel.POINTS
    assert n > points
    weighted = hodges_lehmann(x, y, 0.95)
    monkeypatch.setattr(brunner_munzel, "POINTS", n + 1)
    exact = hodges_lehmann(x, y, 0.95)
    assert abs(weighted.estimate - exact.estimate) <= h / points * (1 + 1e-9)
    assert abs(weighted.estimate - exact.estimate) > h / points / 4  # the bound is about attained: not 1e-6 of it
