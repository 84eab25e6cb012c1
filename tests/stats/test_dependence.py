"""Serial correlation's variance factor (abstat.stats.dependence) against
brute-force references: the AR(1) covariance matrix, scipy's t quantiles,
the rule written out, Welch's t with the factors on independent draws
(the power the factor costs), and A/A
draws of the default comparison at 15 values a side (issue 34)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import abstat
from abstat.stats import dependence
from abstat.stats.dependence import df_factor, serial_factors, variance_factor


def ar1(rng: np.random.Generator, phi: float, n: int, factor: float = 1.0) -> np.ndarray:
    """As benchmarks/calibration_workflows.py draws it: N(1000, 10) marginals, 100 values of burn-in."""
    e = rng.normal(0.0, 10 * math.sqrt(1 - phi**2), n + 100)
    x = np.empty(n + 100)
    x[0] = rng.normal(0.0, 10)
    for t in range(1, n + 100):
        x[t] = phi * x[t - 1] + e[t]
    return factor * (1000 + x[100:])


@pytest.mark.parametrize("phi", [0.0, 0.2, 0.6, 0.85])
@pytest.mark.parametrize("n", [10, 15, 50, 400])
def test_variance_factor_is_the_covariance_matrix_ratio(phi: float, n: int) -> None:
    # Var(mean) = 1'S1 / n^2 and E[s^2] = (tr S - 1'S1 / n) / (n - 1) for S_ij = phi^|i-j|
    lags = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    cov = phi**lags
    whole = cov.sum()
    expected = (whole / n) / ((np.trace(cov) - whole / n) / (n - 1))
    share = (np.trace(cov) - whole / n) / (n - 1)
    if share >= 0.25:  # below it the factor is floored (MIN_SHARE)
        assert variance_factor(phi, n) == pytest.approx(expected, rel=1e-10)
    assert variance_factor(phi, 100_000) == pytest.approx((1 + phi) / (1 - phi), rel=1e-3)


def test_df_factor_is_the_ratio_of_t_quantiles() -> None:
    for confidence in (0.9, 0.95, 0.99):
        q = 0.5 + confidence / 2
        got = df_factor((15, 15), (4.0, 4.0), confidence)
        assert got == pytest.approx((stats.t.ppf(q, 15 / 4 * 2 - 2) / stats.t.ppf(q, 28)) ** 2, rel=1e-6)
    assert df_factor((200, 200), (1.0, 1.0), 0.95) == pytest.approx(1.0)
    assert df_factor((10, 10), (50.0, 50.0), 0.95) == pytest.approx(
        (stats.t.ppf(0.975, 2) / stats.t.ppf(0.975, 18)) ** 2
    )


@pytest.mark.parametrize(("n", "low", "high"), [(15, 0.06, 0.12), (20, 0.06, 0.12), (50, 0.06, 0.12)])
def test_independent_samples_keep_factor_one_at_the_pretests_rate(n: int, low: float, high: float) -> None:
    # a one-sided 10% pre-test (z 1.28) on the pooled estimate
    rng = np.random.default_rng(5)
    fired = sum(serial_factors(rng.normal(size=n), rng.normal(size=n))[0] > 1.0 for _ in range(2000))
    assert low <= fired / 2000 <= high


def former_rule(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The rule of session 10, written out: z 1.28, the whole raise."""
    raw = (x.size * (dependence.lag1_rank_autocorrelation(x) + 1 / x.size)) + (
        y.size * (dependence.lag1_rank_autocorrelation(y) + 1 / y.size)
    )
    total = x.size + y.size
    raw /= total
    if not raw > 1.28 / math.sqrt(total):
        return 1.0, 1.0
    phi = min(0.9, raw / (1 - 4 / (total / 2)))
    shifted = min(0.9, phi + 0.5 / math.sqrt(total) + 60 / (total / 2) ** 2)
    own = (variance_factor(shifted, x.size), variance_factor(shifted, y.size))
    rough = df_factor((x.size, y.size), own, 0.95)
    return own[0] * rough, own[1] * rough


@pytest.mark.parametrize("n", [20, 35, 50, 200])
def test_from_20_values_a_side_the_rule_is_the_former_one(n: int) -> None:
    rng = np.random.default_rng(n)
    fired = 0
    for phi in (0.0, 0.2, 0.4, 0.6, 0.9):
        for _ in range(20):
            x, y = ar1(rng, phi, n), ar1(rng, phi, n)
            got = serial_factors(x, y)[:2]
            assert got == pytest.approx(former_rule(x, y), rel=1e-12)
            fired += got[0] > 1.0
    assert fired >= 40  # (the dependent draws fire)


def welch_calls(phi: float, n: int, reps: int, seed: int, shift: float = 0.0) -> float:
    """Share of draws Welch's t calls at 5% with each variance times serial_factors' factor."""
    rng = np.random.default_rng(seed)
    calls = 0
    for _ in range(reps):
        if phi > 0:
            x, y = ar1(rng, phi, n), ar1(rng, phi, n, 1 + shift)
        else:
            x, y = rng.normal(1000, 10, n), rng.normal(1000, 10, n) * (1 + shift)
        fx, fy, _ = serial_factors(x, y)
        vx, vy = x.var(ddof=1) / n * fx, y.var(ddof=1) / n * fy
        df = (vx + vy) ** 2 / (vx**2 + vy**2) * (n - 1)
        calls += abs(y.mean() - x.mean()) / math.sqrt(vx + vy) > stats.t.ppf(0.975, df)
    return calls / reps


@pytest.mark.parametrize(("n", "shift", "least"), [(10, 0.009, 0.40), (15, 0.007, 0.38), (50, 0.004, 0.48)])
def test_independent_samples_lose_little_power(n: int, shift: float, least: float) -> None:
    # the price on independent data: with no factor Welch's t calls 47.7%, 45.5%, 51.5% of these draws, with
    # this rule 44.2%, 41.4%, 49.4% (the candidate z 1.0 / 1.6 below 20 values, not adopted: 41.5%, 39.7%)
    assert welch_calls(0.0, n, 2000, 8, shift) >= least


def test_ar1_phi_06_at_15_values_holds_its_level() -> None:
    # issue 34's row "AR(1) phi 0.6, +1%, n 15": 11.3% +-1.3 false positives and coverage 89.2% with the
    # pre-test's factor (1 + phi) / (1 - phi); 300 seeded A/A and A/B draws of the default comparison.
    # The rule before session 10 called 28 of these A/A draws (9.3%) and covered 275 (91.7%); session 10's
    # 16 and 283 (this rule); the candidate small-n pre-test at z 1.0 with a graded raise, not adopted, 11 and 286.
    rng = np.random.default_rng(34)
    calls = covered = 0
    for i in range(300):
        x, y, z = ar1(rng, 0.6, 15), ar1(rng, 0.6, 15), ar1(rng, 0.6, 15, 1.01)
        calls += abstat.compare(x, y, seed=i).significant
        lo, hi = abstat.compare(x, z, seed=i).ci_pct
        covered += lo <= 1.0 <= hi
    assert calls <= 24  # 8%: a true 6% gives 18 +- 4; a true 11% gives 33 +- 5.4
    assert covered >= 276  # 92%: a true 95% gives 285 +- 3.8
