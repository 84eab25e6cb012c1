"""abstat history on its peers' own test series: apache-otava's and asv's.

The series (and what each peer test expects) are data in tests/data/history/, with
their source named there; the shapes of asv's step-detection tests are rebuilt from
the formulas of asv's test/test_step_detect.py.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from abstat.history.changepoints import detect
from support import paths

DATA = os.path.join(str(paths.DATA), "history")
OTAVA = json.load(open(os.path.join(DATA, "otava.json")))

# Tigerbeetle: index 10 is a one-point drop (15672 among 26500-26900) and 363 a one-point
# spike (31895); Otava reports 10 and 11 (into and out of the drop) and 363 at p >= 0.1.
TIGERBEETLE_SPIKES = {10, 11, 363}
# The steps Otava reports at some settings and abstat at all of these: the -12.5% step at 15
# (Otava's own test_tb_old_defaults) and the +3% step at 61, ten revisions before the +15.5%
# one at 71 (Otava at p <= 0.01); both are real, so both are reported, each at its place.
TIGERBEETLE_REAL = {15, 61}


def _cases():
    for name in ("single_series", "tigerbeetle"):
        for case in OTAVA[name]["cases"]:
            yield pytest.param(name, case, id=case["test"])


@pytest.mark.parametrize("name,case", list(_cases()))
def test_otava_test_cases(name, case):
    series = OTAVA[name]["series"]
    found = [
        c.index
        for c in detect(
            series, max_pvalue=case["max_pvalue"], min_magnitude=case["min_magnitude"], window=case["window_len"]
        ).change_points
    ]
    expected = case["expected"]
    if name == "single_series":
        assert found == expected
    elif case["min_magnitude"] > 0:
        # exactly Otava's change points, less the one-point spikes its looser settings report
        assert found == [i for i in expected if i not in TIGERBEETLE_SPIKES]
    else:
        # no magnitude floor: Otava reports noise at p >= 0.01 (70 points at p = 0.2); abstat
        # reports a subset of its points, plus the two real steps above, and always the
        # strongest five (Otava's own at p = 1e-5); at p 0.1 and 0.2 also 353 (p 0.022; Otava has 349 at
        # p 0.2), since a revert's edge it does not report stays in its neighbours' models
        # (changepoints.NUISANCE): every point within 5 (TCPDBench's margin) of one Otava reports at some
        # setting, at most one not among this setting's
        loosest = {i for c in OTAVA[name]["cases"] for i in c["expected"]} | TIGERBEETLE_REAL
        assert all(any(abs(f - a) <= 5 for a in loosest) for f in found)
        assert sum(f not in set(expected) | TIGERBEETLE_REAL for f in found) <= 1
        # 131 and 192 (Otava's at p = 1e-5) were found before the decision model (level + slope + step
        # over --window each side, interval without 0); it misses them below p 0.5 (issue 40, docs/history.md)
        assert {71, 95} <= set(found)
        # 61 stands at every level: at p 0.01 it fell to the whole-series quadratic (WHOLE_CURVE) while the
        # drift check read the short stretches between close changes as a line's ends; with those ends
        # extended past their neighbour (drift.BUMP_SIDE) it is [15, 61, 71, 95, 142, 148, 192, 212], all
        # of them Otava's own at p 0.01 (issue 40, docs/history.md)
        assert TIGERBEETLE_REAL <= set(found)


def test_tigerbeetle_step_at_71_is_placed_there_and_sized():
    series = OTAVA["tigerbeetle"]["series"]
    changes = {c.index: c for c in detect(series).change_points}
    assert 71 in changes and 61 in changes
    big, small = changes[71], changes[61]
    assert 0.14 < big.relative < 0.17
    # the size is the decision model's: a level, a slope and steps at 95 and 71 over 61-130 (the side
    # up to 95, a change of the other direction 24 revisions on, is extended past it: drift.BUMP_SIDE);
    # numpy's least squares of that model gives the same step, and the interval holds it
    x = np.asarray(series[61:131], dtype=float)
    i = np.arange(x.size)
    design = np.column_stack([np.ones(x.size), i / (x.size - 1) * 2 - 1, i >= 95 - 61, i >= 71 - 61]).astype(float)
    step = np.linalg.lstsq(design, x, rcond=None)[0][-1]
    assert big.shift == pytest.approx(step, rel=1e-9)
    assert big.relative_interval()[0] < step / np.mean(series[61:71]) < big.relative_interval()[1]
    assert 0.025 < small.relative < 0.04


def test_asv_cosine_plus_one_step_is_one_step():
    # asv's test_autocorrelated: 0.2 cos(j / 100) + a step of 1 at 500, here with Gaussian noise
    # of a quarter of the cosine's amplitude: the step, and not the cosine's slopes
    j = np.arange(1000)
    y = 0.2 * np.cos(j / 100.0) + 1.0 * (j >= 500)
    rng = np.random.default_rng(3)
    found = [[c.index for c in detect(y + rng.normal(0, 0.05, j.size)).change_points] for _ in range(10)]
    assert all(500 in f for f in found)
    assert sum(f == [500] for f in found) >= 8, found


@pytest.mark.parametrize("noise", [0.0, 1e-4])
def test_asv_noiseless_cosine_plus_one_step_is_exactly_that_step(noise):
    # asv's test_autocorrelated exactly (noise 0: asv expects right == [500, 1000]), and with
    # a little noise: the residuals of the steps are serially correlated, so the cosine's
    # pieces do not stand, and the step of 1 does
    import abstat.history.changepoints as changepoints

    j = np.arange(1000)
    y = 0.2 * np.cos(j / 100.0) + 1.0 * (j >= 500) + np.random.default_rng(4).normal(0, 1, j.size) * noise
    assert [c.index for c in detect(y).change_points] == [500]
    # without the serial correlation checks (the confirmation's and the decision model's allowance
    # for a wandering level), the noiseless cosine is cut into several steps (5 with the slope always
    # in the decision model and the whole-series quadratic; dozens before them)
    import abstat.history.decide as decide

    saved, changepoints.SERIAL_GATE = changepoints.SERIAL_GATE, 0.0
    wander, decide.WANDER_GATE = decide.WANDER_GATE, 1e9
    try:
        assert len(detect(y).change_points) > 3
    finally:
        changepoints.SERIAL_GATE, decide.WANDER_GATE = saved, wander


@pytest.mark.xfail(
    strict=True,
    reason="seeded intervals propose more pieces of the cosine; one survives in some draws (issue 40, docs/history.md)",
)
def test_asv_cosine_plus_one_step_with_noise_of_a_twentieth_is_that_step():
    # asv's test_autocorrelated with noise of 1/20 of the cosine's amplitude (0.01): the
    # residuals are serially correlated, so a change must also stand beyond a local line through
    # it; the cosine's turns (sizes of 0.00-0.01 beyond that line) are no steps
    import abstat.history.changepoints as changepoints

    j = np.arange(1000)
    y = 0.2 * np.cos(j / 100.0) + 1.0 * (j >= 500)
    rng = np.random.default_rng(3)
    draws = [y + rng.normal(0, 0.01, j.size) for _ in range(10)]
    assert all([c.index for c in detect(v).change_points] == [500] for v in draws)
    saved, changepoints.CURVE_LINE = changepoints.CURVE_LINE, False
    try:  # without it, 1-4 turns stand in most draws
        assert sum(len(detect(v).change_points) > 1 for v in draws) >= 5
    finally:
        changepoints.CURVE_LINE = saved


def test_asv_weighted_steps_and_a_spike():
    # asv's test_weighted: five steps, uniform noise, one spike at 15 (asv reports it unless it is
    # down-weighted; a spike is never a change here)
    rng = np.random.RandomState(1234)
    t = np.arange(100)
    y = 0.4 * (t >= 5) + 0.9 * (t >= 10) - 0.2 * (t >= 20) + 0.2 * (t >= 50) + 1.1 * (t >= 70)
    y = y + 0.05 * rng.rand(y.size)
    y[15] = 2
    assert [c.index for c in detect(y).change_points] == [5, 10, 20, 50, 70]


@pytest.mark.parametrize("seed", [1234, 5678, 8901, 2345])
def test_asv_detect_regressions_shape(seed):
    # asv's test_detect_regressions: 4000 points, uniform noise, -0.3 at 1000, then close steps
    # of 2-2.7; two points are missing (None and nan there: left out here, as a CSV's empty cells)
    rng = np.random.RandomState(seed)
    t = np.arange(4000)
    y = 0.7 * rng.rand(t.size)
    y -= 0.3 * (t >= 1000)
    y += 2.0 * (t >= 3234 + (seed % 123))
    y += 2.0 * ((t >= 3264 + (seed % 53)) & (t < 3700))
    y -= 2.7 * ((t >= 3350) & (t < 3500 + (seed % 71)))
    y = np.delete(y, [123, 1234])
    found = [c.index for c in detect(y).change_points]
    expected = [3234 + (seed % 123), 3264 + (seed % 53), 3350, 3500 + (seed % 71), 3700]
    assert found[1:] == [e - 2 for e in expected]
    assert 990 - 2 <= found[0] <= 1010 - 2
