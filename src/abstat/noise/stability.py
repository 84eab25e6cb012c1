"""Is a series of runs, in run order, stable?  Three rank tests and A/A blocks.

* trend: Spearman's rank correlation of value against run order (slow drift);
* autocorrelation: lag-1 autocorrelation of the ranks, one-sided (runs that
  resemble their neighbours: drift, a step, slow oscillation);
* step: Pettitt's change-point test (one shift in the middle of the runs).

A fourth asks whether disjoint consecutive blocks of runs differ (Kruskal-
Wallis across the blocks); alongside, ``abstat compare`` is run on every pair
of blocks and the share of pairs where it calls a difference is reported
(about alpha on a stable machine; the pairs share blocks, so their count is
not binomial and the Kruskal-Wallis p-value is what judges it).

Ranks make them indifferent to the noise's distribution (skewed, heavy
tails, quantized).  The series is unstable when one of the four p-values is
below alpha / 4 (Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


TESTS = 4  # trend, autocorrelation, step, blocks: each at alpha / TESTS


@dataclass
class TestResult:
    statistic: float
    p_value: float
    position: int | None = None  # the step's run index (Pettitt)

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "p_value": self.p_value, "position": self.position}


def _ranks(values: list[float]) -> Any:
    from scipy import stats

    return stats.rankdata(values)


def trend_test(values: list[float]) -> TestResult:
    """Spearman's rho of value against order, two-sided p (t approximation)."""
    from scipy import stats

    n = len(values)
    if n < 4 or len(set(values)) < 2:
        return TestResult(0.0, 1.0)
    rho, p = stats.spearmanr(range(n), values)
    return TestResult(float(rho), float(p))


def autocorrelation_test(values: list[float]) -> TestResult:
    """Lag-1 autocorrelation of the ranks; one-sided p for positive correlation
    (normal approximation, mean -1/n and variance (n-2)^2 / (n^2 (n-1)) under independence)."""
    import numpy as np
    from scipy import stats

    n = len(values)
    if n < 6 or len(set(values)) < 2:
        return TestResult(0.0, 1.0)
    ranks = _ranks(values)
    centred = ranks - ranks.mean()
    r1 = float(np.dot(centred[:-1], centred[1:]) / np.dot(centred, centred))
    sd = (n - 2) / (n * math.sqrt(n - 1))
    z = (r1 + 1.0 / n) / sd
    return TestResult(r1, float(stats.norm.sf(z)))


def step_test(values: list[float]) -> TestResult:
    """Pettitt's test: K = max |U_t| over the split points; p ~ 2 exp(-6K^2 / (n^3 + n^2))."""
    import numpy as np

    n = len(values)
    if n < 4 or len(set(values)) < 2:
        return TestResult(0.0, 1.0)
    ranks = _ranks(values)
    # U_t = 2 * sum_{i<=t} r_i - t (n + 1)   (Pettitt 1979, with mid-ranks for ties)
    u = 2.0 * np.cumsum(ranks)[:-1] - np.arange(1, n) * (n + 1.0)
    index = int(np.argmax(np.abs(u)))
    k = float(abs(u[index]))
    p = min(1.0, 2.0 * math.exp(-6.0 * k * k / (n**3 + n**2)))
    return TestResult(k, p, index + 1)


@dataclass
class Stability:
    trend: TestResult
    autocorrelation: TestResult
    step: TestResult
    alpha: float

    @property
    def reasons(self) -> list[str]:
        limit = self.alpha / TESTS
        found = []
        if self.trend.p_value < limit:
            direction = "upward" if self.trend.statistic > 0 else "downward"
            found.append(
                f"{direction} drift along the run order (Spearman rho {self.trend.statistic:+.2f},"
                f" p = {self.trend.p_value:.2g})"
            )
        if self.step.p_value < limit:
            found.append(f"a step after run {self.step.position} (Pettitt p = {self.step.p_value:.2g})")
        if self.autocorrelation.p_value < limit:
            found.append(
                f"autocorrelated runs (lag-1 r = {self.autocorrelation.statistic:+.2f},"
                f" p = {self.autocorrelation.p_value:.2g})"
            )
        return found

    @property
    def stable(self) -> bool:
        return not self.reasons


def stability(values: list[float], alpha: float = 0.05) -> Stability:
    return Stability(trend_test(values), autocorrelation_test(values), step_test(values), alpha)


@dataclass
class BlockCalls:
    blocks: int
    block_size: int
    comparisons: int
    calls: int
    alpha: float
    p_value: float  # Kruskal-Wallis: do the blocks differ?

    @property
    def rate(self) -> float:
        return self.calls / self.comparisons if self.comparisons else 0.0

    @property
    def clearly_high(self) -> bool:
        """The blocks differ more than chance explains (Kruskal-Wallis p below alpha / TESTS)."""
        return self.p_value < self.alpha / TESTS

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "block_size": self.block_size,
            "comparisons": self.comparisons,
            "calls": self.calls,
            "rate": self.rate,
            "alpha": self.alpha,
            "kruskal_wallis_p": self.p_value,
        }


MIN_BLOCK = 8
MAX_BLOCKS = 6


def block_calls(
    values: list[float], confidence: float, *, blocks: int | None = None, seed: int = 0
) -> BlockCalls | None:
    """A/A: ``abstat compare`` of every pair of disjoint consecutive blocks of
    the runs; how many call a difference.  None when there are fewer than
    two blocks of MIN_BLOCK runs."""
    from abstat.comparison import compare

    count = blocks if blocks is not None else min(MAX_BLOCKS, len(values) // MIN_BLOCK)
    if count < 2 or len(values) // count < 3:
        return None
    size = len(values) // count
    parts = [values[i * size : (i + 1) * size] for i in range(count)]
    calls = comparisons = 0
    for i in range(count):
        for j in range(i + 1, count):
            result = compare(parts[i], parts[j], confidence=confidence, seed=seed)
            comparisons += 1
            calls += bool(result.significant)
    from scipy import stats

    p_value = float(stats.kruskal(*parts).pvalue) if len(set(values[: count * size])) > 1 else 1.0
    return BlockCalls(count, size, comparisons, calls, 1.0 - confidence, p_value)
