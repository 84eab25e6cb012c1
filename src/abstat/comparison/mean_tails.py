"""When the mean of a few values cannot stand for a variant whose other side shows a far tail.

Welch's t on means needs each mean close to normal.  With interrupts (a few per cent of the runs 1.3-2x
slower) a variant of 5-150 runs seldom holds one, so its mean and its standard deviation both miss the tail
that the other variant's hundreds of runs show: 5, 10 and 30 runs against 500 from one population gave
44%, 58% and 40% false calls (attack19 F5; benchmarks' draws: grid 20 with 3% interrupts).  The tail is
measured on both variants pooled as their share ``q`` of values beyond 5 interquartile ranges of the median
(the central 80% halved where the quartiles coincide, as on a grid); when there are such values, the sizes
differ 2x or more and the smaller is expected to hold fewer than ``MIN_EXPECTED`` of them (``q`` x its size),
the means give no verdict (when the larger variant shows far values itself).  The means it lets through are
judged by the permutation law of Welch's t (:mod:`abstat.stats.mean_permutation`, issue 34, mean34), whose
level holds given the pooled values, so a selection read on them cannot inflate the false calls.  Simulated
(``welch_tail.py`` in the session notes, 1,000 draws a cell, grid 20 with 1%, 3% and
10% interrupts, 5-500 against 500): false calls 0.5-5.9% with the rule against 5-58% without.
"""

from __future__ import annotations

from typing import Any

MIN_EXPECTED = 5.0  # far values the smaller variant should hold for its mean to carry the tail
MIN_RATIO = 2  # the sizes differ by at least this factor (equal sizes see the tail alike)
FAR = 5.0  # interquartile ranges from the median: far (3 withheld 85% of log-normal sigma 0.3 draws at 30 vs 500)


def far_share(values: Any) -> float:
    """The share of ``values`` beyond ``FAR`` interquartile ranges of their median (the central 80% halved when
    the quartiles coincide; any value off the median when that is 0 too)."""
    import numpy as np

    q10, q25, q50, q75, q90 = np.percentile(values, [10, 25, 50, 75, 90])
    spread = (q75 - q25) or (q90 - q10) / 2.0
    return float(np.mean(np.abs(values - q50) > FAR * spread))


def tail_shown(x: Any, y: Any) -> bool:
    """Whether the sizes differ ``MIN_RATIO``-fold or more and the larger variant shows far values: where the rule
    below applies, and where the means it lets through take the permutation reference (mean34: elsewhere, e.g.
    20 values at sd 5% against 100 at sd 1%, that reference was liberal, 12.7% false calls against Welch's 4.7%)."""
    small, large = (x, y) if x.size <= y.size else (y, x)
    return large.size >= MIN_RATIO * small.size and far_share(large) > 0.0


def unrepresented_tail(x: Any, y: Any) -> str:
    """Why the means of ``x`` and ``y`` cannot be judged ("" when they can): the pooled values show far values
    and the smaller variant is expected to hold fewer than ``MIN_EXPECTED`` of them.  The share is measured on
    both variants pooled (wave 21): measured on the larger alone, the verdicts given were those where it happened
    to hold more far values than usual, so its mean was high (150 v 500, 3% interrupts: 10-13% of the verdicts
    given were false; pooled 4-9%, 6.2% over 6,000 draws with Student's t).  The larger variant's own share must
    be above 0 first: read on the pooled values alone, a smaller variant that is only wider (20 at sd 5% against
    100 at sd 1%) put 3% of the pooled values beyond 5 ranges and was withheld 91% of the time (mean34's
    calibration).  With the permutation reference (mean34) that gate is the one part of the rule not read on
    the pooled values; it moved no draw of the simulations with interrupts."""
    import numpy as np

    if not tail_shown(x, y):
        return ""
    small = x if x.size <= y.size else y
    share = far_share(np.concatenate([x, y]))
    if share * small.size >= MIN_EXPECTED:
        return ""
    return (
        f"{share:.1%} of the {x.size + y.size} values of both variants lie far out (beyond {FAR:g} interquartile "
        f"ranges), so the {small.size} of the smaller are expected to hold {share * small.size:.2g} of them: "
        "its mean and spread cannot represent that tail, and Welch's t would call a difference that is not "
        "there (5-60% false calls in simulation); compare medians or the default, or measure more runs"
    )
