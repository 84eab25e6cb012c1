"""The order statistics of the pairwise differences that the default
comparison selects without forming them (abstat.stats.pairwise, guided by
abstat.stats.hl_binned) against sorting every difference (brute force), on
random, heavy-tailed, tied, grid, constant and two-mode data; and a median
that falls in the gap between two modes is found in few counts (it once took
10^5 counts at 1000 values a side and never ended at 10^4)."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats import hodges_lehmann as hl
from abstat.stats import pairwise
from abstat.stats.brunner_munzel import spread_ties
from abstat.stats.hl_binned import Guided, guided_differences, guided_walsh


def _samples(shape: str, nx: int, ny: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(0.0, 1.0, nx), rng.normal(0.3, 2.0, ny)
    if shape == "heavy":
        return rng.standard_t(1.5, nx), rng.standard_t(1.5, ny) + 0.1
    if shape == "tied":  # few distinct values: many equal differences
        return rng.integers(0, 5, nx).astype(float), rng.integers(1, 6, ny).astype(float)
    if shape == "grid":  # TSC-like ticks of 20, spread over their cells as the comparison does
        return (
            spread_ties(np.sort(20.0 * np.round(rng.normal(440, 7, nx) / 20))).values,
            spread_ties(np.sort(20.0 * np.round(rng.normal(444, 7, ny) / 20))).values,
        )
    if shape == "constant":
        return np.full(nx, 3.0), np.full(ny, 2.5)
    # two modes in the baseline, one in the candidate: the median lies in an empty gap
    return np.r_[rng.normal(0.0, 0.01, nx // 2), rng.normal(0.7, 0.01, nx - nx // 2)], rng.normal(0.005, 0.01, ny)


SHAPES = ["normal", "heavy", "tied", "grid", "constant", "two-mode"]


@pytest.mark.parametrize("shape", SHAPES)
def test_guided_order_statistics_are_those_of_every_difference_sorted(shape):
    rng = np.random.default_rng(sum(map(ord, shape)))
    x, y = _samples(shape, 1100, 1700, rng)
    x, y = np.sort(x), np.sort(y)
    every = np.sort(np.subtract.outer(y, x).ravel())
    n = every.size
    ranks = [0, 1, n // 4, (n - 1) // 2, n // 2, int(n * 0.4975), int(n * 0.5025), int(n * 0.9), n - 2, n - 1]
    for margin in (50.0, 5000.0):  # a tight margin misses, a wide one holds many entries: both must be exact
        guided = guided_differences(x, y, margin=margin)
        for k in ranks:
            assert guided.kth(float(k)) == every[k], (shape, margin, k)
        assert pairwise.median_of(guided) == float(np.median(every))
        plain = pairwise.differences(x, y)
        assert pairwise.median_of(plain) == float(np.median(every))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_guided_walsh_sums_are_those_of_every_pair_sorted(shape, weighted):
    """The pseudo-median's Walsh sums x_i + x_j (i <= j); a weight w stands for w equal points
    (the diagonal entry then for w (w + 1) / 2 entries)."""
    rng = np.random.default_rng(sum(map(ord, shape)) + weighted)
    x = np.sort(_samples(shape, 1500, 2, rng)[0])
    w = rng.integers(1, 4, x.size).astype(float) if weighted else None
    i, j = np.triu_indices(x.size)
    sums = x[i] + x[j]
    count = np.ones(sums.size) if w is None else np.where(i == j, w[i] * (w[i] + 1) / 2, w[i] * w[j])
    order = np.argsort(sums, kind="stable")
    sums, running = sums[order], np.cumsum(count[order])
    total = running[-1]
    for margin in (20.0, 2000.0):
        guided = guided_walsh(x, w, margin=margin)
        assert guided.size == total
        for k in [0, total * 0.3, (total - 1) // 2, total * 0.5, total * 0.999, total - 1]:
            expected = sums[np.searchsorted(running, k, side="right")]  # the first entry whose count exceeds k
            assert guided.kth(float(k)) == expected, (shape, weighted, margin, k)
        assert pairwise.median_of(guided) == pairwise.pseudo_median(x, w) * 2.0


def test_a_median_in_the_gap_between_two_modes_takes_few_counts(monkeypatch):
    rng = np.random.default_rng(5)
    x, y = _samples("two-mode", 1000, 1000, rng)
    x, y = np.sort(x), np.sort(y)
    counts = []
    original = pairwise.SortedSums.positions

    def counted(self, p, side="right"):
        counts.append(p)
        return original(self, p, side)

    monkeypatch.setattr(pairwise.SortedSums, "positions", counted)
    assert pairwise.median_of(pairwise.differences(x, y)) == float(np.median(np.subtract.outer(y, x)))
    assert len(counts) < 200  # (bisection needs about 50 at most; the stalled secant took 117,854)


@pytest.mark.parametrize("shape", ["normal", "two-mode", "tied"])
def test_the_interval_is_the_same_with_and_without_the_binned_guide(shape, monkeypatch):
    rng = np.random.default_rng(11)
    x, y = _samples(shape, 3000, 4000, rng)
    if shape == "tied":
        x, y = x + rng.normal(0, 1e-3, x.size), y + rng.normal(0, 1e-3, y.size)  # near ties, unweighted
    monkeypatch.setattr(hl, "GUIDE_FROM", 10**12)
    plain = hl.hodges_lehmann(x, y, 0.95, centres=False, permute=False)
    monkeypatch.setattr(hl, "GUIDE_FROM", 1000)
    used = []
    monkeypatch.setattr(Guided, "_start", lambda self, *a, _s=Guided._start: (used.append(1), _s(self, *a))[1])
    guided = hl.hodges_lehmann(x, y, 0.95, centres=False, permute=False)
    assert used
    assert guided == plain


def test_constant_samples_give_the_one_difference_and_an_interval_that_agrees_with_p() -> None:
    """Every pairwise difference of two constant samples is -20: the estimate is it, the
    interval holds it, and holds 0 exactly when the test's p is above 5% (the 2 x 2 and
    3 x 3 exact p's are 1/3 and 1/10). ``permute=False`` once raised IndexError here."""
    import numpy as np

    from abstat.stats.hodges_lehmann import hodges_lehmann

    for n, m in ((2, 2), (3, 3), (5, 8), (12, 12), (40, 40)):
        r = hodges_lehmann(np.full(n, 440.0), np.full(m, 420.0), 0.95, permute=False)
        assert r.estimate == -20.0 and r.low <= -20.0 <= r.high, (n, m, r)
        assert (r.low <= 0.0 <= r.high) == (r.p_value > 0.05), (n, m, r)
        if n >= 5:
            assert (r.low, r.high) == (-20.0, -20.0)
