"""Issue 34 items 1-4 (and 36.17): the default comparison on the users' workflows.

References: scipy's ``brunnermunzel`` and ``permutation_test``, brute force in the test."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from abstat import compare
from abstat.stats import permutation


def _interrupts(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(1000, 10, n)
    hit = rng.random(n) < 0.03
    v[hit] *= rng.uniform(1.3, 1.8, hit.sum())
    return v


def _bm(a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return abs(stats.brunnermunzel(a, b).statistic)


@pytest.mark.parametrize("nx,ny,grid", [(5, 7, False), (6, 6, True), (3, 30, True), (12, 9, True), (5, 500, True)])
def test_the_statistic_of_every_arrangement_is_scipys_brunner_munzel(nx, ny, grid):
    rng = np.random.default_rng(nx * ny)
    x, y = rng.normal(0, 1, nx), rng.normal(0.5, 2, ny)
    if grid:
        x, y = np.round(2 * x), np.round(2 * y)
    pooled = permutation.pooled_levels(x, y)
    z = np.sort(np.concatenate((x, y)))
    rows = permutation.random_subsets(nx + ny, min(nx, ny), 40, seed=3)
    assert all(len(set(r)) == r.size for r in rows)
    ours = np.abs(permutation.statistics(pooled, rows))
    for row, t in zip(rows, ours, strict=True):
        inside = np.zeros(z.size, dtype=bool)
        inside[row] = True
        ref = _bm(z[inside], z[~inside])
        if math.isfinite(ref):
            assert t == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert permutation.bm_permutation(x, y, 0.05).statistic == pytest.approx(_bm(x, y), rel=1e-9)


@pytest.mark.parametrize("nx,ny", [(4, 6), (3, 30), (7, 5)])
def test_exact_p_value_is_scipys_permutation_test(nx, ny):
    rng = np.random.default_rng(nx + 10 * ny)
    x, y = rng.normal(0, 1, nx), rng.normal(1, 3, ny)
    ref = stats.permutation_test(
        (x, y), _bm, permutation_type="independent", n_resamples=np.inf, alternative="greater"
    ).pvalue
    test = permutation.bm_permutation(x, y, 0.05)
    assert test.exact and test.p_value == pytest.approx(ref, rel=1e-9)


def test_drawn_p_value_agrees_with_enumeration():
    # 9 vs 9: 48,620 arrangements, so drawn; the Monte Carlo error of 10^4 draws is about 0.003 at p 0.05
    rng = np.random.default_rng(5)
    x, y = rng.normal(0, 1, 9), rng.normal(1.0, 1, 9)
    test = permutation.bm_permutation(x, y, 0.05, seed=1)
    exact = np.abs(permutation.statistics(permutation.pooled_levels(x, y), permutation.all_subsets(18, 9)))
    truth = float(np.mean(exact >= test.statistic * (1 - 1e-9)))
    assert not test.exact and abs(test.p_value - truth) < 4 * math.sqrt(truth * (1 - truth) / 1e4) + 1e-4


def test_issue_reproducer_five_new_runs_against_500_stored_is_no_false_call():
    rng = np.random.default_rng(0)
    base, cand = _interrupts(rng, 500), _interrupts(rng, 5)
    c = compare(base, cand)  # was "-1.7% [-3.0, -0.3] faster" (Welch on logarithms)
    assert c.estimand == "hl_ratio" and not c.significant and c.ci_pct[0] < 0 < c.ci_pct[1]


@pytest.mark.parametrize("nx,ny", [(500, 5), (5, 500)])
def test_five_against_500_with_interrupts_calls_identical_populations_different_at_the_nominal_rate(nx, ny):
    rng = np.random.default_rng(nx)
    calls = sum(compare(_interrupts(rng, nx), _interrupts(rng, ny), seed=i).significant for i in range(150))
    assert calls <= 15  # 5%: 7.5 +- 2.7; the geometric means called 46.6-50.4%


def test_far_tail_p_values_are_not_liberal_at_ten_per_side():
    # Holm on 32 cells works at 0.05/32; the t reference gave P(p < 0.05/32) = 0.0061 at n = 10.
    rng = np.random.default_rng(11)
    p = np.array([compare(rng.normal(1000, 10, 10), rng.normal(1000, 10, 10), seed=i).p_value for i in range(800)])
    assert np.sum(p < 0.005) <= 11  # nominal 4 (sd 2)
    assert np.mean(p < 0.05) <= 0.075


def test_three_against_three_cannot_be_judged_and_says_why():
    c = compare([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert c.verdict == "cannot judge" and c.ci_pct is None
    assert any("0.1" in w.message and "permutation" in w.message for w in c.warnings if w.code == "cannot-judge")


def test_near_constant_samples_get_an_interval_with_a_significant_verdict():
    c = compare([440.0] * 11 + [460.0], [420.0] * 12)
    assert c.significant and c.ci_pct is not None and c.ci_pct[1] < 0
    # completely separated: the exact probability is 2 / C(24, 12) = 7.4e-7; a drawn p-value is never below it
    assert 2 / math.comb(24, 12) <= c.p_value < 0.001


def test_a_million_equal_values_per_side_finish():
    same = compare(np.full(10**6, 440.0), np.full(10**6, 440.0))
    assert same.verdict == "cannot judge" and same.delta_pct == 0.0 and same.ci_pct is None
    other = compare(np.full(10**6, 440.0), np.full(10**6, 420.0))
    assert other.verdict == "cannot judge" and other.delta_pct == pytest.approx(-100 * 20 / 440)


def test_a_sorted_file_is_not_read_as_serial_correlation():
    # Issue 34.3: sorted files got the AR(1) factor (power 64% -> 0%, intervals 3.4x wider).
    rng = np.random.default_rng(2)
    x, y = rng.normal(1000, 10, 50), rng.normal(1005, 10, 50)
    shuffled = compare(x, y)
    ordered = compare(np.sort(x), np.sort(y))
    assert not any(n.code == "autocorrelation" for n in shuffled.notes + ordered.notes)
    assert any(n.code == "sorted" for n in ordered.notes)
    assert not any(w.code == "drift" for w in ordered.warnings)
    assert ordered.ci_pct == pytest.approx(shuffled.ci_pct, rel=1e-9)
    assert ordered.p_value == pytest.approx(shuffled.p_value, rel=1e-9)
