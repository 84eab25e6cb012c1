"""Where an order statistic of the pairwise differences lies, from histograms
of the two samples (the brackets that :mod:`abstat.stats.hodges_lehmann`
hands to the exact selection of :mod:`abstat.stats.pairwise`).

Both samples are binned on one grid of width ``h``; the convolution of the
two histograms (by FFT) counts the pairs whose bins are ``m`` apart, and a
pair ``m`` bins apart differs by ``m h`` give or take ``h`` (by a triangular
law when the values are spread evenly within their bins).  The resulting
distribution of the differences gives, for any rank, a value and how many
entries lie about it per unit of value.  A bracket from it is only a guess:
the selection counts at both of its ends and goes on from there, so a wrong
guess costs counts, never correctness.  Each count is one pass over the
rows (``O(n log n)``); a good bracket saves two to four of them per order
statistic.
"""
from __future__ import annotations

import math

import numpy as np

from abstat.stats.brunner_munzel import Spread
from abstat.stats.pairwise import SortedSums, _Bracket

BINS = 8192  # bins over the range of both samples (four times as many from 200,000 values)
TAIL = 0.001  # the share of each sample's values at either end outside the central range
WIDEN = 2.0  # the range: the central one and this many times its width on either side (beyond: clipped)


class Binned:
    """The approximate distribution of ``y_j - x_i`` over all pairs (weighted as the spread points)."""

    def __init__(self, x: Spread, y: Spread) -> None:
        bins = BINS if max(x.values.size, y.values.size) < 200_000 else 4 * BINS  # (finer: fewer counts)
        ends = (x.values[0], x.values[-1], y.values[0], y.values[-1])
        self.usable = bool(np.isfinite(ends).all())
        if not self.usable:
            return
        lo = min(_at(x, TAIL), _at(y, TAIL))
        hi = max(_at(x, 1.0 - TAIL), _at(y, 1.0 - TAIL))
        width = hi - lo  # the range: the central one widened, so that few values (if any) are clipped
        lo = max(lo - WIDEN * width, min(float(x.values[0]), float(y.values[0])))
        hi = min(hi + WIDEN * width, max(float(x.values[-1]), float(y.values[-1])))
        self.usable = hi > lo and math.isfinite(hi - lo)
        if not self.usable:
            return
        h = (hi - lo) / bins
        hx, hy = _histogram(x, lo, h, bins), _histogram(y, lo, h, bins)
        size = 1 << int(2 * bins - 1).bit_length()
        conv = np.fft.irfft(np.fft.rfft(hy, size) * np.fft.rfft(hx[::-1], size), size)[: 2 * bins - 1]
        np.maximum(conv, 0.0, out=conv)
        below = np.cumsum(conv) - conv / 2.0  # the weight below each bin difference's centre
        np.maximum.accumulate(below, out=below)
        self.centres = (np.arange(2 * bins - 1) - (bins - 1)) * h
        self.below = below * (float(x.n) * float(y.n) / below[-1] if below[-1] > 0 else 1.0)
        self.h = h

    def locate(self, k: float) -> tuple[float, float] | None:
        """The value about which ``k`` entries lie and the entries per unit of value there
        (None: no useful guess)."""
        if not self.usable:
            return None
        target = k + 0.5
        m = int(np.searchsorted(self.below, target))
        if not 0 < m < self.below.size:
            return None
        step = self.below[m] - self.below[m - 1]
        value = float(self.centres[m - 1]) + self.h * float((target - self.below[m - 1]) / step)
        lo, hi = max(m - 2, 0), min(m + 1, self.below.size - 1)
        density = float(self.below[hi] - self.below[lo]) / (float(self.centres[hi] - self.centres[lo]))
        return (value, density) if density > 0 and math.isfinite(value) else None


def _at(s: Spread, share: float) -> float:
    """The value at ``share`` of the sample's points (sorted)."""
    return float(s.values[min(s.values.size - 1, int(share * s.values.size))])


def _histogram(s: Spread, lo: float, h: float, bins: int) -> np.ndarray:
    """The weight of the (sorted) points in each bin; those beyond the range in its end bins."""
    edges = np.searchsorted(s.values, lo + h * np.arange(1, bins))  # points below each inner edge
    if s.weights is None:
        return np.diff(edges, prepend=0, append=s.values.size).astype(float)
    running = np.concatenate(([0.0], np.cumsum(s.weights)))
    return np.diff(running[edges], prepend=0.0, append=running[-1])


class GuidedDifferences(SortedSums):
    """The pairwise differences ``y_j - x_i`` (as :func:`abstat.stats.pairwise.differences`)
    whose order statistics start from :class:`Binned`: one count where the
    binned law puts the rank, a second beyond the rank by what that count
    missed by (and a margin), so that two counts usually bracket it closely."""

    def __init__(self, x: Spread, y: Spread, margin: float) -> None:
        super().__init__(-x.values[::-1], y.values, None if x.weights is None else x.weights[::-1], y.weights)
        self.binned = Binned(x, y)
        self.margin = margin  # entries beyond the rank the second count aims at

    def _start(self, k: float, near: tuple[float, float] | None, br: _Bracket) -> None:
        found = None if near is not None else self.binned.locate(k)
        if found is None:
            super()._start(k, near, br)
            return
        p, density = found
        margin, sides = self.margin, set()
        for _ in range(4):  # at most: each miss aims twice as far past the rank
            if not br.lo < p < br.hi:
                break
            rows = self.positions(p)
            count = self.weight_of(rows)
            sides.add(br.move(p, count, rows, k))
            if len(sides) == 2:  # counted on both sides of the rank
                break
            p += (k + 0.5 - count + (margin if count <= k else -margin)) / density
            margin *= 2.0
