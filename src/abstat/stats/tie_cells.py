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
counts, clock ticks) a tied level with a neighbour within a few grid steps is spread as before.

STEPS was 4 in the first version of this rule; an independent review (wave 19, stat18) found that a rare
value between two levels 6 steps apart then switched both levels' spreading off (coverage of a spread
estimand 0.95 -> 0.87 at n 40, and a jump of several half-widths when that one value moved); 8 keeps those
shapes as before and still leaves M4's 500-wide cells (hundreds of steps of a baseline measured to the
cycle) unspread.
"""

from __future__ import annotations

import math

import numpy as np

STEPS = 8  # a tied level's cell (the gap to its nearest neighbouring level) may span this many of the finest gaps


def _smallest_gap(sorted_values: np.ndarray) -> float:
    """The smallest gap between distinct values of an ascending sample (inf with fewer than two)."""
    gaps = np.diff(sorted_values)
    gaps = gaps[gaps > 0]
    return float(gaps.min()) if gaps.size else math.inf


def cell_limit(sorted_x: np.ndarray, sorted_y: np.ndarray) -> float:
    """The widest half cell a tied level of either variant is spread over (``inf``: no limit)."""
    step = min(_smallest_gap(sorted_x), _smallest_gap(sorted_y))
    return STEPS * step / 2.0
