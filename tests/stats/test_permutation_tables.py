"""The exact law of tables (``abstat.stats.permutation_tables``) that the permutation test takes on tied
data with more than 20,000 arrangements: checked against independent references, scipy's Brunner-Munzel
statistic and its multivariate hypergeometric law, and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
from scipy import stats

from abstat.stats import permutation as perm
from abstat.stats.permutation_tables import count_tables, tables


def _bm(g: np.ndarray, h: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return abs(float(stats.brunnermunzel(g, h).statistic))


def _grid_pair() -> tuple[np.ndarray, np.ndarray]:
    """10 against 10 log cycle counts on three levels of a 20-tick grid (6, 8 and 6 values pooled)."""
    x = np.log(np.array([420.0] * 4 + [440.0] * 4 + [460.0] * 2))
    y = np.log(np.array([420.0] * 2 + [440.0] * 4 + [460.0] * 4))
    return x, y


def test_the_tables_law_is_the_arrangements_law():
    # every arrangement of 7 against 8 small integers, statistic by scipy, against the weighted tables
    rng = np.random.default_rng(3)
    x, y = np.round(rng.normal(0.0, 1.0, 7)), np.round(rng.normal(0.7, 1.0, 8))
    z = np.sort(np.concatenate((x, y)))
    brute: dict[float, float] = {}
    for rows in itertools.combinations(range(z.size), 7):
        t = round(_bm(z[list(rows)], np.delete(z, rows)), 9)
        brute[t] = brute.get(t, 0.0) + 1.0 / math.comb(z.size, 7)
    pooled = perm.pooled_levels(x, y)
    positions, weights = tables(pooled.count, pooled.below, 7)
    law: dict[float, float] = {}
    for t, w in zip(np.abs(perm.statistics(pooled, positions)), weights, strict=True):
        law[round(float(t), 9)] = law.get(round(float(t), 9), 0.0) + float(w)
    assert brute.keys() == law.keys()
    for t, w in brute.items():
        assert math.isclose(law[t], w, rel_tol=1e-9, abs_tol=1e-15)


def test_the_tables_are_counted_as_brute_force_counts_them():
    for counts, m in (([6, 8, 6], 10), ([1, 3, 2, 5, 1], 6), ([2, 2], 4), ([5], 3), ([30, 40, 25, 3], 50)):
        brute = sum(1 for a in itertools.product(*(range(c + 1) for c in counts)) if sum(a) == m)
        assert count_tables(np.array(counts), m) == min(brute, 20_001)


def test_the_p_value_is_the_exact_mid_p_value_of_scipy_s_statistic():
    # 184,756 arrangements (more than the 20,000 enumerated): the test was drawn before issue 34, session 12
    x, y = _grid_pair()
    levels = np.unique(np.concatenate((x, y)))
    counts = np.array([np.count_nonzero(np.concatenate((x, y)) == v) for v in levels])
    observed = _bm(x, y)
    beyond = atom = 0.0
    for a in itertools.product(*(range(c + 1) for c in counts)):
        if sum(a) != 10:
            continue
        g = np.repeat(levels, a)
        h = np.repeat(levels, counts - np.array(a))
        t = _bm(g, h)
        w = float(stats.multivariate_hypergeom.pmf(a, counts, 10))
        beyond += w if t > observed * (1 + 1e-9) else 0.0
        atom += w if abs(t - observed) <= 1e-9 * observed else 0.0
    test = perm.bm_permutation(x, y, 0.05, seed=7)
    assert test.exact
    assert math.isclose(test.p_value, beyond + atom / 2.0, rel_tol=1e-9)
    assert math.isclose(test.statistic, observed, rel_tol=1e-9)


def test_untied_samples_keep_the_drawn_reference():
    rng = np.random.default_rng(4)
    x, y = rng.normal(0.0, 1.0, 10), rng.normal(0.5, 1.0, 10)
    test = perm.bm_permutation(x, y, 0.05)
    # (drawn, weighted to the rank sum's law since session 21: test_permutation_strata.py; not tables)
    assert not test.exact and test.weights is not None and test.reference.size == perm.draws_for(0.05)[1]
