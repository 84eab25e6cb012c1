"""plan/noise sizing at small n: the power of compare's permutation test, by
simulation (src/abstat/stats/permutation_power.py), against scipy's
Brunner-Munzel statistic, the permutation test itself, a brute-force
enumeration and compare's own achieved power (issue 34, item 8)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

import abstat
from abstat.comparison.planning import plan
from abstat.comparison.sizing import sizing
from abstat.stats.permutation import bm_permutation
from abstat.stats.permutation_power import rejects, smoothed, statistic, statistic_and_sum


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on completely separated samples
@pytest.mark.parametrize("n1, n2", [(4, 4), (5, 9), (12, 7), (30, 30)])
def test_statistic_is_scipys_brunner_munzel(n1: int, n2: int) -> None:
    rng = np.random.default_rng(n1 * 100 + n2)
    xs, ys = rng.normal(0, 1, (20, n1)), rng.normal(0.5, 2, (20, n2))
    ours = np.abs(statistic(xs, ys))
    for row, (x, y) in enumerate(zip(xs, ys, strict=True)):
        expected = abs(stats.brunnermunzel(x, y).statistic)
        if math.isfinite(expected):
            assert ours[row] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n1, n2", [(3, 3), (4, 4), (5, 6), (8, 8), (6, 30), (20, 20), (50, 50)])
def test_rejects_as_compares_permutation_test_does(n1: int, n2: int) -> None:
    rng = np.random.default_rng(n1 + 7 * n2)
    for _ in range(25):
        x, y = rng.normal(0, 1, n1), rng.normal(rng.choice([0.0, 0.8, 1.6]), 1, n2)
        expected = bm_permutation(x, y, 0.05).p_value < 0.05
        t, u = statistic_and_sum(x[None], y[None])
        assert bool(rejects(t, n1, n2, 0.05, u)[0]) == expected


def test_three_per_side_can_never_reject_at_5_percent() -> None:
    # brute force: every split of 6 ranks into 3 + 3; the most extreme |T| is held by 2 of 20 (p = 0.1)
    ranks = np.arange(6.0)
    t = []
    for pick in combinations(range(6), 3):
        rest = [i for i in range(6) if i not in pick]
        t.append(abs(float(statistic(ranks[list(pick)][None], ranks[rest][None])[0])))
    t = np.array(t)
    assert np.min([np.mean(t >= v * (1 - 1e-9)) for v in t]) == pytest.approx(0.1)
    rng = np.random.default_rng(1)
    size = sizing(rng.normal(1000, 10, 40), rng.normal(1000, 10, 40))
    assert size.power(50.0, 3, 3, 0.05) == 0.0  # the large-sample model said near 1
    assert size.detectable(3, 3, 0.05, 0.8) is None
    advice = plan({"a": rng.normal(1000, 10, 40), "b": rng.normal(1000, 10, 40)}, detect=3.0)
    assert advice.samples_per_variant is not None and advice.samples_per_variant >= 4


def test_smoothed_bootstrap_keeps_the_pilots_mean_and_variance() -> None:
    pilot = np.log(np.random.default_rng(2).lognormal(0, 0.5, 30))
    draws = smoothed(pilot, 4000, 30, seed=0, stream=11)
    assert draws.mean() == pytest.approx(pilot.mean(), abs=0.01)
    assert draws.var() == pytest.approx(pilot.var(), rel=0.05)
    assert np.unique(draws).size == draws.size  # no ties: the untied reference applies


@pytest.mark.parametrize("shape", ["normal", "log-normal"])
@pytest.mark.parametrize("n", [5, 8])
def test_predicted_power_is_what_compare_achieves(shape: str, n: int) -> None:
    rng = np.random.default_rng(n)

    def draw(size: int, factor: float = 1.0) -> np.ndarray:
        if shape == "normal":
            return factor * rng.normal(1000, 10, size)
        return factor * (1000 + 30 * rng.lognormal(0, 1, size))

    size = sizing(draw(1000), draw(1000))
    pct = size.detectable(n, n, 0.05, 0.8)
    assert pct is not None
    reps = 300
    achieved = sum(bool(abstat.compare(draw(n), draw(n, 1 + pct / 100)).significant) for _ in range(reps)) / reps
    # the Monte Carlo error of the achieved rate is 2.3 points; the large-sample model missed by 20-35 points here
    assert achieved == pytest.approx(0.8, abs=0.09)


@pytest.mark.parametrize("shape", ["normal", "log-normal", "grid", "weighted", "walsh"])
def test_sorted_sums_kth_is_the_brute_force_order_statistic(shape: str) -> None:
    # the secant search of pairwise.SortedSums.kth (issue 42: fewer counts) must return the exact k-th entry
    from abstat.stats.pairwise import SortedSums

    rng = np.random.default_rng(len(shape))
    a = np.sort(rng.lognormal(0, 1, 900) if shape == "log-normal" else rng.normal(0, 1, 900))
    b = np.sort(rng.normal(0.3, 2, 1100))
    if shape == "grid":
        a, b = np.round(a * 4) / 4, np.round(b * 4) / 4
    wa = rng.integers(1, 4, a.size).astype(float) if shape == "weighted" else None
    if shape == "walsh":
        sums = SortedSums(a, a, walsh=True)
        entries = np.sort((a[:, None] + a[None, :])[np.triu_indices(a.size)])
        weights = None
    else:
        sums = SortedSums(a, b, wa)
        entries = (a[:, None] + b[None, :]).ravel()
        weights = np.repeat(wa, b.size) if wa is not None else None
        order = np.argsort(entries, kind="stable")
        entries = entries[order]
        weights = weights[order] if weights is not None else None
    running = np.cumsum(weights) if weights is not None else np.arange(1.0, entries.size + 1)
    for q in (0.0004, 0.1, 0.4991, 0.5, 0.5013, 0.93, 0.9999):
        k = math.floor(q * running[-1])
        expected = entries[np.searchsorted(running, k, side="right")]
        assert sums.kth(k) == expected
        assert sums.kth(k, (expected * 1.001 + 0.01, 0.001)) == expected  # a guess beside it
