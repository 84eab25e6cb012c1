"""A report cell's median computed in Python (``small_median``, the fast path of a history report's
10^5 revisions x metrics cells) against the numpy path it stands in for (``shown_median``), on
seeded data of every kind it takes, and refused (None) where numpy's sort could decide otherwise."""

from __future__ import annotations

import math
import random

import numpy as np

from abstat.comparison.centres import shown_median
from abstat.report.centres import small_median


def _cases() -> list[list[float]]:
    rng = random.Random(42)
    cases = []
    for _ in range(3000):
        n = rng.randint(1, 32)
        kind = rng.randrange(4)
        if kind == 0:
            values = [float(rng.randint(-5, 5) or 1) for _ in range(n)]  # integer grid, ties
        elif kind == 1:
            values = [rng.choice([1.5, 2.25, 1e308, -1e308, 3.0]) for _ in range(n)]  # overflowing midpoints
        elif kind == 2:
            values = [round(rng.lognormvariate(0, 2), 1) or 0.1 for _ in range(n)]
        else:
            values = [rng.gauss(0, 1e-300) or 1.0 for _ in range(n)]
        cases.append(values)
    return cases


def test_small_median_is_the_numpy_median_shown() -> None:
    for values in _cases():
        fast = small_median([values], "auto", "none")
        assert fast is not None
        expected = float(np.median(values)) if not all(v.is_integer() for v in values) else None
        shown = shown_median(values)
        assert type(fast) is float and fast == shown, values
        if expected is not None and math.isfinite(expected):
            assert fast == expected, values  # numpy's own median, away from overflow


def test_small_median_leaves_other_cells_to_numpy() -> None:
    refused = [
        ([[1.0, 2.0], [3.0]], "auto", "none"),  # several runs
        ([[1.0, 2.0]], "mean", "none"),  # the mean asked for
        ([[1.0, 2.0]], "auto", "iqr"),  # an outlier rule
        ([[float(i) for i in range(33)]], "auto", "none"),  # long: numpy's way is faster
        ([[1.0, float("nan")]], "auto", "none"),  # not finite: numpy's path says so
        ([[1.0, -0.0, 0.0]], "auto", "none"),  # signed zeros: numpy's sort may order them otherwise
        ([[1, 2]], "auto", "none"),  # not floats
        ([[]], "auto", "none"),
    ]
    for groups, center, rule in refused:
        assert small_median(groups, center, rule) is None, groups
