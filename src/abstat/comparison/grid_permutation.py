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
wave 10; ``compare`` draws 10,000 arrangements when there are more than 20,000, an
estimate of this).  Each pooled count vector's reference is computed once.
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


def configurations(counts: np.ndarray, m: int) -> np.ndarray:
    """Every vector ``a`` with ``0 <= a_k <= counts_k`` and ``sum(a) = m`` (rows)."""
    rows = np.zeros((1, 0), dtype=np.int64)
    left = np.array([m], dtype=np.int64)
    capacity_after = np.concatenate((np.cumsum(counts[::-1])[::-1][1:], [0]))
    for k, cap in enumerate(counts):
        lo = np.maximum(0, left - capacity_after[k])
        hi = np.minimum(cap, left)
        width = np.maximum(hi - lo + 1, 0)
        parent = np.repeat(np.arange(rows.shape[0]), width)
        offset = np.arange(parent.size) - np.repeat(np.cumsum(width) - width, width)
        value = lo[parent] + offset
        rows = np.column_stack((rows[parent], value))
        left = left[parent] - value
    return rows


def count_configurations(counts: np.ndarray, m: int) -> int:
    """How many rows :func:`configurations` has (the coefficient of ``t^m`` in ``prod (1 + ... + t^c_k)``)."""
    ways = np.zeros(m + 1)
    ways[0] = 1.0
    for cap in counts:
        cumulative = np.cumsum(ways)
        shifted = np.concatenate((np.zeros(int(cap) + 1), cumulative[: max(m - int(cap), 0)]))[: m + 1]
        ways = cumulative - shifted
    return int(round(ways[m]))


def statistic(a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Brunner-Munzel's ``|T|`` for the smaller variant's counts ``a`` (rows) per level among the pooled
    ``counts`` (mid-ranks for ties, as :func:`abstat.stats.permutation.statistics`)."""
    b = counts[None, :] - a
    m, n = int(a[0].sum()), int(b[0].sum())
    p_place = np.cumsum(b, axis=1) - b + b / 2.0  # each level's G placement among H
    q_place = np.cumsum(a, axis=1) - a + a / 2.0
    sum_p = (a * p_place).sum(axis=1)
    var_g = (a * (p_place - (sum_p / m)[:, None]) ** 2).sum(axis=1) / (m - 1)
    mean_q = (b * q_place).sum(axis=1) / n
    var_h = (b * (q_place - mean_q[:, None]) ** 2).sum(axis=1) / (n - 1)
    p_hat = sum_p / (m * float(n))
    se = np.sqrt(var_g / (m * float(n) * n) + var_h / (n * float(m) * m))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(p_hat - 0.5) / se
    t[se == 0.0] = np.where(p_hat[se == 0.0] == 0.5, 0.0, np.inf)
    return t


def _log_weights(a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The log of ``prod C(c_k, a_k)`` per row (log factorials tabled, no scipy on this path)."""
    log_factorial = np.array([math.lgamma(k + 1.0) for k in range(int(counts.max()) + 1)])
    return (log_factorial[counts][None, :] - log_factorial[a] - log_factorial[counts[None, :] - a]).sum(axis=1)


class GridPermutationPower:
    """Power of the exact permutation Brunner-Munzel test on data drawn from a grid model's shares."""

    def __init__(self, model: Any, seed: int = 0, simulations: int = SIMULATIONS) -> None:
        self.model = model
        self.seed, self.simulations = seed, simulations
        self._uniforms: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._references: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray] | None] = {}
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

    def _reference(self, pooled: tuple[int, ...], m: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(descending ``|T|``, cumulative probability) of the permutation law of these pooled counts."""
        key = (*pooled, -m)
        if key not in self._references:
            counts = np.array(pooled, dtype=np.int64)
            if count_configurations(counts, m) > MAX_CONFIGS:
                self._references[key] = None
            else:
                a = configurations(counts, m)
                t = statistic(a, counts)
                logw = _log_weights(a, counts)
                w = np.exp(logw - logw.max())
                order = np.argsort(-t, kind="stable")
                self._references[key] = (t[order], np.cumsum(w[order]) / w.sum())
        return self._references[key]

    def _cached_p(self, row: np.ndarray, size: int) -> float:
        key = row.tobytes()
        if key not in self._p_values:
            if len(self._p_values) > 200_000:
                self._p_values.clear()
            self._p_values[key] = self._p_value(row[:size], row[size:])
        return self._p_values[key]

    def _p_value(self, ax: np.ndarray, ay: np.ndarray) -> float:
        """The permutation p-value of one data set (counts per level of each variant)."""
        from abstat.stats.distributions import stdtr

        small, other = (ax, ay) if ax.sum() <= ay.sum() else (ay, ax)
        keep = (small + other) > 0
        counts, a = (small + other)[keep], small[keep]
        m = int(a.sum())
        observed = float(statistic(a[None, :], counts)[0])
        reference = self._reference(tuple(int(c) for c in counts), m)
        if reference is None:  # too many configurations: nearly continuous, the t reference
            return _t_p_value(a, counts, observed, stdtr)
        t, cumulative = reference
        at_least = int(np.count_nonzero(t >= observed * (1.0 - 1e-9)))
        beyond = int(np.count_nonzero(t > observed * (1.0 + 1e-9)))
        p = float(cumulative[at_least - 1]) if at_least else 0.0
        if counts.max() > 1:  # tied data: compare's mid-p-value (half the observed atom's weight)
            p -= 0.5 * (p - (float(cumulative[beyond - 1]) if beyond else 0.0))
        return p

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
        both = np.concatenate((cx, cy), axis=1)
        unique, inverse = np.unique(both, axis=0, return_inverse=True)  # data sets repeat on few levels
        p = np.array([self._cached_p(row, size) for row in unique])
        called = p[np.ravel(inverse)] < alpha
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
