"""Wave 19's shortcuts of the default comparison (issue 42) against independent references: the modes'
valleys found by one reduction per array instead of a loop over the peaks (against the loop written out
here), Welch's p-value without the interval (scipy's, and welch_ratio's bit for bit), the average ranks of
few levels from a given sort (scipy's rankdata), the continued fraction of the incomplete beta function
written out (scipy's stdtr).  The means-differ note, now skipped on Welch's p-value alone, is checked by
tests/comparison/test_means_differ_note.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from abstat.stats import diagnostics, modes
from abstat.stats.brunner_munzel import spread_ties
from abstat.stats.distributions import stdtr
from abstat.stats.ratio import welch_p, welch_ratio


def _loop_valleys(dens: np.ndarray, peaks: list[int]) -> tuple[list[float], list[int]]:
    """The lowest density between neighbouring peaks and the first bin holding it, pair by pair."""
    lows = [float(dens[a : b + 1].min()) for a, b in zip(peaks, peaks[1:], strict=False)]
    bounds = [0, *(a + int(np.argmin(dens[a : b + 1])) for a, b in zip(peaks, peaks[1:], strict=False)), dens.size]
    return lows, bounds


def test_valleys_are_the_loops_over_the_peaks():
    rng = np.random.default_rng(19)
    checked = 0
    for _ in range(3000):
        size = int(rng.integers(8, 600))
        dens = rng.random(size) ** int(rng.integers(1, 4))
        if rng.random() < 0.5:  # plateaus and repeated minima: argmin's first one
            dens = np.round(dens * int(rng.integers(2, 6))) / 5
        d = np.diff(dens)
        peaks = np.flatnonzero((d[:-1] > 0) & (d[1:] <= 0)) + 1
        if peaks.size < 2:
            continue
        assert modes._valleys(dens, peaks) == _loop_valleys(dens, peaks.tolist())
        checked += 1
    assert checked > 1000


def test_mode_counts_of_mixtures():
    rng = np.random.default_rng(20)
    one = rng.normal(0, 1, 5000)
    two = np.r_[rng.normal(0, 1, 3000), rng.normal(8, 1, 3000)]
    three = np.r_[rng.normal(0, 1, 3000), rng.normal(10, 1, 3000), rng.normal(20, 1, 3000)]
    many_bumps = 100 + np.abs(rng.standard_cauchy(10000))  # many small peaks in the tail, one mode
    for values, expected in ((one, 1), (two, 2), (three, 3), (many_bumps, 1)):
        assert modes.mode_count(values, np.sort(values)) == expected
        assert modes.mode_count(values) == expected
    assert diagnostics.mode_count is modes.mode_count  # (re-exported)


@pytest.mark.parametrize(
    "case",
    [
        (98, 438.97959, 6.6564899, 98, 370.81633, 12.57337),
        (5, 10.0, 1.0, 7, 10.5, 3.0),
        (20000, 1.0, 1.3, 19000, 1.01, 1.2),
    ],
)
def test_welch_p_is_scipys_and_welch_ratios(case):
    n1, m1, s1, n2, m2, s2 = case
    p, df = welch_p(n1, m1, s1, n2, m2, s2)
    ref = stats.ttest_ind_from_stats(m2, s2, n2, m1, s1, n1, equal_var=False)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    r = welch_ratio(n1, m1, s1, n2, m2, s2, 0.95)
    assert (p, df) == (r.p_value, r.df)
    assert welch_p(3, 5.0, 0.0, 4, 5.0, 0.0) == (1.0, math.inf)
    assert welch_p(3, 5.0, 0.0, 4, 6.0, 0.0) == (0.0, math.inf)


def test_ranks_of_few_levels_from_a_given_sort_are_scipys():
    rng = np.random.default_rng(21)
    for _ in range(300):
        values = 20.0 * rng.integers(
            20, 20 + int(rng.integers(2, diagnostics.FEW_LEVELS + 1)), int(rng.integers(2, 400))
        )
        ordered = np.sort(values)
        distinct = diagnostics.distinct_count(ordered)
        ranks = diagnostics.average_ranks(values, distinct, ordered)
        np.testing.assert_array_equal(ranks, stats.rankdata(values))
        assert diagnostics.rank_correlations(values, distinct, ordered) == diagnostics.rank_correlations(values)


def test_stdtr_is_scipys_at_large_degrees_of_freedom():
    for df in (4.5, 150.0, 15000.3, 19998.0, 2e6):
        for t in (-40.0, -3.0, -1.96, -0.5, 0.0, 0.7, 2.5):
            assert stdtr(df, t) == pytest.approx(special.stdtr(df, t), rel=1e-9, abs=1e-300)


def test_order_statistics_under_the_plain_guides_are_the_formed_differences_and_the_old_guides(monkeypatch):
    from abstat.stats import hl_binned
    from abstat.stats.hl_binned import guided_differences

    rng = np.random.default_rng(23)
    # (untied values, as the comparison hands them over: tied data of one value per cell's point can leave more
    # than the gather limit of nearly equal differences, whose block's first entry depends on the bracket)
    for shape in ("normal", "lognormal", "spread"):
        x = np.sort(rng.normal(0, 1, 400) if shape != "lognormal" else rng.lognormal(0, 1, 400))
        y = np.sort(rng.normal(0.1, 1.3, 6000) if shape != "lognormal" else rng.lognormal(0.05, 1, 6000))
        if shape == "spread":  # rounded values spread over their cells (spread_ties: points, no weights)
            x, y = (spread_ties(np.sort(np.round(v, 1))).values for v in (x, y))
        formed = np.sort(np.subtract.outer(y, x).ravel())
        matrix = guided_differences(x, y)
        assert hl_binned.PLAIN[0] <= y.size < hl_binned.PLAIN[1]  # the plain guides: coarser bins, a narrow margin
        assert matrix.margin == hl_binned.PLAIN_MARGIN * min(hl_binned.GATHER, 8 * y.size)
        for q in (0.5, 0.02, 0.98, 0.4999, 0.3, 0.7, 0.0, 1.0 - 1e-9):
            k = min(int(q * formed.size), formed.size - 1)
            found = matrix.kth(k)
            with monkeypatch.context() as m:
                m.setattr(hl_binned, "PLAIN", (0, 0))  # main's guides
                assert guided_differences(x, y).kth(k) == found, (shape, q)
            assert found == formed[k], (shape, q)
