"""The centre behind the ``scales-differ`` warning (numpy's median of the absolute values) is the textbook
median of every value of every run, including empty runs, ties and values near the float maximum."""

from __future__ import annotations

import math
import random
import warnings

from abstat.render.unit_align import Side, _centre, _scale_warnings


def _textbook(runs):
    values = sorted(abs(v) for run in runs for v in run)
    if not values:
        return None
    middle = len(values) // 2
    centre = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return centre if centre > 0 and math.isfinite(centre) else None


def test_the_centre_is_the_median_of_all_values():
    rng = random.Random(3)
    pool = (lambda: rng.gauss(0, 1e3), lambda: float(rng.randint(-5, 5)), lambda: 1e308, lambda: -1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning reaches the terminal
        for _ in range(2000):
            runs = [[rng.choice(pool)() for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(0, 3))]
            assert _centre(Side("x", runs, None)) == _textbook(runs), runs


def test_a_side_100_times_the_baseline_is_warned_about():
    base = Side("a", [[1.0, 2.0, 3.0]], None)
    found = _scale_warnings([base, Side("b", [[150.0, 250.0], [200.0]], None), Side("c", [[2.5, 1.5]], None)])
    assert [(w.code, w.variant) for w in found] == [("scales-differ", "b")]
    assert found[0].template.startswith("b: its values are 100x a's")
