"""A few values against many (attack17 #3): ``hodges_lehmann._small``'s interval walk, which crossed the gaps
between the sorted pairwise differences one at a time (5 against 30,000: ~10^5 statistics, 83 s of CPU), now
sweeps them (:class:`abstat.stats.hl_sweep.Sweep`).  Checked here: its ends are those of the walk one gap at a
time written out below with ``bm_statistic`` (bit for bit, on 240 random cases with ties, separated samples,
fixed and Student's t references and inflated variances) and of a brute-force inversion; the number of gaps
evaluated exactly stays small; and above ``SMALL`` pairs (``_large``) 5 values against many give the interval
``_small`` gives instead of an open one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_hl_small_bits import brute_force

from abstat.stats import hl_gaps
from abstat.stats import hodges_lehmann as hl
from abstat.stats.brunner_munzel import bm_statistic, spread_ties
from abstat.stats.distributions import t_quantile


def one_by_one(x, y, confidence, inflate, fixed):
    """``_small`` as it was: the fixed point, then the walk testing one gap at a time with ``bm_statistic``."""
    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    d = np.sort(np.subtract.outer(sy.values, sx.values).ravel())
    n = d.size
    estimate = float(d[n // 2]) if n % 2 else (float(d[n // 2 - 1]) + float(d[n // 2])) / 2.0
    last = np.flatnonzero(np.append(d[1:] != d[:-1], True))
    u, below, m = d[last], last + 1, last.size
    level = 0.5 + confidence / 2.0

    def stat(k):
        point = u[0] - 1 - abs(u[0]) if k < 0 else u[-1] + 1 + abs(u[-1]) if k >= m - 1 else (u[k] + u[k + 1]) / 2
        return bm_statistic(sx, sy, float(point), inflate)

    def bound(s):
        return math.inf if fixed == math.inf else (t_quantile(s.df, level) if fixed is None else fixed) * s.se

    def ok(k):
        s = stat(k)
        return abs(s.p_hat - 0.5) <= bound(s)

    centre = int(np.searchsorted(u, estimate, side="right")) - 1
    ends = []
    for sign in (-1, 1):
        s, k = bm_statistic(sx, sy, estimate, inflate), centre
        for _ in range(6):
            target = n * (0.5 + sign * bound(s))
            k_new = min(
                max(int(np.searchsorted(below, target, side="left" if sign < 0 else "right")) - (sign > 0), -1), m - 1
            )
            if k_new == k:
                break
            k, s = k_new, stat(k_new)
        if sign < 0:
            if ok(k):
                while k >= 0 and ok(k - 1):
                    k -= 1
            else:
                while k < centre and not ok(k + 1):
                    k += 1
                k += 1
            ends.append(-math.inf if k < 0 else float(u[k]) if k < m else estimate)
        else:
            if ok(k):
                while k < m - 1 and ok(k + 1):
                    k += 1
            else:
                while k > centre and not ok(k - 1):
                    k -= 1
                k -= 1
            ends.append(math.inf if k >= m - 1 else float(u[k + 1]))
    return estimate, min(ends[0], estimate), max(ends[1], estimate)


def sample(kind, n, rng):
    if kind == "apart":  # (the attack's shape: 5 integers far above uniform candidates)
        return rng.integers(1218, 2676, n).astype(float)
    if kind == "uniform":
        return rng.uniform(1000.0, 1010.0, n)
    if kind == "tied":
        return np.round(rng.normal(1005.0, 2.0, n))
    return np.round(rng.normal(1005.0, 3.0, n), 1)


KINDS = (("apart", "uniform"), ("tied", "tied"), ("fine", "fine"), ("uniform", "tied"), ("fine", "tied"))
SETTINGS = ((None, (1.0, 1.0)), (2.1, (1.0, 1.0)), (3.0, (1.0, 1.0)), (2.6, (100.0, 100.0)), (None, (4.0, 1.0)))


def random_case(i):
    rng = np.random.default_rng(1700 + i)
    kx, ky = KINDS[i % len(KINDS)]
    nx, ny = int(rng.integers(1, 9)), int(rng.integers(2, 700))
    if i % 4 == 3:
        nx, ny = ny // 10 + 2, nx + 3  # (the small side as the candidate)
    x, y = np.log(sample(kx, nx, rng)), np.log(sample(ky, ny, rng))
    fixed, inflate = SETTINGS[(i // len(KINDS)) % len(SETTINGS)]
    return x, y, fixed, inflate


@pytest.mark.parametrize("block", range(8))
def test_the_swept_walk_ends_where_the_walk_one_gap_at_a_time_ended(block):
    for i in range(block * 30, block * 30 + 30):
        x, y, fixed, inflate = random_case(i)
        got = hl._small(spread_ties(np.sort(x)), spread_ties(np.sort(y)), 0.95, inflate, fixed)
        want = one_by_one(x, y, 0.95, inflate, fixed)
        assert [v.hex() for v in got] == [v.hex() for v in want], (i, x.size, y.size, fixed, inflate)


@pytest.mark.parametrize(("n", "fixed"), [(600, 3.0), (900, None), (400, 2.1)])
def test_a_few_against_many_is_the_brute_force_inversion(n, fixed):
    rng = np.random.default_rng(n)
    x, y = np.log(sample("apart", 5, rng)), np.log(sample("uniform", n, rng))
    got = hl._small(spread_ties(np.sort(x)), spread_ties(np.sort(y)), 0.95, (1.0, 1.0), fixed)
    assert got == brute_force(x, y, fixed, (1.0, 1.0))
    assert math.isfinite(got[1]) and math.isfinite(got[2])


def test_a_few_against_many_evaluates_few_gaps_exactly(monkeypatch):
    """5 against 3,000, every baseline value above every candidate: the walk crossed ~11,000 gaps (each a
    pass over the 3,000 values); now a few dozen at most are tested exactly."""
    counted = []
    statistics, single = hl_gaps.statistics, hl_gaps.bm_statistic
    monkeypatch.setattr(
        hl_gaps, "statistics", lambda x, y, shifts, inflate: counted.extend(shifts) or statistics(x, y, shifts, inflate)
    )
    monkeypatch.setattr(hl_gaps, "bm_statistic", lambda *a: counted.append(a[2]) or single(*a))
    rng = np.random.default_rng(5)
    x, y = np.log(sample("apart", 5, rng)), np.log(sample("uniform", 3000, rng))
    got = hl._small(spread_ties(np.sort(x)), spread_ties(np.sort(y)), 0.95, (1.0, 1.0), 3.0)
    assert len(counted) <= 64
    assert got == brute_force(x, y, 3.0, (1.0, 1.0))


@pytest.mark.parametrize(("seed", "fixed"), [(41, 3.0), (42, 2.1), (43, None)])
def test_above_small_pairs_a_few_values_keep_the_interval_small_gives(monkeypatch, seed, fixed):
    """``_large`` (forced here by a smaller ``SMALL``) gave an open interval when its first bound exceeded
    1/2: 5 against 41,000 was "cannot judge" where 5 against 30,000 was -37% [-62, -16]."""
    rng = np.random.default_rng(seed)
    x, y = np.log(sample("apart", 5, rng)), np.log(sample("uniform", 4000, rng))
    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    want = hl._small(sx, sy, 0.95, (1.0, 1.0), fixed)
    got = hl._large(sx, sy, 0.95, (1.0, 1.0), fixed)
    assert got[1:] == pytest.approx(want[1:], rel=1e-3, abs=1e-4 * (want[2] - want[1]))
    monkeypatch.setattr(hl, "SMALL", 1000)
    whole = hl.hodges_lehmann(x, y, 0.95)
    assert math.isfinite(whole.low) and math.isfinite(whole.high) and whole.high < 0
