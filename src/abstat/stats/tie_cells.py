"""How wide a tied level's cell may be (wave 19): the resolution both variants show.

Tied values are spread over their cells (:mod:`abstat.stats.hodges_lehmann`) because a value measured on a
grid stands for an interval of true values.  A variant's own levels cannot tell a grid from repeated exact
values: 15 x 900 and 25 x 1,400 look like a two-level grid of step 500, and spreading them over 500-wide
cells moved the Hodges-Lehmann ratio against a baseline measured to the cycle from the median ratio's +38.6%
to +24% (attack18 M4).  Both variants are measured by the same instrument, so the finer resolution either
shows is the grid's: a level is spread only when its cell is at most :data:`STEPS` of the smallest gap
between distinct values of either variant, on the analysis scale (logarithms: a step of 20 cycles is a
smaller gap at 1,120 than at 1,000, so "steps" are of the finest gap, where the values are largest); a
wider one is left as its values (the plain median of the ratios there).  On one grid (TSC cycles,
counts, clock ticks) a tied level whose gap to its nearest neighbour spans at most STEPS of the finest log
gap is spread as before: since the finest log gap is the grid step at the largest values, that is STEPS
grid steps at the largest values and fewer below them (grid 20 up to 1,120: 8 steps there, 7.3 at 1,000).

What is shown together is read at one resolution (wave 20): a variant's centre alone
(:func:`abstat.stats.hl_centre.centre`) at its own finest gap, the same as its comparison with itself; the
comparisons of one output that share a baseline (a report's row, ``compare A B C``) at the finest gap of
any of them when the baseline has ties (:func:`shown_together`), so that the baseline's centre is one
number in all of them.

STEPS was 4 in the first version of this rule; an independent review (wave 19, stat18) found that a rare
value between two levels 6 steps apart then switched both levels' spreading off (coverage of a spread
estimand 0.95 -> 0.87 at n 40, and a jump of several half-widths when that one value moved); 8 keeps those
shapes as before and still leaves M4's 500-wide cells (hundreds of steps of a baseline measured to the
cycle) unspread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

import numpy as np

from abstat.stats.brunner_munzel import Spread

STEPS = 8  # a tied level's cell (the gap to its nearest neighbouring level) may span this many of the finest gaps

_T = TypeVar("_T")
_FLOOR: ContextVar[float] = ContextVar("abstat_tie_floor", default=math.inf)  # the output's finest gap
_SEEN: ContextVar[list[tuple[float, np.ndarray]] | None] = ContextVar("abstat_tie_seen", default=None)  # tied bases


def _smallest_gap(sorted_values: np.ndarray) -> float:
    """The smallest gap between distinct values of an ascending sample (inf with fewer than two)."""
    gaps = np.diff(sorted_values)
    gaps = gaps[gaps > 0]
    return float(gaps.min()) if gaps.size else math.inf


def cell_limit(*sorted_samples: np.ndarray) -> float:
    """The widest half cell a tied level of any of the samples is spread over (``inf``: no limit), at the
    finest gap of any of them (and of the output they are shown in: :func:`shown_together`)."""
    step = min((_smallest_gap(s) for s in sorted_samples), default=math.inf)
    return STEPS * min(step, _FLOOR.get()) / 2.0


def seen(limit: float, baseline: Spread) -> None:
    """A comparison's limit and its baseline's points, noted for :func:`shown_together` when the baseline
    has tied values."""
    noted = _SEEN.get()
    if noted is not None and baseline.groups is not None:
        noted.append((limit, baseline.values))


def shown_together(compute: Callable[[], _T]) -> _T:
    """``compute()``, the comparisons of one output that share a baseline, with that baseline's ties read
    one way in all of them: when its comparisons spread it at different limits (a fine candidate and a
    coarse one against 15 x 900 and 25 x 1,400), they are computed again at the finest (each pair's own
    gaps and the others'), so that the baseline's centre and its cells are the same in every one.  Only
    then: when every comparison spread the baseline to the same points, once is enough."""
    token = _SEEN.set([])
    try:
        result = compute()
        noted = _SEEN.get() or []
    finally:
        _SEEN.reset(token)
    if all(np.array_equal(points, noted[0][1]) for _, points in noted[1:]):
        return result
    floor = _FLOOR.set(2.0 * min(limit for limit, _ in noted) / STEPS)
    try:
        return compute()
    finally:
        _FLOOR.reset(floor)


def spread_levels(sample: Spread) -> tuple[int, int]:
    """How many of a spread sample's levels are tied (two values or more), and how many of those were
    spread over a cell (the others keep their value: their cell is wider than the limit, or they are alone)."""
    if sample.groups is None or sample.counts is None:
        return 0, 0
    # where each group's points start: every group 0..k-1 has points, in order (searched: k keys, not a pass)
    starts = np.searchsorted(sample.groups, np.arange(sample.counts.size))
    wide = np.maximum.reduceat(sample.values, starts) > np.minimum.reduceat(sample.values, starts)
    tied = sample.counts > 1
    return int(tied.sum()), int((tied & wide).sum())
