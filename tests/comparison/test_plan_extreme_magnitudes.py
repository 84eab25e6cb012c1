"""``plan`` on pilots near the ends of double precision plans as at ordinary sizes (attack20 A7).

Its sums of squares underflowed (values near 1e-300: standard deviation 0) or overflowed (1e200: inf), and the
sizes it printed (1001, 2, "too large") had nothing to do with the data.  The reference: the same pilots at an
ordinary scale, multiplied by an exact power of two or by a power of ten, give the same sizes and powers, and the
absolute figures scaled by that factor."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.comparison.planning import plan


def _pilots(factor: float) -> dict[str, list[float]]:
    rng = np.random.default_rng(11)
    return {
        "a": [float(v) * factor for v in rng.normal(100, 10, 20)],
        "b": [float(v) * factor for v in rng.normal(110, 10, 20)],
    }


@pytest.mark.parametrize("center", ["auto", "mean", "median"])
@pytest.mark.parametrize("factor", [2.0**-1000, 1e-302, 1e200, 2.0**900])
def test_sizes_and_powers_do_not_depend_on_the_scale(center, factor):
    plain = plan(_pilots(1.0), detect=1.0, center=center)
    far = plan(_pilots(factor), detect=1.0, center=center)
    assert far.samples_per_variant == plain.samples_per_variant and plain.samples_per_variant is not None
    assert [v.current_power for v in far.variants] == pytest.approx([v.current_power for v in plain.variants])
    for near, away in zip(plain.variants, far.variants, strict=True):
        assert away.stddev == pytest.approx(near.stddev * factor, rel=1e-9) and away.stddev > 0
        assert away.mean == pytest.approx(near.mean * factor, rel=1e-9)
    assert far.detect == pytest.approx(plain.detect * factor, rel=1e-9)


def test_an_absolute_change_is_scaled_with_the_pilots():
    factor = 1e-302
    plain = plan(_pilots(1.0), detect=1.0, relative=False)
    far = plan(_pilots(factor), detect=1.0 * factor, relative=False)
    assert far.samples_per_variant == plain.samples_per_variant
    assert far.detect_pct == pytest.approx(plain.detect_pct)


def test_nested_pilots_at_2_to_the_minus_510_give_the_variance_components_of_ordinary_ones():
    """(A variance of values beyond 1e154 does not exist in double precision: the allocations still do.)"""
    factor = 2.0**-510
    rng = np.random.default_rng(3)
    runs = {
        name: [list(rng.normal(level, 5, 10) + rng.normal(0, 3)) for _ in range(6)]
        for name, level in (("a", 100), ("b", 104))
    }
    far_runs = {name: [[v * factor for v in run] for run in r] for name, r in runs.items()}
    plain = plan(runs, detect=2.0, center="mean")
    far = plan(far_runs, detect=2.0, center="mean")
    assert far.within == pytest.approx(plain.within * factor * factor, rel=1e-9)
    assert 0 < far.within < 1e-300 and far.between is not None
    assert [a.runs_per_variant for a in far.allocations] == [a.runs_per_variant for a in plain.allocations]
