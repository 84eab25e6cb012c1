"""Confirming on fresh, interleaved runs that a tested commit measures unlike both ends (library code, no I/O).

The search says that more than one change is in the range (status ``several``) when a tested commit's runs
measure unlike both ends' (:func:`abstat.history.bisect.levels.intermediate`).  Those runs were taken whenever
the search tested that commit, and the ends' mostly at other times: on a machine whose speed changes over
minutes (other work, a clock rate that follows the load) a commit measured in a slow spell looks unlike both
ends although it is one of them.  So before the claim is made, the commit and both ends are run again,
interleaved (good, commit, bad, then bad, commit, good, ...), so that a slow spell hits all three alike, and
looked at from ``FRESH_MIN_RUNS`` fresh runs each, ``FRESH_STEP`` more at a time, up to ``SIDE_MAX_RUNS``:

- **confirmed** when the fresh runs alone place the commit unlike both ends (Hodges-Lehmann intervals at
  ``SIDE_CONFIDENCE``, both excluding 0);
- **cleared** when the fresh runs place it like one end: its shift from that end's fresh runs has an
  ``EQUIVALENCE_CONFIDENCE`` interval inside a quarter of the ends' fresh shift either way (a commit half way
  between the ends is twice that far from each);
- at ``SIDE_MAX_RUNS`` fresh runs each, neither: confirmed if the fresh runs place the commit unlike both ends
  at ``FINAL_CONFIDENCE``, else cleared.  A commit truly between two changes that is cleared costs runs, not the
  answer: another commit between them can still be found unlike both ends and confirmed.

A cleared commit is not proposed again and the search goes on.  Dear runs (boots) are not re-run: at their
2-4 runs no interval at these levels exists, so there the claim rests on all runs as before.  Measured in
docs/history.md ("Several changes, or a slow spell").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.history.bisect import levels
from abstat.history.bisect.outcome import Batch

FRESH_MIN_RUNS = 8  # fresh runs of the commit and of each end before the first look (an interval at 99% from
# fewer than 5 a side does not exist; 8 lets a commit many spreads from one end be cleared at once)
FRESH_STEP = 4  # fresh runs of each added between looks
FINAL_CONFIDENCE = 0.95  # at the last look the fresh runs must place the commit unlike both ends at this level, or
# it is cleared (looks from 8 to 32 fresh runs, 2% noise, ends 4% apart, 400 draws: a commit half way confirmed in
# 93.2%, 79.5% with 5% of runs 10-30% slow; one like the bad end in 4.5%, 5.2%; docs/history.md)
EQUIVALENCE_CONFIDENCE = 0.9  # two one-sided tests at 5%: the commit measures like an end
EQUIVALENCE_SHARE = 0.25  # of the ends' fresh shift: the margin within which the commit is like an end


def confirm(search: Any, commit: int) -> Batch | bool:
    """For ``search`` (a :class:`abstat.history.bisect.search.Search`) about to say that ``commit`` measures unlike
    both ends: the next batch of fresh runs, or whether the claim stands (False: the commit is cleared)."""
    start = search.several_from.setdefault(commit, search.batches)
    good, values, bad = (search.fresh_values(c, start) for c in (0, commit, search.n))
    have = min(len(good), len(values), len(bad))
    if have >= FRESH_MIN_RUNS:
        verdict = judge(good, values, bad)
        if verdict is not None:
            return verdict
        if have >= levels.SIDE_MAX_RUNS:
            return judge(good, values, bad, FINAL_CONFIDENCE) is True
    rounds = FRESH_MIN_RUNS - have if have < FRESH_MIN_RUNS else FRESH_STEP
    order = [(0, commit, search.n), (search.n, commit, 0)]
    return Batch([c for r in range(rounds) for c in order[(have + r) % 2]], commit)


def judge(
    good: Sequence[float], values: Sequence[float], bad: Sequence[float], confidence: float = levels.SIDE_CONFIDENCE
) -> bool | None:
    """True: ``values`` measure unlike both ends (intervals at ``confidence``); False: like one of them; None: not
    yet known."""
    _, low_good, high_good = levels.shift(good, values, confidence)
    _, low_bad, high_bad = levels.shift(values, bad, confidence)
    if not low_good <= 0 <= high_good and not low_bad <= 0 <= high_bad:
        return True
    ends, _, _ = levels.shift(good, bad, 0.5)
    margin = abs(ends) * EQUIVALENCE_SHARE
    for x, y in ((good, values), (values, bad)):
        _, low, high = levels.shift(x, y, EQUIVALENCE_CONFIDENCE)
        if -margin < low and high < margin:
            return False
    return None
