"""The order-statistic interval of two medians holds its own estimate where only rounding put it outside
(rev19: 7 grid values against 500, +6%: the estimate 6.000000000000005 beside [6.000000000000024, 10])."""

from __future__ import annotations

import numpy as np

import abstat


def test_every_interval_holds_its_estimate() -> None:
    rng = np.random.default_rng(730)
    for _ in range(200):
        base = np.round(rng.normal(1000, 15, 500) / 20) * 20
        cand = np.round(rng.normal(1060, 15, 7) / 20) * 20
        result = abstat.compare(base, cand, center="median")
        if result.ci_pct is not None:
            assert result.ci_pct[0] <= result.delta_pct <= result.ci_pct[1]
