"""The moments of Brunner-Munzel's ``T`` for arrangements of pooled samples (:mod:`abstat.stats.permutation`):
per row of sorted pooled positions of the smaller variant's values ``G``, the sum of their placements, their
variance and the sum of the other values' squared placements.  Three ways to the same bits: per tie level
(few levels), per ``G`` value (many levels: memory of the small side's size, issue 42's bounded-memory rule,
session 13), and from the positions alone when nothing is tied."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from abstat.stats.permutation import Pooled


def dense_moments(pooled: Pooled, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the sum of ``G``'s placements, their variance, the sum of ``H``'s squared placements."""
    rows, m = positions.shape
    levels = pooled.count.size
    cell = pooled.level[positions]  # each G value's level, then its (row, level) cell
    cell += (np.arange(rows) * levels)[:, None]
    a = np.bincount(cell.ravel(), minlength=rows * levels).reshape(rows, levels)
    twice_below = 2 * (np.cumsum(a, axis=1) - a)  # 2 A_k
    h = pooled.count - a
    twice_p = 2 * pooled.below[:-1] - twice_below + h  # 2 P_k
    sum_p = (a * twice_p).sum(axis=1) * 0.5
    deviation = (twice_p * 0.5 - (sum_p / m)[:, None]) ** 2  # per level; summed per G value below
    var_g = deviation.ravel()[cell].sum(axis=1) / (m - 1)
    q = twice_below + a  # 2 (A_k + a_k / 2): H's placements on level k, doubled
    return sum_p, var_g, (h * q * q).sum(axis=1) * 0.25


def sparse_moments(pooled: Pooled, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`dense_moments` from each row's ``m`` G values (memory O(rows m), not O(rows levels)): a G value's
    group of G values on its level gives ``A_k`` (the group's first index) and ``a_k`` (its size); H's
    squared placements are summed per group, for the group's own level and for the levels up to the next
    group's, where ``A`` is constant.  Every sum is of integers (or the same per-G-value terms in the same
    order as :func:`dense_moments`), so the results are its bits."""
    rows, m = positions.shape
    level = pooled.level[positions]  # non-decreasing along each row
    index = np.broadcast_to(np.arange(m), (rows, m))
    starts = np.ones((rows, m), dtype=bool)
    np.not_equal(level[:, 1:], level[:, :-1], out=starts[:, 1:])
    first = np.maximum.accumulate(np.where(starts, index, 0), axis=1)  # A_k of each G value's level
    ends = np.ones((rows, m), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    stop = np.minimum.accumulate(np.where(ends, index + 1, m)[:, ::-1], axis=1)[:, ::-1]
    a = stop - first  # a_k
    count = pooled.count[level]
    below = pooled.below[level]
    twice_p = 2 * below - 2 * first + (count - a)  # 2 P_k, per G value
    sum_p = twice_p.sum(axis=1) * 0.5
    var_g = ((twice_p * 0.5 - (sum_p / m)[:, None]) ** 2).sum(axis=1) / (m - 1)
    following = np.take_along_axis(pooled.below[level], np.minimum(stop, m - 1), axis=1)
    following[stop == m] = pooled.total  # the next group's level's first position (or the end)
    gap = following - below - count  # values strictly between this group's level and the next group's
    q = 2 * first + a
    per_group = (count - a) * q * q + 4 * (first + a) ** 2 * gap
    return sum_p, var_g, np.where(starts, per_group, 0).sum(axis=1) * 0.25


def untied_moments(positions: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`dense_moments` without ties: the ``i``-th ``G`` value has ``positions[i] - i`` of ``H`` below
    it, and the ``H`` values between it and the next ``G`` value ``i + 1`` of ``G`` below them."""
    m = positions.shape[1]
    rank = np.arange(m)
    p = positions - rank
    sum_p = p.sum(axis=1).astype(np.float64)
    var_g = ((p - (sum_p / m)[:, None]) ** 2).sum(axis=1) / (m - 1)
    gaps = np.diff(positions, axis=1, append=total) - 1
    return sum_p, var_g, (gaps * (rank + 1) ** 2).sum(axis=1).astype(np.float64)
