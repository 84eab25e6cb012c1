"""Brunner-Munzel's verdict in every gap between the sorted pairwise differences at once, for the interval
walk of :func:`abstat.stats.hodges_lehmann._small` (unweighted samples); and :func:`outermost`, the end
:func:`~abstat.stats.hodges_lehmann._large` finds by bisection when its fixed point fails.

The walk tests one shift inside each gap from a start towards the interval's end until the verdict changes.
Testing one gap costs a pass over the larger sample, and a few values against tens of thousands (5 against
30,000: the whole range of differences accepted) made it cross ~10^5 gaps: minutes of CPU (attack17 #3).
Here the statistic is followed across the gaps instead: passing the difference ``y_j - x_i`` moves ``x_i``'s
placement up by one and ``y_j``'s down by one, so each sample's sum of squared (tie-group mean) placements
changes by a known amount; cumulative sums give both variances in every gap in O(N log N) for the ``N``
differences.  Those sums round differently from :func:`~abstat.stats.brunner_munzel.bm_statistic`'s, so a
gap is decided here only when its margin exceeds a bound on that rounding (1e-9 of the terms, a million times
the error of the sums); the others, and every reported end, are decided by the exact statistic, so the walk
finds the gap it found one gap at a time (``tests/stats/test_hl_walk_sweep.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from abstat.stats.brunner_munzel import Spread
from abstat.stats.distributions import ndtri, t_quantile

if TYPE_CHECKING:
    from abstat.stats.pairwise import SortedSums

SURE = 1e-9  # relative bound on the rounding of the swept variances (cumulative sums of N <= 2e5 terms)
FIRST = 64  # gaps decided per batch at first, doubling


def _prior(groups: np.ndarray) -> np.ndarray:
    """For each event (in order), how many earlier events fell on the same group."""
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    starts = np.flatnonzero(np.diff(g, prepend=-1))
    prior = np.empty(g.size, dtype=np.float64)
    prior[order] = np.arange(g.size) - np.repeat(starts, np.diff(np.append(starts, g.size)))
    return prior


def _groups(sample: Spread) -> tuple[np.ndarray, np.ndarray]:
    if sample.groups is None:
        return np.arange(sample.n), np.ones(sample.n)
    assert sample.counts is not None
    return sample.groups, sample.counts.astype(np.float64)


class Sweep:
    """Both samples' sums of squared group-mean placements in every gap ``k`` (``k = -1`` below every
    difference), from the differences sorted with their pairs."""

    def __init__(self, x: Spread, y: Spread, below: np.ndarray, inflate: tuple[float, float]) -> None:
        nx, ny = x.n, y.n
        order = np.argsort(np.subtract.outer(y.values, x.values).ravel(), kind="stable")
        (gx, cx), (gy, cy) = _groups(x), _groups(y)
        ex, ey = gx[order % nx], gy[order // nx]
        # x_i's group sum rises from 0 by one per difference passed; y_j's falls from nx per value
        dqx = (2.0 * _prior(ex) + 1.0) / cx[ex]
        dqy = (1.0 - 2.0 * (nx * cy[ey] - _prior(ey))) / cy[ey]
        self.qx = np.concatenate(([0.0], np.cumsum(dqx)))
        self.qy = np.concatenate(([0.0], np.cumsum(dqy))) + float(nx * nx * ny)
        self.below = np.concatenate(([0], below))  # differences at or below gap k's shift, at index k + 1
        self.n, self.inflate = (nx, ny), inflate

    def _variances(self, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(a, b, error of a + b, differences at or below)`` in the gaps ``ks``: ``a = nx vx``, ``b = ny vy``."""
        nx, ny = self.n
        c = self.below[ks + 1]
        cf = c.astype(np.float64)
        out, err = [], np.zeros(ks.size)
        for n, q, t, factor in ((nx, self.qx[c], cf, self.inflate[0]), (ny, self.qy[c], nx * ny - cf, self.inflate[1])):
            if n < 2:
                out.append(np.zeros(ks.size))
                continue
            square = t * t / n
            out.append(n * factor * np.maximum(q - square, 0.0) / (n - 1))
            err += n * factor * SURE * (q + square) / (n - 1)
        return out[0], out[1], err, cf

    def decide(self, ks: np.ndarray, level: float, fixed: float | None) -> np.ndarray:
        """1 where gap ``k``'s shift is surely accepted, 0 surely rejected, -1 too close to call here."""
        if fixed == math.inf:  # every shift accepted
            return np.ones(ks.size, dtype=np.int64)
        nx, ny = self.n
        big = nx * ny
        a, b, err, c = self._variances(ks)
        dev = np.abs((big - c) / big - 0.5)
        low, high = np.sqrt(np.maximum(a + b - err, 0.0)) / big, np.sqrt(a + b + err) / big
        if fixed is None:  # Welch-Satterthwaite's df lies between min(nx, ny) - 1 and infinity
            q_low, q_high = ndtri(level), t_quantile(float(max(1, min(nx, ny) - 1)), level)
        else:
            q_low = q_high = fixed
        sure = np.where(dev < q_low * low * (1.0 - SURE), 1, np.where(dev > q_high * high * (1.0 + SURE), 0, -1))
        if fixed is None:
            for i in np.flatnonzero(sure < 0):  # Student's t at this gap's df (the swept df: close)
                sure[i] = self._t_verdict(a[i], b[i], err[i], dev[i], level)
        return sure

    def _t_verdict(self, a: float, b: float, err: float, dev: float, level: float) -> int:
        nx, ny = self.n
        if a + b <= 1e3 * err:
            return -1
        denominator = (a * a / (nx - 1) if nx > 1 else 0.0) + (b * b / (ny - 1) if ny > 1 else 0.0)
        q = t_quantile((a + b) ** 2 / denominator, level) if denominator > 0 else ndtri(level)
        low, high = math.sqrt(a + b - err) / (nx * ny), math.sqrt(a + b + err) / (nx * ny)
        if dev < q * low * (1.0 - 1e-6):
            return 1
        return 0 if dev > q * high * (1.0 + 1e-6) else -1

    def first(
        self, span: tuple[int, int, int], target: bool, exact: Callable[[int], bool], test: tuple[float, float | None]
    ) -> int | None:
        """The first gap of ``range(*span)`` whose verdict is ``target`` (``exact`` decides those not sure
        here), or None."""
        start, stop, step = span
        size = FIRST
        while (stop - start) * step > 0:
            end = start + step * min(size, (stop - start) * step)
            ks = np.arange(start, end, step)
            verdicts = self.decide(ks, *test)
            for i in np.flatnonzero((verdicts == int(target)) | (verdicts < 0)):
                if verdicts[i] >= 0 or exact(int(ks[i])) == target:
                    return int(ks[i])
            start, size = end, 2 * size
        return None


def outermost(pairs: SortedSums, sign: int, accepted: Callable[[float], bool]) -> float:
    """The end (``sign`` -1 lower, 1 upper) when the fixed point of ``_large`` leaves the differences
    (``q se > 1/2`` at the last shift) or is not reached (a few values against many, every pair apart: the
    bound swings between the ends of the differences; 5 against 41,000 made every bound open, attack17 #3):
    open if the test accepts a shift beyond every difference, else the verdict's change between the
    outermost difference and the estimate, found by bisection on the rank (the end ``_small`` walks to)."""
    n = pairs.size
    outer, inner = (0.0, n / 2.0) if sign < 0 else (n - 1.0, n / 2.0)
    edge = pairs.kth(outer)
    if accepted(edge + sign * (1.0 + abs(edge))):
        return sign * math.inf
    if accepted(edge):
        return edge
    while abs(inner - outer) > 1.0:  # the outer rank rejected, the inner (the estimate's) accepted
        mid = math.floor((inner + outer) / 2.0)
        if accepted(pairs.kth(mid)):
            inner = mid
        else:
            outer = mid
    return pairs.kth(inner)
