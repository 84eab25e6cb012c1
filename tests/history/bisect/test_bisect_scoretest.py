"""bisect's density-scored permutation test (issue 34 item 5: bisect on a two-path benchmark): the
p-value against the exact permutation distribution enumerated by brute force, its level half way
between the ends on normal, two-path and outlier noise (seeded draws), and its power where trimmed
means have little."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from abstat.history.bisect import levels, scoretest


def test_the_p_value_is_the_permutation_distributions_checked_by_enumerating_every_split():
    """6 against 7 values: all 1716 splits enumerated; the Monte Carlo p-value (4000 seeded relabellings)
    within 4 of its standard errors of the exact one (and exactly the same every call)."""
    rng = np.random.default_rng(11)
    for shift in (0.0, 0.8, 1.6):
        sample, others = rng.normal(shift, 1, 6), rng.normal(0, 1, 7)
        scores = np.asarray(scoretest.scores(np.concatenate([sample, others])))
        scores = scores - scores.mean()
        observed = scores[:6].sum()
        sums = [scores[list(pick)].sum() for pick in itertools.combinations(range(13), 6)]
        exact = np.mean([s >= observed - 1e-9 * (1 + abs(observed)) for s in sums])
        p = scoretest.shift_p(sample, others)
        assert p == scoretest.shift_p(sample, others)
        assert abs(p - exact) <= 4 * np.sqrt(exact * (1 - exact) / scoretest.PERMUTATIONS) + 1 / scoretest.PERMUTATIONS
    assert scoretest.shift_p([1.0, 2.0, 3.0], [0.0] * 10) == 1.0  # too few to judge


def _draw(rng, level, n, shape):
    """2% noise around 1e5 (1 + 2% level); two paths: half the runs 10% slower; outliers: 5% 10-30% slower."""
    values = 1e5 * (1 + 0.02 * level) * (1 + 0.02 * rng.normal(size=n))
    if shape == "two-path":
        values = values * np.where(rng.random(n) < 0.5, 1.1, 1.0)
    if shape == "outliers":
        values = values * np.where(rng.random(n) < 0.05, 1.1 + 0.2 * rng.random(n), 1.0)
    return list(np.round(values))


@pytest.mark.parametrize("shape", ["normal", "two-path", "outliers"])
def test_a_commit_half_way_between_the_ends_passes_at_most_at_the_level(shape):
    """The null of the placement: a commit half way between the ends (between two equal changes), 30 runs,
    the ends 60 each.  400 seeded draws per shape: passes at NEARER_PVALUE in at most 0.025 + 3.5 standard
    errors (the counts are fixed by the seed)."""
    rng = np.random.default_rng([34, 11, len(shape)])
    passed = [
        levels.nearer_score_p(_draw(rng, 0.5, 30, shape), _draw(rng, 1, 60, shape), _draw(rng, 0, 60, shape))
        <= levels.NEARER_PVALUE
        for _ in range(400)
    ]
    alpha = levels.NEARER_PVALUE
    assert np.mean(passed) <= alpha + 3.5 * np.sqrt(alpha * (1 - alpha) / 400), np.mean(passed)


def test_on_a_two_path_benchmark_it_places_a_culprit_where_trimmed_means_cannot():
    """A commit at the bad end's level, 56 runs, the ends 80 each, half the runs 10% slower: the density's
    scores see the 2% within each path (40 seeded draws)."""
    rng = np.random.default_rng([34, 12])
    score, trimmed = [], []
    for _ in range(40):
        values, bad, good = _draw(rng, 1, 56, "two-path"), _draw(rng, 1, 80, "two-path"), _draw(rng, 0, 80, "two-path")
        score.append(levels.nearer_score_p(values, bad, good) <= levels.NEARER_PVALUE)
        trimmed.append(levels.nearer_p(values, bad, good) <= levels.NEARER_PVALUE)
    assert np.mean(score) >= 0.6 and np.mean(score) >= 2.5 * np.mean(trimmed), (np.mean(score), np.mean(trimmed))


def test_the_ends_of_a_two_path_benchmark_differ_by_the_scored_test_long_before_brunner_munzel():
    """The gate: 80 runs of each end, a 2% change, half the runs 10% slower: the scored test passes the gate
    (p <= 0.001) in 9 of 10 seeded draws where Brunner-Munzel passes in 4; with no change, never (40 draws)."""
    rng = np.random.default_rng([34, 13])
    scored = brunner = 0
    for _ in range(10):
        good, bad = _draw(rng, 0, 80, "two-path"), _draw(rng, 1, 80, "two-path")
        scored += scoretest.differ_p(good, bad) <= 0.001
        brunner += levels.ends_differ_p(good, bad) <= 0.001
    assert scored >= 9 and brunner <= 5, (scored, brunner)
    same = [scoretest.differ_p(_draw(rng, 0, 80, "two-path"), _draw(rng, 0, 80, "two-path")) for _ in range(40)]
    assert min(same) > 0.001


def test_the_scored_test_is_used_only_on_noise_with_humps_and_yuens_keeps_a_large_shift():
    """The choice is made from the ends' runs alone: one-path noise (normal, 5% outliers) keeps Yuen's test,
    two-path noise gets the smaller p-value of both, doubled.  A commit 20 noise SDs from the ends forms a
    hump of its own in the pooled density, so the scored test alone sees nothing there; Yuen's does."""
    rng = np.random.default_rng([34, 14])
    for shape, expected in (("normal", False), ("outliers", False), ("two-path", True)):
        chosen = [scoretest.multimodal(_draw(rng, 0, 80, shape), _draw(rng, 1, 80, shape)) for _ in range(10)]
        assert chosen == [expected] * 10, (shape, chosen)
    good, bad, values = list(rng.normal(100, 1, 10)), list(rng.normal(120, 1, 10)), list(rng.normal(120, 1, 4))
    assert levels.nearer_score_p(values, bad, good) > 0.1
    assert levels.nearer_best_p(values, bad, good) == levels.nearer_p(values, bad, good) <= 0.001
    values, bad, good = _draw(rng, 1, 56, "two-path"), _draw(rng, 1, 80, "two-path"), _draw(rng, 0, 80, "two-path")
    both = min(levels.nearer_p(values, bad, good), levels.nearer_score_p(values, bad, good))
    assert levels.nearer_best_p(values, bad, good) == pytest.approx(min(1.0, 2 * both))
