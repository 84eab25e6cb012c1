"""The exact permutation law of Brunner-Munzel's ``T`` on tied data, by tables of counts per level.

On tied data ``T`` depends only on how many of the smaller variant's values sit on each tie level
(its table ``a``, ``0 <= a_k <= c_k``, ``sum a = m``): every arrangement with that table gives the
same ``T``, and under exchangeability the table has the multivariate hypergeometric law
``prod C(c_k, a_k) / C(N, m)``.  On a grid the tables are few (grid 20, 2% interrupts, 10 values a
side: about 9 under no change, 16 at +2%, where there are 184,756 arrangements), so the law is
enumerated exactly, where :func:`abstat.stats.permutation.bm_permutation` drew 10,000 arrangements
before issue 34 (session 12).  The drawn p-value was not only noisy: the arrangements depend on the
sizes and the seed alone, so every data set of one pooled table shared one draw's error, and on three
levels the same few pooled tables recur; its first batch of 1,000 also stopped on the full count and
reported the mid-p-value from it.  The same law ``abstat.comparison.grid_permutation`` assumes for
``plan``'s power.  The p-value is kept at or above ``2 / C(N, m)``, the floor of the drawn test's tail
(:func:`abstat.stats.permutation_tail.beyond`): the mid-p-value of completely separated samples would halve
the two extreme tables' probability, below what the test reported before (Holm's far tail).
"""

from __future__ import annotations

import numpy as np

TABLES_MAX = 20_000  # enumerate at most this many tables (as many as the arrangements enumerated)


def count_tables(counts: np.ndarray, m: int, cap: int = TABLES_MAX) -> int:
    """How many tables ``a`` (``0 <= a_k <= counts_k``, ``sum a = m``) there are, or ``cap + 1`` when more."""
    ways = [1] + [0] * m
    for c in counts.tolist():
        running, out = 0, []
        for j in range(m + 1):  # ways'[j] = ways[j - c] + ... + ways[j]
            running += ways[j] - (ways[j - c - 1] if j - c - 1 >= 0 else 0)
            out.append(min(running, cap + 1))
        ways = out
        if ways[m] > cap:  # more levels only add tables (each may hold none)
            break
    return min(ways[m], cap + 1)


def tables(counts: np.ndarray, below: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Every table as the sorted pooled positions of one arrangement with it (rows, ascending: the
    smaller variant's values first on each level), and the tables' probabilities."""
    levels = counts.size
    rest = np.append(np.cumsum(counts[::-1])[::-1], 0)  # values on levels k and above
    rows = np.zeros((1, 0), dtype=np.int64)
    left = np.array([m], dtype=np.int64)
    for k in range(levels):
        lo = np.maximum(0, left - rest[k + 1])
        reps = np.minimum(counts[k], left) - lo + 1
        pick = np.repeat(np.arange(rows.shape[0]), reps)
        step = np.arange(pick.size) - np.repeat(np.cumsum(reps) - reps, reps)
        a = lo[pick] + step
        rows = np.column_stack((rows[pick], a))
        left = left[pick] - a
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, int(counts.sum()) + 1)))))
    total = int(counts.sum())
    log_w = (log_fact[counts][None, :] - log_fact[rows] - log_fact[counts[None, :] - rows]).sum(axis=1)
    log_w -= log_fact[total] - log_fact[m] - log_fact[total - m]
    level = np.repeat(np.tile(np.arange(levels), rows.shape[0]), rows.ravel()).reshape(rows.shape[0], m)
    start = np.cumsum(rows, axis=1) - rows
    positions = below[level] + np.arange(m)[None, :] - np.take_along_axis(start, level, axis=1)
    weights = np.exp(log_w)
    return positions, weights / weights.sum()


def mid_p(reference: np.ndarray, weights: np.ndarray, observed: float) -> float:
    """The mid-p-value: the weight of the tables whose ``|T|`` exceeds the observed one plus half of those
    equal to it (to 1e-9 of it), as :func:`abstat.stats.permutation.bm_permutation` counts drawn ones."""
    low, high = observed * (1.0 - 1e-9), observed * (1.0 + 1e-9)
    at_least = float(weights[reference >= low].sum())
    atom = float(weights[(reference >= low) & (reference <= high)].sum())
    return min(1.0, max(0.0, at_least - 0.5 * atom))


def critical(reference: np.ndarray, weights: np.ndarray, alpha: float) -> float:
    """The critical ``|T|`` at level ``alpha`` of the law of tables (``reference`` descending, ``weights``
    its tables' probabilities), by the rule of :meth:`abstat.stats.permutation.PermutationTest.critical`
    for enumerated arrangements: the ``|T|`` where the weight of the statistics at or above it first
    reaches ``alpha`` (inf when ``alpha`` is not positive).  As every arrangement of one table has the
    table's ``|T|``, this is that rule applied to every arrangement, without enumerating them."""
    if alpha <= 0.0:
        return float("inf")
    reached = np.flatnonzero(np.cumsum(weights) >= alpha * (1.0 - 1e-12))
    j = int(reached[0]) if reached.size else reference.size - 1
    return float(reference[j]) * (1.0 + 1e-9)
