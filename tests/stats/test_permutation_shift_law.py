"""The interval of the default comparison inverts the test with the test's own law (issue 34, session 13).

On tied data with more than 20,000 arrangements and at most 20,000 tables of counts per level,
``bm_permutation`` refers Brunner-Munzel's ``T`` to the exact multivariate hypergeometric law of the tables.
The interval tests each candidate shift ``d`` (one inside each gap between the sorted pairwise differences)
against the law the test takes for ``x`` against ``y - d``: its own pooled levels, its own tables.  The
references here are written out: the tables enumerated with ``itertools``, their statistic by
``scipy.stats.brunnermunzel``, their probabilities by ``scipy.stats.multivariate_hypergeom``, the test's
mid-p-value (floored at ``2 / C(N, m)``) compared with alpha; and ``bm_permutation``'s own law at the shifts
next to each end of the interval.  Before this session the interval took one drawn law, that of the samples
aligned at the estimate: on the random data sets of the last test, main's interval ends were not where the
test's law puts them in 134 of 240 data sets (``test_the_ends_are_where_the_test_s_own_law_changes_its_verdict``)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from abstat.stats import hodges_lehmann as hl
from abstat.stats.brunner_munzel import bm_statistic, spread_ties
from abstat.stats.hl_gaps import shift_critical
from abstat.stats.permutation import bm_permutation, interval_critical, law_critical
from abstat.stats.permutation_tables import mid_p

ALPHA = 0.05


def _grid(rng: np.random.Generator, n: int, change: float) -> np.ndarray:
    """Log cycle counts on a grid of 20 about 440 (latent sd 7), 2% of them interrupted (x1.3-1.8)."""
    v = rng.normal(440.0 * (1.0 + change), 7.0, n)
    hit = rng.random(n) < 0.02
    v[hit] *= rng.uniform(1.3, 1.8, int(hit.sum()))
    return np.log(20.0 * np.round(v / 20.0))


def _brute_law(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The exact law of the tables of ``x`` against ``y`` (None beyond 20,000 tables): every table
    enumerated, scipy's statistic, scipy's hypergeometric law; and the p-value's floor ``2 / C(N, m)``."""
    pooled = np.concatenate((x, y))
    levels, counts = np.unique(pooled, return_counts=True)
    m = min(x.size, y.size)
    rows = [a for a in itertools.product(*(range(c + 1) for c in counts)) if sum(a) == m]
    if len(rows) > 20_000:
        return None
    table = np.array(rows)
    g = np.array([np.repeat(levels, a) for a in table])
    h = np.array([np.repeat(levels, counts - a) for a in table])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = np.abs(stats.brunnermunzel(g, h, axis=1).statistic)
    t[np.isnan(t)] = 0.0  # (scipy's 0/0: every value on one level)
    return t, stats.multivariate_hypergeom.pmf(table, counts, m), 2.0 / math.comb(pooled.size, m)


def _p(law: tuple[np.ndarray, np.ndarray, float], observed: float) -> float:
    """The test's p-value of ``|T| = observed``: the mid-p-value, floored."""
    t, w, floor = law
    low, high = observed * (1 - 1e-9), observed * (1 + 1e-9)
    return max(float(w[t >= low].sum() - 0.5 * w[(t >= low) & (t <= high)].sum()), floor)


def _brute_p(x: np.ndarray, y: np.ndarray, observed: float) -> float:
    law = _brute_law(x, y)
    assert law is not None
    return _p(law, observed)


def _abs_t(sx, sy, d: float) -> float:
    s = bm_statistic(sx, sy, d, (1.0, 1.0))
    return abs(s.p_hat - 0.5) / s.se if s.se > 0 else (0.0 if s.p_hat == 0.5 else math.inf)


@pytest.mark.parametrize(("counts", "m"), [((6, 8, 6), 10), ((2, 5, 3, 4, 6, 1, 3), 12), ((9, 1, 10, 2, 8), 15)])
def test_the_critical_value_is_where_the_brute_force_mid_p_value_crosses_alpha(counts, m):
    levels = np.arange(len(counts), dtype=float)
    pooled = np.repeat(levels, counts)
    x, y = pooled[:m], pooled[m:]  # (any split: the law depends on the counts alone)
    c = law_critical(tuple(counts), m, ALPHA)
    law = _brute_law(x, y)
    assert law is not None
    atoms = {float(v) for v in law[0] if math.isfinite(v)}
    probes = sorted({v * f for v in atoms for f in (0.999, 1.0, 1.001)})
    for t in probes:
        p = _p(law, t)
        assert (t <= c) == (p >= ALPHA), (t, c, p)


def _cases(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n1, n2 = (int(v) for v in rng.integers(10, 21, 2))
        change = float(rng.choice([0.0, 0.01, 0.02, 0.03, -0.02]))
        out.append((_grid(rng, n1, 0.0), _grid(rng, n2, change)))
    return out


def _interval(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``_small``'s interval as ``hodges_lehmann`` searches it (before it is reconciled with the test at 0)."""
    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    fixed = interval_critical(x, y - hl._estimate(sx, sy), ALPHA)
    return hl._small(sx, sy, 1 - ALPHA, (1.0, 1.0), fixed, shift_critical(x, y, ALPHA, fixed))


def test_the_interval_is_the_brute_force_inversion_of_each_shift_s_law():
    # 10-12 values a side (more than 20,000 arrangements): every gap from the estimate out to the first
    # rejected one on each side, its shift's law written out
    compared = 0
    for long_x, long_y in _cases(12, 34):
        x, y = long_x[:12], long_y[:12]
        sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
        d = np.sort(np.subtract.outer(sy.values, sx.values).ravel())
        estimate = float(np.median(d))
        u = np.unique(d)
        points = np.concatenate(([u[0] - 1 - abs(u[0])], (u[:-1] + u[1:]) / 2, [u[-1] + 1 + abs(u[-1])]))
        centre = int(np.searchsorted(u, estimate, side="right"))

        def accepted(k: int, sx=sx, sy=sy, x=x, y=y, points=points) -> bool:
            return _brute_p(x, y - points[k], _abs_t(sx, sy, float(points[k]))) >= ALPHA

        lo = hi = centre
        while lo > 0 and accepted(lo - 1):
            lo -= 1
        while hi < points.size - 1 and accepted(hi + 1):
            hi += 1
        low = -math.inf if lo == 0 else float(u[lo - 1])
        high = math.inf if hi == points.size - 1 else float(u[hi])
        assert _interval(x, y) == (estimate, min(low, estimate), max(high, estimate))
        compared += math.isfinite(low) and math.isfinite(high)
    assert compared >= 8


def _law_p(x: np.ndarray, y: np.ndarray, sx, sy, d: float) -> float | None:
    """``bm_permutation``'s p-value for ``x`` against ``y - d``, its own law applied to the interval's
    statistic at ``d`` (None off the law of tables)."""
    test = bm_permutation(x, y - d, ALPHA)
    if test.weights is None:
        return None
    return max(
        mid_p(test.reference, test.weights, _abs_t(sx, sy, d)), 2.0 / math.comb(x.size + y.size, min(x.size, y.size))
    )


def test_the_ends_are_where_the_test_s_own_law_changes_its_verdict():
    # 240 tied data sets, 10-20 a side: just inside each finite end the test's law (bm_permutation's at that
    # shift) accepts, just outside it rejects; and the comparison's verdict, p-value and interval agree on 0
    checked = 0
    for x, y in _cases(240, 3434):
        sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
        _, low, high = _interval(x, y)
        u = np.unique(np.subtract.outer(sy.values, sx.values))
        for end, inward in ((low, 1), (high, -1)):
            if not math.isfinite(end) or end == hl._estimate(sx, sy):
                continue
            i = int(np.searchsorted(u, end))
            assert u[i] == end
            if not 0 < i < u.size - 1:
                continue
            inside, outside = (float(u[i]) + float(u[i + inward])) / 2, (float(u[i]) + float(u[i - inward])) / 2
            p_in, p_out = _law_p(x, y, sx, sy, inside), _law_p(x, y, sx, sy, outside)
            if p_in is None or p_out is None:
                continue
            assert p_in >= ALPHA > p_out, (end, p_in, p_out)
            checked += 1
        h = hl.hodges_lehmann(x, y, 1 - ALPHA)
        assert (h.p_value < ALPHA) == (not h.low <= 0.0 <= h.high)
        assert h.p_value == bm_permutation(x, y, ALPHA).p_value
    assert checked >= 300
