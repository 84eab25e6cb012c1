"""abstat bisect's claim of several changes rests on fresh runs of the commit and of both ends, interleaved
(abstat.history.bisect.several): a commit measured in a slow spell of the machine is not called a second
level, and a true second level still is.  The looks' verdicts against intervals computed by brute force."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.history.bisect import levels, several
from abstat.history.bisect.search import Search
from abstat.history.bisect.segments import Bisection, simulate


def spelled(n: int, culprit: int, middle: float, rng: np.random.Generator) -> Search:
    """A search of ``n`` commits with a tenfold change at ``culprit``, whose ends ran in a quiet spell (good 1, bad
    10, 2% noise) and whose commit ``n - 2`` (bad) ran 12 times in a spell that made everything ``middle`` times
    slower: by all runs it measures unlike both ends."""
    search = Search(n, confidence=0.99)
    for batch, commit, level in [(0, 0, 1.0), (0, n, 10.0), (1, n - 2, 10.0 * middle)]:
        runs = 12 if commit == n - 2 else 20
        search.samples += [(commit, level * (1 + 0.02 * rng.normal()), batch) for _ in range(runs)]
    search.batches, search.attempts = 2, len(search.samples)
    assert culprit < n - 2 and levels.intermediate(search.values_of(n - 2), *search._references())
    return search


def measure_levels(steps: dict[int, float], rng: np.random.Generator):
    return lambda commit: (1.0 + sum(s for at, s in steps.items() if commit >= at)) * (1 + 0.02 * rng.normal())


def test_a_commit_measured_in_a_slow_spell_is_cleared_by_fresh_runs_and_the_culprit_found():
    found = 0
    for trial in range(6):
        rng = np.random.default_rng([7, trial])
        search = spelled(23, 9, 1.4, rng)
        outcome = simulate(search, measure_levels({9: 9.0}, rng))
        # the fresh runs of commit 21 measure like the bad end: cleared, or no longer unlike both ends by all runs
        assert outcome.status != "several" and 21 in search.several_from
        assert len(search.fresh_values(21, search.several_from[21])) >= several.FRESH_MIN_RUNS
        found += outcome.status == "found" and outcome.culprit == 9
    assert found == 6


def test_without_the_fresh_runs_the_slow_spell_was_called_a_second_change():
    # the same searches as a dear one (boots: no fresh runs), where the claim rests on all runs as before
    rng = np.random.default_rng([7, 0])
    search = spelled(23, 9, 1.4, rng)
    search.dear = True
    outcome = simulate(search, measure_levels({9: 9.0}, rng))
    assert outcome.status == "several" and outcome.intermediate == 21


def test_a_true_second_level_is_confirmed_on_fresh_interleaved_runs():
    named = 0
    for trial in range(4):
        rng = np.random.default_rng([8, trial])
        bisection = Bisection(32, confidence=0.95, budget=400, overrun=0.5)
        outcome = simulate(bisection, measure_levels({6: 0.04, 22: 0.04}, rng))
        assert outcome.status == "several", (trial, outcome.status, outcome.culprit)
        assert 6 <= outcome.intermediate < 22
        root = bisection.root
        start = root.several_from[outcome.intermediate]
        fresh = [root.fresh_values(c, start) for c in (0, outcome.intermediate, 32)]
        assert min(map(len, fresh)) >= several.FRESH_MIN_RUNS and several.judge(*fresh) is not False
        named += any(step.culprit in (6, 22) for step in outcome.steps)
    assert named >= 2


def test_the_fresh_batch_interleaves_the_commit_with_both_ends():
    search = spelled(23, 9, 1.4, np.random.default_rng(3))
    batch = several.confirm(search, 21)
    assert not isinstance(batch, bool) and batch.test == 21
    assert len(batch.commits) == 3 * several.FRESH_MIN_RUNS
    for i in range(0, len(batch.commits), 3):
        assert batch.commits[i + 1] == 21 and {batch.commits[i], batch.commits[i + 2]} == {0, 23}


def exact_interval(x, y, confidence):
    """The Hodges-Lehmann interval of y - x by brute force: every pairwise difference, and Mann-Whitney's exact
    null distribution counted by the recursion f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u)."""
    m, n = len(x), len(y)
    counts = {(0, 0): [1]}
    for i in range(m + 1):
        for j in range(n + 1):
            if i or j:
                size = i * j + 1
                row = [0] * size
                for u in range(size):
                    if i and u - j >= 0 and u - j < len(counts[(i - 1, j)]):
                        row[u] += counts[(i - 1, j)][u - j]
                    if j and u < len(counts[(i, j - 1)]):
                        row[u] += counts[(i, j - 1)][u]
                counts[(i, j)] = row
    cdf = np.cumsum(counts[(m, n)]) / sum(counts[(m, n)])
    c = max((k for k in range(1, m * n) if cdf[k - 1] <= (1 - confidence) / 2), default=0)
    differences = np.sort(np.subtract.outer(np.asarray(y), np.asarray(x)).ravel())
    if c == 0:
        return -np.inf, np.inf
    return differences[c - 1], differences[m * n - c]


@pytest.mark.parametrize(
    ("middle", "sd", "expected"),
    [(1.0, 0.02, False), (5.5, 0.02, True), (10.0, 0.02, False), (9.5, 0.1, False), (9.0, 0.2, None)],
)
def test_judge_on_fresh_runs_against_its_definition_by_brute_force(middle, sd, expected):
    rng = np.random.default_rng(11)
    good = list(1.0 * (1 + sd * rng.normal(size=12)))
    bad = list(10.0 * (1 + sd * rng.normal(size=12)))
    values = list(middle * (1 + sd * rng.normal(size=12)))
    assert several.judge(good, values, bad) is expected
    # the definition: unlike both ends at 99%, or like one within a quarter of the ends' distance at 90%
    ends = float(np.median(np.subtract.outer(np.asarray(bad), np.asarray(good))))
    sides = [(good, values), (values, bad)]
    unlike = all(not lo <= 0 <= hi for lo, hi in (exact_interval(x, y, 0.99) for x, y in sides))
    like = any(-ends / 4 < lo and hi < ends / 4 for lo, hi in (exact_interval(x, y, 0.9) for x, y in sides))
    assert expected is (True if unlike else False if like else None)
