"""plan on nested pilots on a grid sizes the change a real change makes in the spread run medians (issue 34).

On a 20-cycle grid with latent sd 10 a real 1% change moves the spread run medians by ~0.76% (4000
simulated runs), and plan sized the whole 1%: its advice reached 54-63% power instead of 80%."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.comparison.planning_grid import real_change, spread_median_change
from abstat.comparison.planning_nested import RunSizer, common_spread, median_components
from abstat.stats.nested import run_centres
from abstat.stats.run_medians import spread_medians


def grid(latent: np.ndarray) -> np.ndarray:
    return 20.0 * np.rint(latent / 20.0)


def test_the_spread_median_change_is_that_of_rounded_normal_values() -> None:
    # reference: the spread median (stats.run_medians, compare's code) of 400,000 rounded latent values,
    # before and after scaling the latent; its sampling sd here is about 0.004 points
    rng = np.random.default_rng(20261205)
    latent = rng.normal(440.0, 10.0, 400_000)
    change = spread_median_change(grid(rng.normal(440.0, 10.0, 5_000)))
    assert change is not None
    before = float(spread_medians([grid(latent)])[0])
    for pct in (0.5, 1.0, 2.0, -1.0):
        after = float(spread_medians([grid(latent * (1 + pct / 100))])[0])
        truth = 100.0 * (after / before - 1.0)
        assert abs(truth) < 0.98 * abs(pct)  # attenuated: the reason for the model
        assert change(pct) == pytest.approx(truth, abs=0.06), (pct, change(pct), truth)
        assert real_change(change, change(pct)) == pytest.approx(pct, rel=1e-6)


def test_not_a_grid_gives_no_model() -> None:
    rng = np.random.default_rng(3)
    assert spread_median_change(rng.normal(1000.0, 10.0, 2000)) is None  # continuous: every value its own level
    assert spread_median_change(grid(rng.normal(440.0, 100.0, 2000))) is None  # more levels than a normal is fitted to
    assert spread_median_change(grid(rng.normal(440.0, 10.0, 20))) is None  # too few values


def test_grid_runs_are_sized_for_the_real_change() -> None:
    rng = np.random.default_rng(11)
    runs = {v: [grid(440.0 + rng.normal(0, 4) + rng.normal(0.0, 10.0, 49)) for _ in range(60)] for v in "ab"}
    parts = [median_components(r) for r in runs.values()]
    between, within, length = (sum(p[i] for p in parts if p is not None) / 2 for i in range(3))
    cx, cy = (run_centres(r, "median") for r in runs.values())
    pooled = np.concatenate([np.concatenate(r) for r in runs.values()])
    plain = RunSizer(*common_spread(cx, cy), between, within, length, "auto", 0.95)
    real = RunSizer(cx, cy, between, within, length, "auto", 0.95, pooled)
    assert plain.change is None and real.change is not None and real.model is not None
    shrink = real.change(1.0)
    assert 0.6 < shrink < 0.95
    real.model = None  # the change of the centre alone: the candidate's run medians as spread as the baseline's
    # a real 1% needs what a 1% change of the spread medians times the shrink needs
    assert real.runs(length, 1.0, 0.05, 0.8) == plain.runs(length, shrink, 0.05, 0.8)
    assert real.runs(length, 1.0, 0.05, 0.8) > plain.runs(length, 1.0, 0.05, 0.8)
    # both variants' run medians at their pooled variance
    pooled_var = (np.var(cx, ddof=1) + np.var(cy, ddof=1)) / 2
    for c in (real.cx, real.cy):
        assert np.var(c, ddof=1) == pytest.approx(pooled_var, rel=1e-12)
    found = real.detectable(length, 20, 20, 0.05, 0.8)
    assert found is not None and real.change(found) == pytest.approx(plain.detectable(length, 20, 20, 0.05, 0.8))


def _draw(rng: np.random.Generator, runs: int, sd: float, factor: float = 1.0) -> list[np.ndarray]:
    """``runs`` runs of 49 cycle counts on a 20-cycle grid: latent N(440 + offset, sd), offsets sd 4."""
    latent = (440.0 + rng.normal(0.0, 4.0, (runs, 1)) + rng.normal(0.0, sd, (runs, 49))) * factor
    return list(grid(latent))


def _sizer(rng: np.random.Generator, sd: float) -> RunSizer:
    runs = {v: _draw(rng, 100, sd) for v in "ab"}
    parts = [median_components(r) for r in runs.values()]
    between, within, length = (sum(p[i] for p in parts if p is not None) / 2 for i in range(3))
    cx, cy = (run_centres(r, "median") for r in runs.values())
    pooled = np.concatenate([np.concatenate(r) for r in runs.values()])
    return RunSizer(cx, cy, between, within, length, "auto", 0.95, pooled)


def test_a_change_to_a_cell_boundary_widens_the_run_medians() -> None:
    # reference: compare's spread medians of 4000 runs drawn at the change; a real +2.2% moves the latent
    # centre from 440 to a cell boundary (450), where the run medians' interquartile range doubles
    sizer = _sizer(np.random.default_rng(5), 10.0)
    assert sizer.model is not None
    truth = spread_medians(_draw(np.random.default_rng(6), 4000, 10.0, 1.022))
    iqr = float(np.subtract(*np.quantile(truth, [0.75, 0.25])))
    reshaped = sizer.model.reshaped(sizer.cy, 49, 2.2)
    assert float(np.subtract(*np.quantile(reshaped, [0.75, 0.25]))) == pytest.approx(iqr, rel=0.15)
    assert float(np.subtract(*np.quantile(sizer.cy, [0.75, 0.25]))) < 0.7 * iqr  # the pilot's, unreshaped
    assert float(np.median(reshaped) - np.median(sizer.cy)) == pytest.approx(np.median(truth) - 440.3, abs=1.5)


def test_five_runs_sized_on_a_grid_reach_the_power() -> None:
    # 5 runs x 49 a side, latent sd 8: the change plan calls detectable 80% of the time, judged by compare
    # on 300 fresh experiments (Monte Carlo sd 2.3 points).  Sized with the candidate's run medians as
    # spread as the baseline's (before), the change was 2.02% and compare reached 67%: the run medians
    # vary more once the latent centre nears the cell boundary at 450.
    import abstat

    sizer = _sizer(np.random.default_rng(20261205), 8.0)
    pct = sizer.detectable(49, 5, 5, 0.05, 0.8)
    assert pct is not None
    rng = np.random.default_rng(1)
    hits = sum(
        bool(abstat.compare(_draw(rng, 5, 8.0), _draw(rng, 5, 8.0, 1 + pct / 100)).significant) for _ in range(300)
    )
    assert 0.73 <= hits / 300 <= 0.89, (pct, hits / 300)
