"""``--center mean`` withholds its verdict when the smaller variant cannot hold the larger's far tail
(attack19 F5): grid-20 cycle counts with 3% interrupts, 10 runs against 500 of the same population, gave
Welch's t 58% false calls; scipy's Welch test on the same draws is the reference that shows the problem."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

import abstat
from abstat.comparison.mean_tails import far_share


def _draw(rng: np.random.Generator, n: int, share: float = 0.03) -> np.ndarray:
    x = np.round(rng.normal(1000.0, 15.0, n) / 20.0) * 20.0
    hit = rng.random(n) < share
    x[hit] *= rng.uniform(1.3, 2.0, int(hit.sum()))
    return x


def test_ten_against_five_hundred_with_interrupts_stay_within_the_error_rate() -> None:
    rng = np.random.default_rng(20261206)
    ours = welch = 0
    draws = 200
    for _ in range(draws):
        base, cand = _draw(rng, 500), _draw(rng, 10)
        ours += bool(abstat.compare(base, cand, center="mean").significant)
        welch += bool(stats.ttest_ind(base, cand, equal_var=False).pvalue < 0.05)
    assert welch / draws > 0.3  # the draws do break Welch's t
    assert ours / draws <= 0.06


def test_the_withheld_verdict_keeps_the_means_and_says_why() -> None:
    rng = np.random.default_rng(5)
    base, cand = _draw(rng, 500), _draw(rng, 10)
    result = abstat.compare(base, cand, center="mean")
    assert not result.significant
    assert math.isnan(result.p_value) and result.ci_pct is None
    assert result.verdict == "cannot judge"
    assert any("cannot represent that tail" in w.message for w in result.warnings)
    assert list(result.centers) == [float(base.mean()), float(cand.mean())]


def test_without_a_far_tail_the_means_are_judged() -> None:
    rng = np.random.default_rng(11)
    base, cand = rng.normal(1000.0, 30.0, 500), rng.normal(1050.0, 30.0, 10)
    assert far_share(base) == 0.0
    result = abstat.compare(base, cand, center="mean")
    assert result.significant and 3.0 < result.delta_pct < 7.0


def test_equal_sizes_are_judged_as_before() -> None:
    rng = np.random.default_rng(3)
    base, cand = _draw(rng, 40), _draw(rng, 40) * 1.2
    assert abstat.compare(base, cand, center="mean").significant


def test_plain_skew_is_still_judged() -> None:
    """rev19: at 3 interquartile ranges the rule withheld 85% of log-normal (sigma 0.3) 30-against-500
    comparisons, where Welch's t is fine; at 5 it judges nearly all."""
    rng = np.random.default_rng(30)
    judged = sum(
        abstat.compare(1000 * rng.lognormal(0, 0.3, 500), 1000 * rng.lognormal(0, 0.3, 30), center="mean").verdict
        != "cannot judge"
        for _ in range(100)
    )
    assert judged >= 85


def _larger_side_rule(x: np.ndarray, y: np.ndarray) -> bool:
    """Wave 20's rule, brute force: withheld when the larger (>= 2x) shows far values and the smaller is expected
    to hold fewer than 5 at the larger's own share."""
    small, large = (x, y) if x.size <= y.size else (y, x)
    share = far_share(large)
    return large.size >= 2 * small.size and share > 0 and share * small.size < 5


def test_which_draws_are_judged_depends_on_both_sides_pooled() -> None:
    """Moving far values from one side to the other (sizes kept) does not change whether the means are judged, as
    long as the larger side still shows one: the decision is the pooled sample's, so it cannot pick the draws where
    the larger side happens to hold more far values than usual (its mean high)."""
    rng = np.random.default_rng(8)
    moved = 0
    for _ in range(60):
        base, cand = _draw(rng, 500), _draw(rng, 150)
        far = np.abs(base - np.median(base)) > 200
        if far.sum() < 2:
            continue
        i, j = int(np.flatnonzero(far)[0]), int(np.argmin(np.abs(cand - np.median(cand))))
        base2, cand2 = base.copy(), cand.copy()
        base2[i], cand2[j] = cand[j], base[i]  # one far value from the larger side to the smaller
        judged = [
            abstat.compare(b, c, center="mean").verdict != "cannot judge" for b, c in ((base, cand), (base2, cand2))
        ]
        assert judged[0] == judged[1]
        moved += _larger_side_rule(base, cand) != _larger_side_rule(base2, cand2)
    assert moved > 0  # the larger side's own share did move with it


def test_the_verdicts_given_at_150_against_500_are_fewer_false_than_the_larger_sides_rule() -> None:
    """rev19: with the share measured on the larger variant, 150 v 500 (3% interrupts, one population) was judged
    when the 500 happened to hold more far values than usual: 10-13% of the verdicts given were false (wave 21's
    simulation, 6,000 draws: 11.2%); pooled, 6.2%.  Same draws, the old rule as the brute-force reference."""
    rng = np.random.default_rng(20261208)
    ours, old = [0, 0], [0, 0]
    for _ in range(600):
        base, cand = _draw(rng, 500), _draw(rng, 150)
        result = abstat.compare(base, cand, center="mean")
        if result.verdict != "cannot judge":
            ours[0] += 1
            ours[1] += bool(result.significant)
        if not _larger_side_rule(base, cand):
            old[0] += 1
            old[1] += bool(stats.ttest_ind(base, cand, equal_var=False).pvalue < 0.05)
    assert ours[0] >= 150 and old[0] >= 150, (ours, old)
    assert ours[1] / ours[0] < old[1] / old[0] - 0.02, (ours, old)
    assert ours[1] / ours[0] <= 0.09, ours


def test_a_smaller_variant_that_is_only_wider_is_judged() -> None:
    """mean34: read on the pooled values alone, 20 values at sd 5% against 100 at sd 1% put about 3% of the pooled
    values beyond 5 interquartile ranges and were withheld 91% of the time; the larger variant shows no far
    value, so the means are judged."""
    rng = np.random.default_rng(21)
    judged = sum(
        abstat.compare(rng.normal(1000.0, 10.0, 100), rng.normal(1000.0, 50.0, 20), center="mean").verdict
        != "cannot judge"
        for _ in range(40)
    )
    assert judged == 40
