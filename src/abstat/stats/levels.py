"""Where each group of equal values of a sorted sample starts: the one pass over the sort that the
summaries' diagnostics (the ties warning, the grid step, the ranks) and the spreading of ties share."""

from __future__ import annotations

import numpy as np


def level_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each group of equal values of the sorted ``ordered`` starts (a NaN is a group of its own; [0]
    when empty, as ``np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])``)."""
    new = np.empty(max(ordered.size, 1), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new.nonzero()[0]
