"""One variant constant: the sign test of the other against its value bounds the comparison (wave 20).

References: scipy's binomial law (the mid-p sign test), and the sign test's interval (order statistics) by
brute force over k.  The 8.5% of false positives of stat18's row B (grid 1, sd 7, against grid 20, one
latent law, 4 a side) came most from draws whose grid-20 side was constant: 4 values on one side of it have
probability 1/8."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from abstat.stats.constant_side import sign_floor
from abstat.stats.hodges_lehmann import hodges_lehmann


def _reference(x: np.ndarray, c: float, alpha: float) -> tuple[float, float, float]:
    """The mid-p sign test (twice the lower tail with half the observed count's probability) and the
    interval of the order statistics whose mid-p tail is at most ``alpha``, by brute force over k."""
    shifts = np.sort(c - x)
    untied = shifts[shifts != 0]
    fewer, m = min(int((untied > 0).sum()), int((untied < 0).sum())), untied.size
    p = min(1.0, 2 * (stats.binom.cdf(fewer - 1, m, 0.5) + stats.binom.pmf(fewer, m, 0.5) / 2)) if m else 1.0
    n = shifts.size
    tail = [2 * (stats.binom.cdf(j - 2, n, 0.5) + stats.binom.pmf(j - 1, n, 0.5) / 2) for j in range(n // 2 + 2)]
    k = max((j for j in range(1, n // 2 + 2) if tail[j] <= alpha), default=0)
    return (p, float(shifts[k - 1]), float(shifts[n - k])) if k else (p, -math.inf, math.inf)


def test_sign_floor_is_the_sign_test() -> None:
    rng = np.random.default_rng(4)
    for n in (2, 3, 4, 5, 6, 9, 17, 40, 2500):
        x = np.round(rng.normal(0.0, 1.0, n), 1)
        got = sign_floor(x, np.full(3, 0.25), 0.05)  # (x, to 0.1, never takes 0.25)
        assert got is not None
        want = _reference(x, 0.25, 0.05)
        assert math.isclose(got[0], want[0], rel_tol=1e-9) and got[1:] == want[1:]
        flipped = sign_floor(np.full(3, 0.25), x, 0.05)  # the candidate varies: shifts x - c
        assert flipped is not None and flipped[1:] == tuple(-v for v in want[:0:-1])
    assert sign_floor(np.ones(3), np.ones(4), 0.05) is None
    assert sign_floor(np.array([0.1, 0.25, 0.3]), np.full(3, 0.25), 0.05) is None  # it takes the value: one grid
    assert sign_floor(np.arange(3.0), np.arange(4.0), 0.05) is None


def test_four_values_on_one_side_of_a_constant_are_no_evidence() -> None:
    # before: p = 0.014 (the permutation law of 8 exchangeable values) and an interval excluding 0
    x = np.log(np.array([993.0, 995.0, 998.0, 999.0]))
    y = np.log(np.full(4, 1000.0))
    r = hodges_lehmann(x, y, 0.95)
    assert r.p_value >= 1 / 16  # mid-p: 2 x (1/16) / 2
    assert r.low == -math.inf and r.high == math.inf  # 4 values cannot bound the change at 95%


def test_on_one_grid_the_permutation_test_decides() -> None:
    # x all 440, y on 440 and 460 (calibration's balanced grid rows): the sign test counts only the four 460s
    # (mid-p 1/16); the permutation law of the table of counts (exact for one law on one grid) says 0.043
    x, y = np.log(np.full(10, 440.0)), np.log(np.array([440.0] * 6 + [460.0] * 4))
    assert sign_floor(x, y, 0.05) is None
    assert hodges_lehmann(x, y, 0.95).p_value < 0.05


def test_five_values_on_one_side_of_a_constant_decide() -> None:
    r = hodges_lehmann(np.log(np.arange(995.0, 1000.0)), np.log(np.full(5, 1000.0)), 0.95)
    assert r.p_value < 0.05 and r.low > 0.0


def test_enough_values_against_a_constant_still_decide() -> None:
    x = np.log(np.arange(990.0, 1000.0))  # 10 values, all below 1000
    r = hodges_lehmann(x, np.log(np.full(10, 1000.0)), 0.95)
    assert r.p_value <= 0.05 and r.low > 0.0
    p, low, high = _reference(x, math.log(1000.0), 0.05)
    assert r.p_value >= p and r.low <= low and r.high >= high
