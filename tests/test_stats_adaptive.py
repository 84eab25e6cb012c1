"""The adaptive choice: label-invariant selection, each candidate against scipy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from abstat.comparison import compare
from abstat.stats import adaptive


def _shapes(rng):
    n = 60
    normal = rng.normal(1000, 10, 2 * n)
    outliers = rng.normal(1000, 10, 2 * n)
    outliers[rng.random(2 * n) < 0.05] *= 1.5
    slow = rng.random(2 * n) < 0.2
    bimodal = np.where(slow, rng.normal(1250, 10, 2 * n), rng.normal(1000, 10, 2 * n))
    skewed = 1000 + 30 * rng.lognormal(0, 1, 2 * n)
    return {"normal": normal, "outliers": outliers, "bimodal": bimodal, "skewed": skewed}


@pytest.mark.parametrize("seed", range(3))
def test_selection_ignores_the_labels(seed):
    """Any split of the same pooled values leads to the same estimator."""
    rng = np.random.default_rng(seed)
    for name, pooled in _shapes(rng).items():
        logs = np.log(pooled)
        choices = set()
        for _ in range(5):
            perm = rng.permutation(logs)
            choices.add(adaptive.select(perm[:60], perm[60:], 0.95))
        assert len(choices) == 1, name


def test_choices_follow_the_shape():
    rng = np.random.default_rng(4)
    picks = {name: adaptive.select(np.log(v[:60]), np.log(v[60:]), 0.95) for name, v in _shapes(rng).items()}
    assert picks["normal"] == "welch"
    assert picks["outliers"] in ("skipped", "hodges_lehmann", "yuen10")  # all near-equal here
    assert picks["bimodal"] == "skipped"
    assert picks["skewed"] in ("hodges_lehmann", "yuen10")


def test_skipped_welch_is_welch_on_the_values_inside_the_pooled_fences():
    rng = np.random.default_rng(5)
    x = rng.normal(1000, 10, 80)
    y = rng.normal(990, 10, 80)
    x[:3] *= 1.6
    y[:2] *= 1.4
    shift = adaptive.location_shift(x, y, 0.95)
    assert shift.method.startswith("Welch t without 5 far-out values")
    pooled = np.log(np.concatenate([x, y]))
    q1, q3 = np.percentile(pooled, [25, 75])
    lo, hi = q1 - 3 * (q3 - q1), q3 + 3 * (q3 - q1)
    lx, ly = np.log(x), np.log(y)
    kx, ky = lx[(lx >= lo) & (lx <= hi)], ly[(ly >= lo) & (ly <= hi)]
    ref = stats.ttest_ind(ky, kx, equal_var=False)
    assert shift.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert shift.ci_pct == pytest.approx((100 * math.expm1(ci.low), 100 * math.expm1(ci.high)))
    assert shift.far_out == (3, 2)


def test_a_changed_share_of_slow_values_keeps_them_in():
    rng = np.random.default_rng(6)

    def draw(p):
        slow = rng.random(150) < p
        return np.where(slow, rng.normal(1250, 10, 150), rng.normal(1000, 10, 150))

    c = compare(draw(0.2), draw(0.03))
    assert "far-out values kept" in c.method and c.method.startswith("Hodges-Lehmann")
    assert "far-out-share" in [w.code for w in c.warnings]


def test_non_positive_values_use_the_linear_scale():
    rng = np.random.default_rng(7)
    x, y = rng.normal(0, 1, 50), rng.normal(0.5, 1, 50)
    shift = adaptive.location_shift(x, y, 0.95)
    assert shift.scale == "linear"
    assert shift.delta_pct == pytest.approx(100 * shift.shift.estimate / abs(np.median(x)))
