"""abstat bisect's default budget: 400 runs, and up to half as many more only to finish confirming a culprit
(``Search``/``Bisection`` ``overrun``); a budget given is a hard limit.  The histories are those of
benchmarks/bisection.py --repos --simulate (32 commits, a 2% change in 2% noise, 5% of runs 10-30% slow), seeded:
the search is deterministic given its runs, so every assertion holds or fails the same way on every run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.history.bisect.search import OVERRUN
from abstat.history.bisect.segments import Bisection, simulate

COMMITS = 32


def outlier_history(seed: int, change: float = 0.02):
    """(the changed commit, measure(commit)): benchmarks/bisection_repos.py's "outliers" scenario, history ``seed``."""
    rng = np.random.default_rng([seed, 1])
    culprit = int(rng.choice(np.arange(1, COMMITS + 1), size=1, replace=False)[0])

    def measure(commit: int) -> float:
        value = 100_000 * (1 + (change if commit >= culprit else 0.0)) * (1 + 0.02 * rng.normal())
        if rng.random() < 0.05:
            value *= 1.10 + 0.2 * rng.random()
        return round(value)

    return culprit, measure


def test_a_confirmation_the_hard_budget_cuts_short_is_finished_in_the_overrun():
    """History 1012: at a hard 400 runs the budget ends while the culprit is confirmed (inconclusive, as before
    the overrun); with the default overrun the same search goes on and names the right commit."""
    culprit, measure = outlier_history(1012)
    hard = simulate(Bisection(COMMITS, budget=400), measure)
    assert hard.status == "inconclusive" and hard.culprit is None
    assert 400 <= hard.runs <= 400 + 2 * 24
    assert hard.candidates[0][0] == culprit  # it was confirming the right one
    culprit, measure = outlier_history(1012)  # the same runs again
    soft = simulate(Bisection(COMMITS, budget=400, overrun=OVERRUN), measure)
    assert soft.status == "found" and soft.culprit == culprit
    assert 400 < soft.runs <= math.ceil(400 * (1 + OVERRUN)) + 2 * 24
    assert soft.probability >= 0.95


@pytest.mark.parametrize("overrun", [0.0, OVERRUN])
def test_the_overrun_is_never_spent_on_anything_but_a_confirmation(overrun):
    """No change between the ends: the budget ends the search where it ended before (the gate never opens, no
    culprit is confirmed), the same runs and the same answer with or without the overrun."""
    _, measure = outlier_history(7, change=0.0)
    out = simulate(Bisection(COMMITS, budget=60, overrun=overrun), measure)
    _, measure = outlier_history(7, change=0.0)
    hard = simulate(Bisection(COMMITS, budget=60), measure)
    assert out.status == hard.status == "inconclusive"
    assert out.runs == hard.runs <= 60 + 4
    assert out.culprit is None


def test_bisect_gives_the_overrun_only_when_no_budget_is_given(tmp_path, monkeypatch):
    """``abstat bisect`` without --budget: 400 runs and the overrun; --budget N: N and none."""
    from abstat.cli.commands import bisect as command
    from abstat.history.bisect import driver

    seen = []

    class Stop(Exception):
        pass

    def capture(config, *args, **kwargs):
        seen.append((config.budget, config.overrun))
        raise Stop

    monkeypatch.setattr(driver, "run_bisect", capture)
    common = ["--good", "HEAD~1", "--bad", "HEAD", "--run", "true", "--metric", "x=x (\\d+)"]
    common += ["--store", str(tmp_path / "s.db"), "--no-progress"]
    for extra, expected in (([], (400, OVERRUN)), (["--budget", "400"], (400, 0.0)), (["--budget", "90"], (90, 0.0))):
        with pytest.raises(Stop):
            command.main(common + extra)
        assert seen[-1] == expected
