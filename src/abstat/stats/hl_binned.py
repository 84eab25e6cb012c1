"""Where an order statistic of the pairwise differences lies, from histograms
of the two samples (the brackets that :mod:`abstat.stats.hodges_lehmann`
hands to the exact selection of :mod:`abstat.stats.pairwise`).

The matrix ``a_i + b_j`` (the differences ``y_j - x_i`` with ``a = -x``;
the Walsh sums ``x_i + x_j, i <= j`` with ``a = b = x``) is binned: ``a``
and ``b`` on grids of one width ``h``; the convolution of the two histograms
(by FFT) counts the pairs whose bin numbers sum to ``m``, and such a pair's
entry lies within ``h`` of that sum's centre (by a triangular law when the
values are spread evenly within their bins).  For the Walsh sums the
ordered pairs count twice and the diagonal once.  The resulting
distribution of the differences gives, for any rank, a value and how many
entries lie about it per unit of value.  A bracket from it is only a guess:
the selection counts at both of its ends and goes on from there, so a wrong
guess costs counts, never correctness.  Each count is one pass over the
rows (``O(n log n)``); a good bracket saves two to four of them per order
statistic.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from abstat.stats.brunner_munzel import padded, sorted_search
from abstat.stats.pairwise import GATHER, SortedSums, _Bracket, _cumulative

BINS = 8192  # bins over each range from 20,000 points (a quarter below, a sixteenth below FEW; 4x from 200,000)
FEW = 5_000  # below this many points, a sixteenth of the bins (the pseudo-medians' 4096 quantiles)
TAIL = 0.001  # the share of the points at either end outside the central range
WIDEN = 2.0  # the range: the central one and this many times its width on either side (beyond: clipped)
WALK_ROWS = 2.0  # a count this many entries a row from the last one walks there (SortedSums.walk)
PLAIN = (FEW, 20_000)  # unweighted differences of this many points (the larger side): half the bins and
PLAIN_MARGIN = 0.005  # this share of the gather limit as the second count's margin, not 0.05 (wave 19: at 10^4
# a side the gather and the walk shrink more than the rarer third count costs; compare 8-15% faster)


class Binned:
    """The approximate law of the entries of a :class:`~abstat.stats.pairwise.SortedSums`."""

    def __init__(self, m: SortedSums, coarse: bool = False) -> None:
        size = max(m.a.size, m.b.size)  # finer bins for more points: counts cost more
        bins = BINS // 16 if size < FEW else BINS // 4 if size < 20_000 else BINS if size < 200_000 else 4 * BINS
        bins //= 2 if coarse else 1  # (coarse: half as many)
        same = m.a is m.b and m.wa is m.wb  # (the Walsh sums: one histogram, one transform)
        ranges = (_range(m.a),) * 2 if same else (_range(m.a), _range(m.b))
        self.usable = all(hi > lo and math.isfinite(hi - lo) for lo, hi in ranges)
        if not self.usable:
            return
        h = max(hi - lo for lo, hi in ranges) / bins
        ha = _histogram(m.a, m.cumulative_a, ranges[0][0], h, bins)  # (a's running weights: the matrix's own)
        hb = ha if same else _histogram(m.b, _cumulative(m.wb, m.b.size), ranges[1][0], h, bins)
        size_fft = 1 << int(2 * bins - 1).bit_length()
        fa = np.fft.rfft(ha, size_fft)
        conv = np.fft.irfft(fa * (fa if same else np.fft.rfft(hb, size_fft)), size_fft)[: 2 * bins - 1]
        if m.walsh:  # i <= j: the ordered pairs once, and the diagonal (bin 2i) once more, halved
            conv[::2] += ha
            conv /= 2.0
        np.maximum(conv, 0.0, out=conv)
        below = np.cumsum(conv) - conv / 2.0  # the weight below each bin sum's centre
        np.maximum.accumulate(below, out=below)
        self.centres = ranges[0][0] + ranges[1][0] + (np.arange(2 * bins - 1) + 1.0) * h
        self.below = below * (m.size / below[-1] if below[-1] > 0 else 1.0)
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


def _range(v: np.ndarray) -> tuple[float, float]:
    """The central range of the sorted points ``v``, widened (NaN when not finite)."""
    if not (math.isfinite(float(v[0])) and math.isfinite(float(v[-1]))):
        return math.nan, math.nan
    lo, hi = float(v[int(TAIL * v.size)]), float(v[min(v.size - 1, int((1.0 - TAIL) * v.size))])
    width = hi - lo  # widened so that few values (if any) are clipped into the end bins
    return max(lo - WIDEN * width, float(v[0])), min(hi + WIDEN * width, float(v[-1]))


def _histogram(v: np.ndarray, running: np.ndarray | None, lo: float, h: float, bins: int) -> np.ndarray:
    """The weight of the sorted points ``v`` in each bin; those beyond the range in its end bins (``running``:
    0 and the running sums of the points' weights, :func:`~abstat.stats.pairwise._cumulative`; None: 1 each)."""
    edges = np.empty(bins + 1, dtype=np.int64)  # points below each edge, the outer ones holding all
    edges[0], edges[-1] = 0, v.size
    edges[1:-1] = np.searchsorted(v, lo + h * np.arange(1, bins))  # (the inner edges)
    if running is None:
        return (edges[1:] - edges[:-1]).astype(float)
    at = running[edges]
    return at[1:] - at[:-1]


class Guided(SortedSums):
    """A :class:`~abstat.stats.pairwise.SortedSums` whose order statistics
    start from :class:`Binned`: one count where the binned law puts the rank,
    a second beyond the rank by what that count missed by (and a margin), so
    that two counts usually bracket it closely."""

    def __init__(
        self,
        a: np.ndarray,
        b: np.ndarray,
        wa: np.ndarray | None,
        wb: np.ndarray | None,
        walsh: bool,
        margin: float | None = None,
    ) -> None:
        super().__init__(a, b, wa, wb, walsh)
        plain = not walsh and wa is None and wb is None and PLAIN[0] <= max(a.size, b.size) < PLAIN[1]
        self.binned = Binned(self, coarse=plain)
        # entries beyond the rank the second count aims at: by default a twentieth of what is gathered at once
        limit = min(GATHER if wa is None and wb is None else GATHER // 10, max(8 * b.size, 4096))
        self.margin = (PLAIN_MARGIN if plain else 0.05) * limit if margin is None else margin
        self._bounds: np.ndarray | None = None  # the points a between -inf and inf (made at the first count)

    def positions(self, p: float, side: Literal["left", "right"] = "right") -> np.ndarray:
        """As :meth:`SortedSums.positions`, by :func:`~abstat.stats.brunner_munzel.sorted_search`."""
        if self._bounds is None:
            self._bounds = padded(self.a)
        found = sorted_search(self.a, p - self._rb, side, self._bounds)[::-1]
        return np.minimum(found, self._rows + 1) if self.walsh else found

    def _start(self, k: float, near: tuple[float, float] | None, br: _Bracket) -> None:
        found = None if near is not None else self.binned.locate(k)
        if found is None:
            super()._start(k, near, br)
            return
        p, density = found
        margin, sides, step = self.margin, set(), math.inf
        for _ in range(4):  # at most: each miss aims twice as far past the rank
            if not br.lo < p < br.hi:
                break
            # a few entries a row from the last count: walk from there (else a binary search per row)
            walk = abs(step) <= WALK_ROWS * self.b.size
            rows = self.walk(p, br.r_lo, br.r_hi, step > 0) if walk else self.positions(p)
            count = self.weight_of(rows)
            sides.add(br.move(p, count, rows, k))
            if len(sides) == 2:  # counted on both sides of the rank
                break
            step = k + 0.5 - count + (margin if count <= k else -margin)  # entries from this count to the next
            p += step / density
            margin *= 2.0


def guided_differences(
    x: np.ndarray,
    y: np.ndarray,
    wx: np.ndarray | None = None,
    wy: np.ndarray | None = None,
    margin: float | None = None,
) -> Guided:
    """The ``y_j - x_i`` of all pairs (``x``, ``y`` ascending), as :func:`abstat.stats.pairwise.differences`."""
    return Guided(-x[::-1], y, None if wx is None else wx[::-1], wy, False, margin)


def guided_walsh(x: np.ndarray, w: np.ndarray | None = None, margin: float | None = None) -> Guided:
    """The ``x_i + x_j, i <= j`` (``x`` ascending), as :func:`abstat.stats.pairwise.walsh_sums`."""
    return Guided(x, x, w, w, True, margin)
