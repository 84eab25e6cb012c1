"""The permutation reference's draws are capped whatever the level (attack22 A2): ``draws_for`` drew
``50 / alpha`` arrangements, and ``run --until-decided``'s early looks compare at levels of 1e-6..1e-10
(2-5 GB, "internal error: MemoryError"); ``abstat.compare(confidence=0.999999)`` had the same hole.  Now
at most :data:`~abstat.stats.permutation.DRAWS_MAX`, and at a level those draws cannot resolve (below
``1 / (B + 1)``) the p-value is at least ``1 / (B + 1)`` and the interval unbounded: no significance is
claimed that the draws do not resolve, and the verdict says why.  Memory is checked by tracemalloc (numpy
reports its arrays to it), not by timing."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import abstat
from abstat.comparison.sequential import SequentialDesign, smallest_level, smallest_p
from abstat.stats import permutation
from abstat.stats.permutation import DRAWS_MAX, bm_permutation, draws_for, interval_critical, unresolved
from abstat.stats.permutation_power import rejects


def test_draws_are_capped_and_unchanged_where_the_cap_is_not_reached():
    assert draws_for(0.05) == (1_000, 10_000) and draws_for(0.01) == (5_000, 10_000)
    assert draws_for(0.001) == (50_000, 50_000) and draws_for(0.0005) == (100_000, 100_000)
    for alpha in (1e-4, 1e-5, 1e-6, 1e-8, 1e-10, 1e-300):
        first, most = draws_for(alpha)
        assert first <= most <= DRAWS_MAX
    assert not unresolved(1.0 / DRAWS_MAX) and unresolved(1.0 / (DRAWS_MAX + 2.0))


def _peak(call):
    permutation._arrangements.cache_clear()
    permutation._untied_reference.cache_clear()
    permutation.untied_weighted.cache_clear()
    permutation._untied_critical.cache_clear()
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("confidence", [0.999999, 1 - 1e-7])
@pytest.mark.parametrize("ratio", [1.005, 2.0])
def test_compare_at_a_tiny_level_is_bounded_and_claims_nothing(confidence, ratio):
    rng = np.random.default_rng(3)
    a, b = 100 * np.exp(rng.normal(0, 0.01, 18)), 100 * ratio * np.exp(rng.normal(0, 0.01, 18))
    result, peak = _peak(lambda: abstat.compare(list(a), list(b), confidence=confidence))
    assert peak < 200 << 20, peak  # main's code: 2.1 GB at 1e-5, a MemoryError below
    assert not result.significant and result.verdict == "cannot judge"
    assert any("resolve no p-value below 1e-05" in w.template for w in result.warnings), result.warnings
    # where the draws resolve the level, a separated pair is still judged
    assert abstat.compare(list(a), list(a * 2), confidence=0.9999).significant


def test_a_drawn_reference_gives_no_p_value_below_its_resolution():
    rng = np.random.default_rng(4)
    x, y = rng.normal(0, 1, 18), rng.normal(9, 1, 18)  # separated: the weighted law's exact tail, 2 / C(36, 18)
    tied_x, tied_y = np.round(x, 1), np.round(y, 1)  # ties: the plain draws (and their extrapolated tail)
    for a, b in ((x, y), (tied_x, tied_y), (x[:5], np.concatenate((y, y + 1, y + 2)))):
        test, peak = _peak(lambda a=a, b=b: bm_permutation(a, b, 1e-7, seed=1))
        assert peak < 200 << 20 and not test.exact
        assert test.p_value >= 1.0 / (DRAWS_MAX + 1.0) > 1e-7
        assert interval_critical(a, b, 1e-7, seed=1) == math.inf
        assert bm_permutation(a, b, 0.05, seed=1).p_value < 1e-5  # at 5% the tail is still extrapolated
    t = np.array([50.0])
    assert not rejects(t, 18, 18, 1e-7, u=np.array([0.0])).any() and rejects(t, 18, 18, 1e-4, u=np.array([0.0])).all()


def test_the_sequential_design_skips_the_looks_the_draws_cannot_resolve():
    design = SequentialDesign(min_runs=12, max_runs=1000)
    assert design.level(12) < smallest_level(12, 12) == 1.0 / (DRAWS_MAX + 1.0) and smallest_p(12, 12) < 1e-6
    assert smallest_level(5, 5) == smallest_p(5, 5)  # enumerated: its own floor
    rng = np.random.default_rng(5)
    samples = {"old": list(100 * np.exp(rng.normal(0, 0.01, 12))), "new": list(300 * np.exp(rng.normal(0, 0.01, 12)))}
    state, peak = _peak(lambda: design.decide(samples, "old", 12))
    assert state.settled == {} and state.stop_reason is None and peak < 200 << 20
    samples = {k: v + v[:6] for k, v in samples.items()}
    assert design.level(18) < smallest_level(18, 18) and design.decide(samples, "old", 18).settled == {}
