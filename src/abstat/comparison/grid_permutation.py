"""The power of ``compare``'s permutation test on values on a few grid levels, by simulation.

Up to :data:`abstat.stats.hodges_lehmann.PERMUTE_MAX` values on a side
``compare`` refers Brunner-Munzel's ``T`` to its permutation distribution.
On a grid that distribution is discrete: ``T`` depends only on how many of
the smaller variant's values sit on each level, so the arrangements fall on
few values of ``T``, and the test (which counted the observed one's whole
atom as extreme until wave 10; half of it since) rejects less often than the Student-t reference of
:class:`abstat.comparison.grid_sizing.GridModel` promises: on 3 levels of a
20-tick grid at 40 values a side, 66.5% power where the t model promised
81% (Brunner-Munzel with the t reference: 76%; 1000 draws, issue 34).

This model draws data sets from the grid model itself (each value's level
from the baseline's shares and from the shares after the latent change,
common uniforms for every change, so the power is monotone in it) and
judges each by the exact permutation p-value: the smaller variant's counts
per level ``a`` among the pooled counts ``c`` have the multivariate
hypergeometric law ``prod C(c_k, a_k) / C(N, m)``; the p-value is the
weight of the configurations whose ``|T|`` exceeds the observed one plus half
the weight of those equal to it (``compare``'s mid-p-value on tied data,
wave 10; ``compare`` computes the same law, by its tables, when there are more than 20,000
arrangements but at most 20,000 tables: :mod:`abstat.stats.permutation_tables`; its interval's
reference too, the samples aligned at the estimate, since issue 34's session 13).  The laws
of a power's data sets are enumerated together, a batch of pooled count vectors at a time,
level by level, carrying only the running sums ``T`` needs (:class:`_Law`); each data set's p-value is kept
(on a 6-level pilot of 12 runs ``abstat noise`` took 35 s of CPU enumerating
one pooled vector at a time; ``benchmarks/grid_power_speed.py``).
A data set whose pooled counts allow more than :data:`MAX_CONFIGS`
configurations (many levels: nearly continuous) takes the Student-t
reference instead.  At :data:`abstat.stats.permutation_power.JOIN_MAX` values
or fewer on a side a call also needs Yuen's trimmed t on the logarithms, as
in ``compare``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SIMULATIONS = 2000  # data sets per power (Monte Carlo error 0.9 points at 80%)
MAX_CONFIGS = 20_000  # configurations of a pooled count vector enumerated at most
CHUNK = 30_000  # configurations enumerated at once (arrays that stay in the caches: 2.5x faster than 10^6)


def p_value_rule(beyond: Any, atom: Any, counts: np.ndarray) -> Any:
    """``compare``'s permutation p-value from the permutation law of ``|T|``: ``beyond`` is the
    probability of a ``|T|`` above the observed one, ``atom`` that of one equal to it (to 1e-9 of it),
    ``counts`` the pooled counts per level.  On tied data (a level holds two values or more) half the
    atom counts, the mid-p-value :func:`abstat.stats.permutation.bm_permutation` takes
    (``_half_at``); on untied data all of it.  The one place this model states the rule."""
    return beyond + (0.5 if int(np.max(counts)) > 1 else 1.0) * atom


def count_configurations(counts: np.ndarray, m: int) -> int:
    """How many vectors ``a`` with ``0 <= a_k <= counts_k`` and ``sum(a) = m`` there are (the coefficient
    of ``t^m`` in ``prod (1 + ... + t^c_k)``)."""
    return int(round(float(_count_rows(np.asarray(counts, dtype=np.int64)[None, :], m)[0])))


def _count_rows(counts: np.ndarray, m: int) -> np.ndarray:
    """:func:`count_configurations` of each row of ``counts`` (floats: large counts only compare)."""
    ways = np.zeros((counts.shape[0], m + 1))
    ways[:, 0] = 1.0
    columns = np.arange(m + 1)[None, :]
    for k in range(counts.shape[1]):
        cumulative = np.cumsum(ways, axis=1)
        back = columns - counts[:, k : k + 1] - 1  # ways[j] = sum of ways[j - cap .. j]
        ways = cumulative - np.where(back >= 0, np.take_along_axis(cumulative, np.maximum(back, 0), axis=1), 0.0)
    return ways[:, m]


def _statistic_from(u: Any, sp: Any, sq: Any, m: int, n: int) -> Any:
    """Brunner-Munzel's ``|T|`` from ``u = sum_k a_k g_k`` (``g_k``: the pooled values below level ``k`` plus
    half its own), ``sp = sum_k a_k (g_k - s_k)^2`` and ``sq = sum_k b_k s_k^2`` (``s_k``: the smaller variant's
    values below level ``k`` plus half its own; ``g_k - s_k`` is a level's placement among the other variant,
    ``s_k`` the other's placement among it).  Every term is a multiple of 1/4, so the sums, and the variances'
    numerators, are exact whatever their order: the observed data set's ``T`` equals its configuration's."""
    u = np.asarray(u, dtype=float) - m * m / 2.0  # pairs (smaller variant above the other), ties halved
    other = m * float(n) - u
    p_hat = u / (m * float(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        var_g = (m * np.asarray(sp, dtype=float) - u * u) / (m * (m - 1.0))
        var_h = (n * np.asarray(sq, dtype=float) - other * other) / (n * (n - 1.0))
        se = np.sqrt(var_g / (m * float(n) * n) + var_h / (n * float(m) * m))
        t = np.atleast_1d(np.abs(p_hat - 0.5) / se)
    zero = np.atleast_1d(se == 0.0)
    t[zero] = np.where(np.atleast_1d(p_hat)[zero] == 0.5, 0.0, np.inf)
    return t


def statistic(a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Brunner-Munzel's ``|T|`` for the smaller variant's counts ``a`` (rows) per level among the pooled
    ``counts`` (one vector for every row, or one row each; mid-ranks for ties, as
    :func:`abstat.stats.permutation.statistics`)."""
    a = np.asarray(a, dtype=float)
    counts = np.broadcast_to(np.asarray(counts, dtype=float), a.shape)
    m, n = int(a[0].sum()), int(counts[0].sum() - a[0].sum())
    g = np.cumsum(counts, axis=1) - counts / 2.0
    s = np.cumsum(a, axis=1) - a / 2.0
    return _statistic_from(
        (a * g).sum(axis=1), (a * (g - s) ** 2).sum(axis=1), ((counts - a) * s * s).sum(axis=1), m, n
    )


class _Law:
    """The permutation law of ``|T|`` for a batch of pooled count vectors (rows of ``counts``), all with the
    smaller variant's size ``m``: every configuration ``a`` (``0 <= a_k <= c_k``, ``sum(a) = m``) enumerated level
    by level, carrying only the running sums :func:`_statistic_from` needs and ``log prod C(c_k, a_k)``; the
    multivariate hypergeometric probabilities ``prod C(c_k, a_k) / C(N, m)`` (Vandermonde: they sum to 1)."""

    def __init__(self, counts: np.ndarray, m: int) -> None:
        total = int(counts[0].sum())
        log_factorial = np.array([math.lgamma(k + 1.0) for k in range(total + 1)])
        g = np.cumsum(counts, axis=1) - counts / 2.0
        # each row's populated levels first, in their order (empty levels add nothing to T or the weight)
        order = np.argsort(counts == 0, axis=1, kind="stable")
        counts, g = np.take_along_axis(counts, order, axis=1), np.take_along_axis(g, order, axis=1)
        after = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1] - counts  # capacity above each level
        key = np.arange(counts.shape[0])
        below = np.zeros(key.size, dtype=np.int64)  # the smaller variant's values placed so far
        u, sp, sq, logw = (np.zeros(key.size) for _ in range(4))
        for k in range(int(np.max(np.count_nonzero(counts, axis=1)))):
            cap, gk = counts[key, k], g[key, k]
            lo = np.maximum(0, m - below - after[key, k])
            width = np.minimum(cap, m - below) - lo + 1
            a = lo
            if np.any(width > 1):  # else every row's count here is forced: no new rows
                parent = np.repeat(np.arange(key.size), width)
                a = lo[parent] + np.arange(parent.size) - np.repeat(np.cumsum(width) - width, width)
                key, below, cap, gk = key[parent], below[parent], cap[parent], gk[parent]
                u, sp, sq, logw = u[parent], sp[parent], sq[parent], logw[parent]
            s = below + a / 2.0
            u += a * gk
            sp += a * (gk - s) ** 2
            sq += (cap - a) * s * s
            logw += log_factorial[cap] - log_factorial[a] - log_factorial[cap - a]
            below = below + a
        self.key = key  # rows of one pooled vector are contiguous, in the order of ``counts``
        self.t = _statistic_from(u, sp, sq, m, total - m)
        self.w = np.exp(logw - (log_factorial[total] - log_factorial[m] - log_factorial[total - m]))
        self.start = np.searchsorted(key, np.arange(counts.shape[0] + 1))

    def tail(self, row: int, observed: float) -> tuple[float, float]:
        """(probability of ``|T|`` above ``observed``, probability of ``|T|`` equal to it) for row ``row``."""
        t, w = self.t[self.start[row] : self.start[row + 1]], self.w[self.start[row] : self.start[row + 1]]
        beyond = float(w[t > observed * (1.0 + 1e-9)].sum())
        return beyond, float(w[t >= observed * (1.0 - 1e-9)].sum()) - beyond


class GridPermutationPower:
    """Power of the exact permutation Brunner-Munzel test on data drawn from a grid model's shares."""

    def __init__(self, model: Any, seed: int = 0, simulations: int = SIMULATIONS) -> None:
        self.model = model
        self.seed, self.simulations = seed, simulations
        self._uniforms: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._p_values: dict[bytes, float] = {}

    def _draws(self, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
        from abstat.stats.permutation import uniforms

        key = (n1, n2)
        if key not in self._uniforms:
            if len(self._uniforms) > 64:
                self._uniforms.clear()
            self._uniforms[key] = (
                uniforms(self.seed, self.simulations * n1, 21).reshape(self.simulations, n1),
                uniforms(self.seed, self.simulations * n2, 23).reshape(self.simulations, n2),
            )
        return self._uniforms[key]

    def p_value(self, ax: np.ndarray, ay: np.ndarray) -> float:
        """The permutation p-value of one data set (counts per level of each variant)."""
        return float(self.p_values(np.concatenate((ax, ay))[None, :], len(ax))[0])

    def p_values(self, rows: np.ndarray, size: int) -> np.ndarray:
        """The permutation p-values of data sets (rows: the counts per level of the baseline, then of the
        candidate, ``size`` levels each), every row's from the exact law of its pooled counts, or from the
        Student-t reference when they allow more than :data:`MAX_CONFIGS` configurations (nearly continuous)."""
        from abstat.stats.distributions import stdtr

        out = np.array([self._p_values.get(row.tobytes(), np.nan) for row in rows])
        todo = np.flatnonzero(np.isnan(out))
        if todo.size:
            if len(self._p_values) > 200_000:
                self._p_values.clear()
            x, y = rows[todo, :size], rows[todo, size:]
            m1, m2 = int(x[0].sum()), int(y[0].sum())
            small = x if m1 <= m2 else y
            pooled = x + y
            counted = _count_rows(pooled, min(m1, m2))
            exact = counted <= MAX_CONFIGS
            for i in np.flatnonzero(~exact):
                keep = pooled[i] > 0
                observed = float(statistic(small[i][keep][None, :], pooled[i][keep])[0])
                out[todo[i]] = _t_p_value(small[i][keep], pooled[i][keep], observed, stdtr)
            self._exact(out, todo[exact], small[exact], pooled[exact], counted[exact])
            for i in todo:
                self._p_values[rows[i].tobytes()] = float(out[i])
        return out

    def _exact(self, out: np.ndarray, where: np.ndarray, small: np.ndarray, pooled: np.ndarray, counted: Any) -> None:
        """Fill ``out[where]`` with the exact permutation p-values, the laws enumerated a chunk of pooled
        vectors at a time (each distinct pooled vector once)."""
        if not where.size:
            return
        vectors, which = np.unique(pooled, axis=0, return_inverse=True)
        which = np.ravel(which)
        sizes = np.zeros(vectors.shape[0])
        sizes[which] = counted
        observed = statistic(small, pooled)
        first = 0
        while first < vectors.shape[0]:
            last = first + max(1, int(np.searchsorted(np.cumsum(sizes[first:]), CHUNK, side="right")))
            law = _Law(vectors[first:last], int(small[0].sum()))
            for i in np.flatnonzero((which >= first) & (which < last)):
                beyond, atom = law.tail(int(which[i]) - first, float(observed[i]))
                out[where[i]] = min(1.0, p_value_rule(beyond, atom, pooled[i]))
            first = last

    def power(self, factor: float, n1: int, n2: int, alpha: float) -> float:
        """The share of simulated data sets (``n1`` baseline values with the
        baseline's level shares, ``n2`` with the shares after a latent change
        by ``factor``) that ``compare``'s test calls different at ``alpha``."""
        from abstat.stats.permutation_power import JOIN_MAX, trimmed_rejects

        ux, uy = self._draws(n1, n2)
        levels = self.model.levels
        size = levels.size
        ix = np.minimum(np.searchsorted(np.cumsum(self.model.shares), ux), size - 1)
        iy = np.minimum(np.searchsorted(np.cumsum(self.model.shares_at(factor)), uy), size - 1)
        rows = np.arange(self.simulations)[:, None]
        cx = np.bincount((ix + rows * size).ravel(), minlength=self.simulations * size).reshape(-1, size)
        cy = np.bincount((iy + rows * size).ravel(), minlength=self.simulations * size).reshape(-1, size)
        unique, inverse = np.unique(np.concatenate((cx, cy), axis=1), axis=0, return_inverse=True)
        called = self.p_values(unique, size)[np.ravel(inverse)] < alpha  # data sets repeat on few levels
        if min(n1, n2) <= JOIN_MAX:
            called &= trimmed_rejects(np.log(levels[ix]), np.log(levels[iy]), alpha)
        return float(np.mean(called))


def _t_p_value(a: np.ndarray, counts: np.ndarray, observed: float, stdtr: Any) -> float:
    """Brunner-Munzel's two-sided p-value with the Student-t reference, Welch-Satterthwaite degrees of freedom."""
    b = counts - a
    m, n = int(a.sum()), int(b.sum())
    p_place = np.cumsum(b) - b + b / 2.0
    q_place = np.cumsum(a) - a + a / 2.0
    var_g = float((a * (p_place - (a * p_place).sum() / m) ** 2).sum()) / (m - 1)
    var_h = float((b * (q_place - (b * q_place).sum() / n) ** 2).sum()) / (n - 1)
    u1, u2 = var_g / (m * float(n) * n), var_h / (n * float(m) * m)
    if not u1 + u2 > 0:
        return 1.0 if observed == 0.0 else 0.0
    df = (u1 + u2) ** 2 / (u1 * u1 / (m - 1) + u2 * u2 / (n - 1))
    return min(1.0, 2.0 * stdtr(df, -observed))


def factor_for(model: Any, pct: float) -> float:
    """The latent factor whose true change of the Hodges-Lehmann ratio (the model's table) is ``pct``."""
    d = math.log1p(pct / 100.0)
    rows = model.table[+1 if d >= 0 else -1]
    deltas = np.array([abs(r[0]) for r in rows])
    reach = math.log(model.levels[-1] / model.levels[0]) / 2.0
    logs = np.array([reach * i / (len(rows) - 1) for i in range(len(rows))])
    return math.exp((1 if d >= 0 else -1) * float(np.interp(abs(d), deltas, logs)))
