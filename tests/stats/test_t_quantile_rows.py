"""The small-n power model's pre-test quantiles and Yuen tails computed together: the same floats as one at a time."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.stats.dependence import lag1_rank_autocorrelation, serial_factors, serial_factors_many, timed_sample
from abstat.stats.distributions import stdtr, stdtrit
from abstat.stats.t_quantile_rows import stdtr_rows, stdtrit_rows


def _same(got: list[float], want: list[float]) -> bool:
    return all(g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("q", [0.975, 0.995, 0.95, 0.9, 0.75, 0.5000001, 0.5, 0.3, 0.0, 1.0])
def test_the_quantiles_together_are_stdtrits_floats(q: float) -> None:
    rng = np.random.default_rng(26)
    dfs = np.concatenate([rng.uniform(2.0, 6.0, 300), rng.uniform(4.0, 60.0, 600), np.exp(rng.uniform(0.0, 17.0, 300))])
    dfs = [*dfs.tolist(), 2.0, 4.0, 4.0, 3.999999, 1e7, 1e7 + 1.0, math.inf, math.nan]
    assert _same(stdtrit_rows(dfs, q), [stdtrit(df, q) for df in dfs])


def test_the_tails_together_are_stdtrs_floats() -> None:
    rng = np.random.default_rng(42)
    dfs = np.concatenate([rng.uniform(0.5, 6.0, 1000), np.exp(rng.uniform(-2.0, 16.0, 1000))])
    ts = rng.standard_t(3, 2000) * rng.choice([1e-6, 0.1, 1.0, 3.0, 30.0, 1e5], 2000)
    dfs[:5], ts[5:9] = [math.nan, math.inf, 0.0, -1.0, 1e7], [math.nan, math.inf, -math.inf, 0.0]
    assert _same(stdtr_rows(dfs.tolist(), ts.tolist()), [stdtr(df, t) for df, t in zip(dfs, ts, strict=True)])


@pytest.mark.parametrize("phi, n1, n2", [(0.0, 20, 20), (0.6, 10, 12), (0.6, 20, 20), (0.9, 15, 40), (0.3, 100, 60)])
def test_the_serial_factors_together_are_compares(phi: float, n1: int, n2: int) -> None:
    rng = np.random.default_rng(7)
    pairs = []
    for _ in range(300):
        x, y = rng.normal(size=n1), rng.normal(size=n2)
        for v in (x, y):
            for j in range(1, v.size):
                v[j] += phi * v[j - 1]
        pairs.append((x, y))
    pairs[0] = (np.sort(pairs[0][0]), pairs[0][1])  # a sorted sample gives no evidence
    want = [serial_factors(x, y, (None, None), 0.95)[:2] for x, y in pairs]
    many = [(x, y, (None, None), (timed_sample(x), timed_sample(y))) for x, y in pairs]
    assert serial_factors_many(many, 0.95) == want
    lag1 = [(lag1_rank_autocorrelation(x), lag1_rank_autocorrelation(y)) for x, y in pairs]
    many = [(x, y, r, (timed_sample(x), timed_sample(y))) for (x, y), r in zip(pairs, lag1, strict=True)]
    assert serial_factors_many(many, 0.95) == [
        serial_factors(x, y, r)[:2] for (x, y), r in zip(pairs, lag1, strict=True)
    ]
    assert sum(f != (1.0, 1.0) for f in want) > 20  # the pre-test fired (a tenth of i.i.d. pairs)
