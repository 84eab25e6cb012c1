"""What ``abstat bisect`` says agrees with its numbers (attack20 A5): out of budget with a leading commit at
probability 1.000 it said "no commit reached probability 0.95"; a change compare cannot judge (both ends
constant) was labelled "with its 95% confidence interval" and printed none."""

from __future__ import annotations

import re

from abstat.history.bisect.driver import Report
from abstat.history.bisect.render import render
from abstat.history.bisect.segments import Bisection, simulate


def _noiseless(budget: int):
    """A step 100 -> 200 at commit 16 of 29, no noise (attack20's bisect_budget.sh)."""
    search = Bisection(29, budget=budget)
    outcome = simulate(search, lambda commit: 200.0 if commit >= 16 else 100.0)
    return outcome, render(
        Report(outcome, [f"{i:040x}" for i in range(30)], {}, experiment="x", confidence=0.95), "text"
    )


def test_out_of_budget_with_a_commit_past_the_probability_says_so():
    outcome, text = _noiseless(30)
    assert outcome.status == "inconclusive", text
    leading = max(p for _, p in outcome.candidates)
    assert leading >= 0.95  # the case: its probability is reached
    assert "no commit reached probability" not in text, text
    assert re.search(r"inconclusive: the budget ran out before [0-9a-f]{12} \(probability 1\.000", text), text


def test_a_change_without_an_interval_promises_none():
    outcome, text = _noiseless(100)
    assert outcome.status == "found" and outcome.culprit == 16, text
    assert outcome.change.ci_pct is None  # both ends constant: compare cannot judge
    (line,) = [line for line in text.splitlines() if "change " in line]
    assert "confidence interval" not in line and "no interval: cannot judge" in line, line
