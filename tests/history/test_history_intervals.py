"""abstat history's size interval when the change's location is itself estimated.

The reported interval is the union of the step's t intervals (statsmodels' OLS here) over every
location a likelihood-ratio test at 95% keeps (gain within 3.84 of the best split's), so a
location 1-3 revisions off no longer leaves the true size outside it.
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
    plausible = sorted(k for k, g in gains.items() if g >= best - 3.84)
    assert len(plausible) > 3  # a weak step: its place is uncertain
    lows, highs = [], []
    j = np.arange(b - a, dtype=float)

    def model(k):  # a level and a step, and a common slope when both sides have 10 revisions
        columns = [np.ones(b - a)] + ([j] if min(k - a, b - k) >= 10 else []) + [(j >= k - a).astype(float)]
        return sm.OLS(x[a:b], np.column_stack(columns)).fit()

    for k in sorted({k0, *plausible}):
        low, high = model(k).conf_int(0.05)[-1]
        lows.append(low)
        highs.append(high)
    assert abs(change.low - min(lows)) < 1e-9 and abs(change.high - max(highs)) < 1e-9
    # the size itself is still the fit's at the reported place
    assert abs(change.shift - model(k0).params[-1]) < 1e-9


def _coverage(level: float) -> tuple[int, float]:
    """Detected steps of 1 SD at 30-50 of 80 revisions (their place uncertain): the share of
    reported intervals holding the true size."""
    saved, decide.LOCATION_LEVEL = decide.LOCATION_LEVEL, level
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
        decide.LOCATION_LEVEL = saved


@pytest.mark.xfail(
    strict=True,
    reason="reported only when the interval excludes 0: coverage below 0.95 of "
    "1 SD steps at an uncertain place (selection; issue 40, docs/history.md)",
)
def test_interval_covers_its_label_when_the_location_is_uncertain():
    hits, coverage = _coverage(decide.LOCATION_LEVEL)
    assert hits >= 100 and coverage >= 0.93, (hits, coverage)
    # the interval at the chosen place alone falls short on the same draws (0.89)
    _, alone = _coverage(0.0)
    assert alone < 0.91 and coverage - alone >= 0.03
