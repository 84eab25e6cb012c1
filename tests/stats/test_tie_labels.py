"""The words about tied values say what was computed (wave 20; stat18's review).

The grids-differ warning said every tied value was read as spread over its grid's cell, and the caption
"after spreading tied values" when a variant's levels, further apart than the tie-cell limit, kept their
values.  The reference is the spreading itself, read off the points the comparison compares
(:func:`abstat.stats.hodges_lehmann.spread_pair`): a level is spread when its points are not all equal."""

from __future__ import annotations

import numpy as np

import abstat
from abstat.stats.hodges_lehmann import spread_pair
from abstat.stats.tie_cells import spread_levels

FAR = np.array([1000.0] * 8 + [1240.0] * 2)  # grid 240: 12 steps of the other's 20
NEAR = np.array([1000.0] * 6 + [1020.0] * 2 + [1120.0] * 2)


def _levels_spread(values: np.ndarray, points: np.ndarray) -> list[bool]:
    """Per tied level of ``values``: whether its points (in ``points``, the same order) differ."""
    ordered = np.sort(values)
    out = []
    for level in np.unique(ordered):
        where = ordered == level
        if where.sum() > 1:
            out.append(bool(np.ptp(points[where]) > 0))
    return out


def test_spread_levels_counts_what_the_points_show() -> None:
    for x, y in ((FAR, NEAR), (NEAR, FAR), (NEAR, NEAR * 1.01)):
        for values, sample in zip((x, y), spread_pair(np.log(x), np.log(y)), strict=True):
            by_hand = _levels_spread(values, sample.values)
            assert spread_levels(sample) == (len(by_hand), sum(by_hand))


def test_grids_differ_says_whose_ties_were_spread() -> None:
    r = abstat.compare(FAR, NEAR)
    (warning,) = [w.message for w in r.warnings if w.code == "grids-differ"]
    far, near = spread_pair(np.log(FAR), np.log(NEAR))
    assert spread_levels(far) == (2, 0) and spread_levels(near) == (3, 3)
    assert "baseline's tied values keep their values" in warning
    assert "candidate's tied values are read as spread" in warning
    assert "own grid's cells" not in warning


def test_caption_says_only_some_were_spread() -> None:
    r = abstat.compare(FAR, NEAR)
    assert "after spreading some tied values" in r.estimand_label
    assert "only some tied values read as spread" in r.method
    both = abstat.compare(NEAR, NEAR[::-1] * 1.02)  # every tied level spread
    assert "after spreading tied values" in both.estimand_label and "only some" not in both.method


def test_without_the_default_comparison_no_spreading_is_claimed() -> None:
    r = abstat.compare(FAR, NEAR, center="median")
    (warning,) = [w.message for w in r.warnings if w.code == "grids-differ"]
    assert "spread" not in warning
