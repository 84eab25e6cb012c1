"""Brunner-Munzel's statistic at many shifts at once, for the interval search of
:func:`abstat.stats.hodges_lehmann._small` (unweighted samples: the differences formed and sorted).

The search tests one shift inside each gap between the sorted distinct differences, walking gap by gap
towards the interval's end; :class:`Gaps` evaluates the gaps a longer walk reaches in batches (numpy over a
``shifts x values`` array) instead of one :func:`~abstat.stats.brunner_munzel.bm_statistic` call each
(inflated variances, as for serially correlated samples, can make the walk cross nearly every gap: ~190
statistics per search at 15 values a side in ``tests/stats/test_dependence.py``).
The results are that function's bit for bit: the placements are whole and half counts (exact in any
order), the per-row mean and sum of squares are numpy's pairwise sums over each contiguous row, as for
one sample, and the rest is the same scalar arithmetic (``tests/stats/test_hl_small_bits.py``).
"""

from __future__ import annotations

import math

import numpy as np

from abstat.stats.brunner_munzel import BMStat, Spread, bm_statistic

ONE_BY_ONE = 4  # the first gaps a walk in each direction reaches are evaluated one by one (most end there) ...
BATCH = 4  # ... then batches of this many gaps, each further batch twice the last, up to MOST_ROWS gaps
MOST_ROWS = 64  # (and ELEMENTS shift x value entries: beyond that a row costs more, out of cache)
ELEMENTS = 1 << 13


def _group_means(sample: Spread, placements: np.ndarray) -> np.ndarray:
    """``Spread.group_means`` for each row: sums of whole and half counts per tie group (exact), divided
    by the group's size."""
    if sample.groups is None:
        return placements
    assert sample.counts is not None
    starts = np.flatnonzero(np.diff(sample.groups, prepend=-1))
    return np.take(np.add.reduceat(placements, starts, axis=1) / sample.counts, sample.groups, axis=1)


def _variances(sample: Spread, placements: np.ndarray) -> list[float]:
    """``Spread.variance`` of each row's group means (divisor n - 1; 0 below two values)."""
    if sample.n < 2:
        return [0.0] * placements.shape[0]
    means = np.ascontiguousarray(_group_means(sample, placements))  # (rows contiguous: pairwise sums as 1-D)
    centred = means - means.mean(axis=1)[:, None]
    return (np.sum(centred * centred, axis=1) / (sample.n - 1)).tolist()


def statistics(x: Spread, y: Spread, shifts: np.ndarray, inflate: tuple[float, float]) -> list[BMStat]:
    """``bm_statistic(x, y, d, inflate)`` for each ``d`` of ``shifts`` (no weights), bit for bit."""
    xs, ys = x.values, y.values
    nx, ny, rows = x.n, y.n, shifts.size
    target = xs + shifts[:, None]
    left = np.searchsorted(ys, target, side="left")  # y_j < x_i + d
    right = np.searchsorted(ys, target, side="right")  # y_j <= x_i + d
    offsets = (np.arange(rows) * (ny + 1))[:, None]
    size = rows * (ny + 1)
    counts = np.bincount((left + offsets).ravel(), minlength=size) + np.bincount(
        (right + offsets).ravel(), minlength=size
    )
    placements_y = np.cumsum(counts.reshape(rows, ny + 1), axis=1)[:, :ny] * 0.5  # x_i + d < y_j, ties half
    totals = placements_y.sum(axis=1).tolist()
    out = []
    for total, vx, vy in zip(totals, _variances(x, (left + right) * 0.5), _variances(y, placements_y), strict=True):
        out.append(_stat(nx, ny, total, vx * inflate[0], vy * inflate[1]))
    return out


def _stat(nx: int, ny: int, total: float, vx: float, vy: float) -> BMStat:
    """The end of :func:`~abstat.stats.brunner_munzel.bm_statistic`, the same arithmetic."""
    p_hat = float(total) / (nx * ny)
    a, b = nx * vx, ny * vy
    se = math.sqrt(a + b) / (nx * ny)
    denominator = (a * a / (nx - 1) if nx > 1 else 0.0) + (b * b / (ny - 1) if ny > 1 else 0.0)
    df = (a + b) ** 2 / denominator if denominator > 0 else math.inf
    return BMStat(p_hat, se, df, vx / (ny * ny), vy / (nx * nx))


class Gaps:
    """The statistic at a shift inside each gap ``k`` between the sorted distinct differences ``u``
    (``k = -1`` below them all, ``m - 1`` above), kept once evaluated."""

    def __init__(self, x: Spread, y: Spread, u: np.ndarray, inflate: tuple[float, float]) -> None:
        self.x, self.y, self.u, self.inflate = x, y, u, inflate
        self.m = u.size
        self.memo: dict[int, BMStat] = {}
        self.batch, self.walked = BATCH, {-1: 0, 0: 0, 1: 0}  # gaps evaluated one by one per direction
        self.most = max(1, min(MOST_ROWS, ELEMENTS // (x.n + y.n)))

    def point(self, k: int) -> float:
        """A shift inside gap ``k``."""
        u = self.u
        if k < 0:
            return float(u[0]) - 1.0 - abs(float(u[0]))
        if k >= self.m - 1:
            return float(u[-1]) + 1.0 + abs(float(u[-1]))
        return (float(u[k]) + float(u[k + 1])) / 2.0

    def at(self, k: int, step: int = 0) -> BMStat:
        """The statistic in gap ``k``; if not yet known and a walk in the direction ``step`` has passed
        its first gaps, with it those of the next gaps in that direction, a batch twice the last one's."""
        if k in self.memo:
            return self.memo[k]
        if not step or self.walked[step] < ONE_BY_ONE:
            self.walked[step] += 1
            self.memo[k] = bm_statistic(self.x, self.y, self.point(k), self.inflate)
            return self.memo[k]
        end = self.m - 1 if step > 0 else -1
        ks = [j for j in range(k, k + step * min(self.batch, abs(end - k) + 1), step) if j not in self.memo]
        self.batch = min(2 * self.batch, self.most)
        shifts = np.array([self.point(j) for j in ks])
        self.memo.update(zip(ks, statistics(self.x, self.y, shifts, self.inflate), strict=True))
        return self.memo[k]
