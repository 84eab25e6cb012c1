"""abstat history's size interval when the change's location is itself estimated.

The reported interval is the projection of the joint 95% likelihood-ratio region of the step's
location and size: every split whose gain is within ``2 F(2, df)`` (scipy's F at 95%) of the best
split's contributes its step (statsmodels' OLS here) +- its standard error times
``sqrt(2 F - deficit)``, so neither a location 1-3 revisions off nor the choice of the location
leaves the true size outside it.  The rule before, the union of 95% t intervals over the locations
a 95% test keeps, covered 0.89-0.91 on quantized and spiky series (issue 40).
"""

from __future__ import annotations

import numpy as np
import pytest

import abstat.history.decide as decide
from abstat.history.changepoints import detect
from abstat.history.segment import prepare


def test_interval_is_the_union_over_the_plausible_locations_against_statsmodels():
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    values = np.r_[rng.normal(100, 1, 60), rng.normal(101.2, 1, 60)]
    (change,) = detect(values).change_points
    k0 = change.index
    data = prepare(list(values))
    x = np.asarray([data.value(v) for v in data.clipped])  # the values tested (spikes pulled back)
    sigma2 = (data.scale * 2.0**data.exponent) ** 2
    a, b = max(0, k0 - 100), min(values.size, k0 + 100)  # the decision's model: --window each side
    # brute force: the drop in the sum of squares of a split at k, in noise variances
    total = float(np.sum((x[a:b] - x[a:b].mean()) ** 2))
    gains = {
        k: (total - float(np.sum((x[a:k] - x[a:k].mean()) ** 2) + np.sum((x[k:b] - x[k:b].mean()) ** 2))) / sigma2
        for k in range(a + 5, b - 4)
    }
    best = max(gains.values())
    from scipy.stats import f as f_dist

    bound = 2 * f_dist.ppf(0.95, 2, b - a - 3)
    plausible = sorted(k for k, g in gains.items() if g >= best - bound)
    assert len(plausible) > 3  # a weak step: its place is uncertain
    lows, highs = [], []
    j = np.arange(b - a, dtype=float)

    def model(k):  # a level and a step, and a common slope when both sides have 10 revisions
        columns = [np.ones(b - a)] + ([j] if min(k - a, b - k) >= 10 else []) + [(j >= k - a).astype(float)]
        return sm.OLS(x[a:b], np.column_stack(columns)).fit()

    for k in sorted({k0, *plausible}):
        fitted = model(k)
        deficit = 0.0 if k == k0 else best - gains[k]
        half = fitted.bse[-1] * np.sqrt(2 * f_dist.ppf(0.95, 2, fitted.df_resid) - deficit)
        lows.append(fitted.params[-1] - half)
        highs.append(fitted.params[-1] + half)
    assert abs(change.low - min(lows)) < 1e-9 and abs(change.high - max(highs)) < 1e-9
    # the size itself is still the fit's at the reported place
    assert abs(change.shift - model(k0).params[-1]) < 1e-9


def _coverage(joint: bool) -> tuple[int, float]:
    """Detected steps of 1 SD at 30-50 of 80 revisions (their place uncertain): the share of
    reported intervals holding the true size, with the joint region (``joint``) or the rule before."""
    saved, decide.JOINT = decide.JOINT, joint
    try:
        rng = np.random.default_rng(5)
        hits = covered = 0
        for _ in range(300):
            at = int(rng.integers(30, 51))
            y = rng.normal(0, 1, 80) + 1.0 * (np.arange(80) >= at)
            for c in detect(y).change_points:
                if abs(c.index - at) <= 3:
                    hits += 1
                    covered += c.low <= 1.0 <= c.high
        return hits, covered / hits
    finally:
        decide.JOINT = saved


def test_weak_steps_interval_covers_more_than_the_union_of_t_intervals():
    """Seeded (fixed draws): 54 detected 1 SD steps; the joint region covers 0.926 of them, the rule
    before 0.870.  Still short of 0.95: a weak step is detected when the noise enlarged it (selection)."""
    hits, coverage = _coverage(True)
    before_hits, before = _coverage(False)
    assert hits == before_hits >= 50
    assert coverage >= 0.92 and before <= 0.88, (coverage, before)


def _shaped(rng: np.random.Generator, shape: str) -> tuple[np.ndarray, dict[int, float]]:
    """60-300 revisions of N(100, 1) with 1-3 steps of 1.5-4 SD (at least 10 apart); ``quantized``:
    rounded to a grid of one SD; ``spikes``: 2% of revisions 10-30 SD high (benchmarks/changepoints.py's
    shapes, with the noise SD as unit)."""
    n = int(rng.integers(60, 301))
    count = int(rng.integers(1, 4))
    places = rng.choice(np.arange(10, n - 10, 10), size=count, replace=False) + rng.integers(0, 5, count)
    level, shifts = np.zeros(n), {}
    for at in np.sort(places):
        shifts[int(at)] = float(rng.uniform(1.5, 4.0) * rng.choice((-1.0, 1.0)))
        level[at:] += shifts[int(at)]
    x = 100 + level + rng.normal(0, 1, n)
    if shape == "quantized":
        return np.round(x), shifts
    hit = rng.random(n) < 0.02
    x[hit] += rng.uniform(10, 30, int(hit.sum()))
    return x, shifts


def _shape_coverage(shape: str, joint: bool) -> tuple[int, float]:
    saved, decide.JOINT = decide.JOINT, joint
    try:
        rng = np.random.default_rng(2)
        hits = covered = 0
        for _ in range(200):
            x, shifts = _shaped(rng, shape)
            for c in detect(x).change_points:
                at = min(shifts, key=lambda t: abs(t - c.index))
                if abs(at - c.index) <= 3:
                    hits += 1
                    covered += c.low <= shifts[at] <= c.high
        return hits, covered / hits
    finally:
        decide.JOINT = saved


@pytest.mark.parametrize("shape", ["quantized", "spikes"])
def test_interval_covers_steps_on_quantized_and_spiky_series(shape):
    """Seeded (fixed draws, 200 series, 330-380 detected steps): coverage of the true size by the
    reported 95% interval is at least 0.94 (quantized 0.955, spikes 0.958); the rule before, on the
    same detections, 0.908 and 0.925."""
    hits, coverage = _shape_coverage(shape, True)
    before_hits, before = _shape_coverage(shape, False)
    assert hits == before_hits >= 300
    assert coverage >= 0.94 and before <= 0.93, (hits, coverage, before)
