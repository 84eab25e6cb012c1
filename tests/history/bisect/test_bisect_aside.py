"""One slow boot among a dear search's ends (issue 34, wave 21): it no longer sizes the commits' and the ends' boots
(:mod:`abstat.history.bisect.aside`).  Against a brute-force reading of the rule, scipy's quantiles for the sizing,
and the boots of tests/lab/testbox/test_testbox_bisect.py's history with a host's slow mode in the search's own
simulation."""

from __future__ import annotations

import math
import statistics

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student

from abstat.history.bisect import aside, levels
from abstat.history.bisect.outcome import Batch, Outcome
from abstat.history.bisect.segments import Bisection


def brute_force(good: list[float], bad: list[float]) -> tuple[list[float], list[float]]:
    """The rule read literally, one boot at a time (plain Python)."""
    if max(len(good), len(bad)) < 3 or not (max(good) < min(bad) or max(bad) < min(good)):
        return good, bad
    best = None  # (distance, end, index): the first of the farthest, good's boots first
    for end, boots in enumerate((good, bad)):
        if len(boots) < 3:
            continue
        middle = statistics.median(boots)
        for i, x in enumerate(boots):
            if best is None or abs(x - middle) > best[0]:
                best = (abs(x - middle), end, i)
    assert best is not None
    rest = [[x for i, x in enumerate(boots) if (end, i) != best[1:]] for end, boots in enumerate((good, bad))]
    squares = sum((x - statistics.fmean(boots)) ** 2 for boots in rest for x in boots)
    spread = math.sqrt(squares / (len(good) + len(bad) - 3))
    return (rest[0], rest[1]) if best[0] > aside.OUTLYING * spread else (good, bad)


def test_set_aside_is_the_rule_read_literally():
    rng = np.random.default_rng(21)
    kept = dropped = 0
    for _ in range(400):
        n_good, n_bad = (int(k) for k in rng.integers(2, 7, 2))
        good = list(rng.normal(0.0, 0.03, n_good))
        bad = list(rng.normal(rng.choice([0.05, 3.0]), 0.03, n_bad))
        if rng.random() < 0.5:  # a slow boot of a random end, by a random factor
            end = good if rng.random() < 0.5 else bad
            end[int(rng.integers(len(end)))] += float(rng.uniform(0.1, 0.7))
        got = aside.set_aside(np.asarray(good), np.asarray(bad))
        want = brute_force(good, bad)
        assert [list(x) for x in got] == [list(x) for x in want]
        dropped += len(want[0]) + len(want[1]) < n_good + n_bad
        kept += len(want[0]) + len(want[1]) == n_good + n_bad
    assert dropped > 50 and kept > 50  # both branches were exercised


def fewest_boots(good: list[float], bad: list[float]) -> int:
    """levels._few_runs_needed's sizing from its formula with scipy (logarithms, the ends' shift by medians)."""
    g, b = np.log(good), np.log(bad)
    half = abs(float(np.median(b) - np.median(g))) / 2
    df = g.size + b.size - 2
    from scipy.stats import chi2

    spread = math.sqrt((np.sum((g - g.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / chi2.ppf(0.5, df))
    n_end = min(g.size, b.size)
    for n in range(2, 30):
        bound = student.ppf(0.995, n + n_end - 2) + norm.ppf(0.975)
        if half / (spread * math.sqrt(1 / n + 1 / n_end)) >= bound:
            return n
    return 30


def test_one_slow_boot_of_an_end_does_not_size_a_commits_boots():
    """The good end (pti=off, 1,120 TSC cycles) with one boot 1.6 times slower, the bad end 22 times higher (2 boots),
    3% noise: a commit needs the boots it needs without that boot (2), not the 4 the slow boot's spread asked (then
    twice as many of each end, 8)."""
    good, bad = [1120.0, 1150.0, 1800.0], [25000.0, 25500.0]
    assert fewest_boots(good, bad) == 4  # the slow boot counted
    assert fewest_boots(good[:2], bad) == 2  # without it
    assert levels.runs_needed(good, bad, levels.DEAR_MIN_RUNS) == 2
    assert levels.ends_target(good, bad, levels.DEAR_MIN_RUNS) == 2
    # two boots of a slow mode are no outlier of one: the spread counts them (as the formula on all boots)
    good = [1120.0, 1800.0, 1810.0, 1150.0]
    assert levels.runs_needed(good, bad, levels.DEAR_MIN_RUNS) == min(levels.SIDE_MIN_RUNS, fewest_boots(good, bad)) > 2


def anatomy(seed: int, slow: float) -> tuple[str, int | None, int]:
    """The test-box history (pti=off 1,120 cycles, pti=on 25,000 from commit 1, commit 2 does not boot), 3% log-normal
    noise, a pti=off boot slowed 1.3 to 1.9 times with probability ``slow`` (boot38d's anatomy.py)."""
    rng = np.random.default_rng([seed, 38])
    search = Bisection(4, budget=40, batch_max=8, dear=True)
    while not isinstance(step := search.plan(), Outcome):
        made = [c for i, c in enumerate(step.commits) if c != 2 or c not in step.commits[:i]]
        values: list[float | None] = []
        for c in made:
            factor = rng.uniform(1.3, 1.9) if c == 0 and rng.random() < slow else 1.0
            values.append(None if c == 2 else float((25000 if c >= 1 else 1120) * np.exp(0.03 * rng.normal()) * factor))
        search.record(Batch(made, step.test), values)
    return step.status, step.culprit, search.runs


def test_the_testbox_history_with_slow_pti_off_boots_takes_fewer_boots():
    """A quarter of the pti=off boots slow: the culprit in each of 30 seeded histories, 11 boots on average or fewer
    and 12 or fewer in 24 (before: 12.2 on average, 12 or fewer in 17 of 30)."""
    found = [anatomy(seed, 0.25) for seed in range(30)]
    assert all(status == "found" and culprit == 1 for status, culprit, _ in found), found
    spent = [runs for _, _, runs in found]
    assert np.mean(spent) <= 11 and sum(runs <= 12 for runs in spent) >= 24, spent
