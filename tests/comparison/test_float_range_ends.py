"""Values at the ends of double precision (attack20 A13), in the library as in every format: a change that
overflows (1.5 against 1.1e308) or sides whose values vanish beside each other on one scale (1e-300 against
1e308) cannot be judged, with the reason; never a verdict word beside a change that cannot be printed, and never
a baseline centre shown as 0 when every value is positive.  Values that are merely small together
(1e-300 against 2e-300) are compared as at ordinary sizes (the reference: the same values x 1e300)."""

from __future__ import annotations

import math

import pytest

import abstat

LOW = [1.0, 1.5, 2.0, 1.2, 1.7]
HIGH = [1e308, 1.1e308, 1.2e308, 1.05e308, 1.15e308]


@pytest.mark.parametrize("center", ["auto", "mean", "median"])
def test_an_overflowing_change_cannot_be_judged(center):
    c = abstat.compare(LOW, HIGH, center=center)
    assert c.verdict == "cannot judge" and not c.significant and c.ci_pct is None
    assert c.warnings and math.isnan(c.delta_pct) or "floating-point range" in str([w.message for w in c.warnings])


@pytest.mark.parametrize("center", ["auto", "mean", "median"])
def test_sides_beyond_double_precision_apart_cannot_be_judged_and_keep_their_centres(center):
    tiny = [v * 1e-300 for v in LOW]
    c = abstat.compare(tiny, HIGH, center=center)
    assert c.verdict == "cannot judge" and not c.significant and c.ci_pct is None and math.isnan(c.delta_pct)
    assert any("double precision" in w.message for w in c.warnings), [w.message for w in c.warnings]
    assert c.centers is None or c.centers[0] > 0


def test_small_values_together_are_compared_as_at_ordinary_sizes():
    tiny = abstat.compare([v * 1e-300 for v in LOW], [v * 2e-300 for v in LOW])
    plain = abstat.compare(LOW, [v * 2 for v in LOW])
    assert tiny.verdict == plain.verdict and tiny.delta_pct == pytest.approx(plain.delta_pct)
