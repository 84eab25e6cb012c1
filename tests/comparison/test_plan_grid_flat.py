"""plan on flat pilots on a grid with far levels (interrupts): the advised change is detected 80% of the time.

The grid model read the levels' density as a frequency polygon and spread each level over the cells
between midpoints; with interrupts on far levels the cell of the block's top level reached halfway to
them, and plan advised changes compare detected 97% (10 values a side) and 90.5% (20) of the time
(``benchmarks/calibration_plan.py``, grid shape)."""

from __future__ import annotations

import math

import numpy as np

import abstat
from abstat.comparison.sizing import sizing

MU, SD, STEP = 440.0, 6.7, 20.0
FAR = {600.0: 0.01, 640.0: 0.01}  # interrupts on levels of their own, the same in both variants
BODY = 1.0 - sum(FAR.values())


def draw(rng: np.random.Generator, n: int, factor: float = 1.0) -> np.ndarray:
    values = STEP * np.rint(rng.normal(MU * factor, SD, n) / STEP)
    far = rng.random(n)
    for level, share in FAR.items():
        values[far < share] = level
        far = far - share
    return values


def distribution(factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Levels and shares of the population with the latent scaled by ``factor``."""
    body = STEP * np.arange(15, 31)
    cdf = [0.5 * (1.0 + math.erf((b - MU * factor) / (SD * math.sqrt(2.0)))) for b in body - STEP / 2]
    cdf.append(1.0)
    levels = np.concatenate([body, list(FAR)])
    return levels, np.concatenate([BODY * np.diff(cdf), list(FAR.values())])


def true_change(factor: float) -> float:
    """The Hodges-Lehmann ratio (percent) of the populations' values, each level spread over its grid cell
    as the benchmark's truth reads them: P(log Y - log X > d) = 1/2 on a fine grid of cell points."""
    levels, p_x = distribution(1.0)
    _, p_y = distribution(factor)
    where = (np.arange(200) + 0.5) / 200 - 0.5
    xs = (levels[:, None] + STEP * where[None, :]).ravel()
    wx = np.repeat(p_x / 200, 200)
    order = np.argsort(levels)
    knots = np.column_stack([levels[order] - STEP / 2, levels[order] + STEP / 2]).ravel()
    cum = np.concatenate([[0.0], np.cumsum(p_y[order])])
    values = np.column_stack([cum[:-1], cum[1:]]).ravel()

    def above(d: float) -> float:
        return float(np.sum(wx * (1.0 - np.interp(xs * math.exp(d), knots, values)))) - 0.5

    lo, hi = -0.5, 0.5
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if above(mid) > 0 else (lo, mid)
    return 100.0 * math.expm1((lo + hi) / 2)


def test_the_advised_change_is_detected_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(20261206)
    size = sizing(draw(rng, 1000), draw(rng, 1000))
    n = 10
    pct = size.detectable(n, n, 0.05, 0.8)
    assert pct is not None
    lo, hi = 1.0, 1.2
    for _ in range(40):  # the latent factor whose true change is pct
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if true_change(mid) < pct else (lo, mid)
    hits = sum(bool(abstat.compare(draw(rng, n), draw(rng, n, lo)).significant) for _ in range(200))
    # 200 draws: Monte Carlo sd 2.8 points at 80%.  Here 3.25%, 72.0%; the old model advised 7.23%,
    # which compare detected 193 times in 200 (96.5%)
    assert 0.70 <= hits / 200 <= 0.90, (pct, hits / 200)


def test_the_grid_levels_are_numpys_distinct_values() -> None:
    from abstat.comparison.grid_sizing import MAX_LEVELS, MIN_PER_LEVEL, grid_levels

    rng = np.random.default_rng(5)
    for i in range(3000):
        step = int(rng.integers(1, 30))
        x, y = (np.round(rng.lognormal(0.0, 1.0, int(rng.integers(1, 40))) * step) / step for _ in range(2))
        if i % 7 == 0:
            x[0] = 0.0
        pooled = np.concatenate([x, y])
        levels = np.unique(pooled)
        usable = 2 <= levels.size <= MAX_LEVELS and pooled.size >= MIN_PER_LEVEL * levels.size
        got = grid_levels(x, y)
        assert (got is not None) == usable
        assert got is None or np.array_equal(got, levels)
