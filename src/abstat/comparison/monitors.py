"""What else changed: the monitors' counters (``--monitor``) that moved between two variants.

The monitor metrics (``monitor.NAME.FIELD``: IPIs, TLB shootdowns, page
faults, softirqs, stall time...) are not claims: they are the context of
one.  They are never part of the main table's family (whose error rate
Holm holds); they are compared here, every counter of every candidate
against the baseline, with the two-sided Mann-Whitney test (tie-corrected:
counters are integers, often mostly zero), and the family of all of them is
held by Benjamini-Hochberg at ``fdr``: of the counters listed as moved, at
most that share are expected to be false discoveries.  A counter constant
on both sides is not tested.  Each row gives the two medians and the two
means: a counter that fires in a few runs only moves its mean, not its
median.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MONITOR_PREFIX = "monitor."
MIN_PER_SIDE = 3  # Mann-Whitney cannot reach p < 0.05 two-sided below 4 against 4 (3 vs 4 can't either)


def is_monitor(metric: str) -> bool:
    """A ``--monitor`` counter: listed under what else changed, never in the main table's family."""
    return metric.startswith(MONITOR_PREFIX)


@dataclass(frozen=True)
class MovedCounter:
    """One monitor counter of one candidate that moved against the baseline."""

    metric: str
    candidate: str
    baseline: str
    unit: str | None
    baseline_median: float
    candidate_median: float
    baseline_mean: float
    candidate_mean: float
    p_value: float
    q_value: float  # Benjamini-Hochberg adjusted over every counter tested

    @property
    def direction(self) -> str:
        """``up`` or ``down``: where the candidate's values lie (the means, when the medians tie)."""
        if self.candidate_median != self.baseline_median:
            return "up" if self.candidate_median > self.baseline_median else "down"
        return "up" if self.candidate_mean > self.baseline_mean else "down"


@dataclass(frozen=True)
class OtherChanges:
    """The family: how many counters were tested, at which false-discovery rate, and those that moved."""

    tested: int
    fdr: float
    moved: tuple[MovedCounter, ...]


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """The Benjamini-Hochberg adjusted p-values (q-values), in the input's order."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.minimum(adjusted, 1.0)
    return [float(x) for x in q]


def _p_value(base: np.ndarray, cand: np.ndarray) -> float | None:
    from scipy.stats import mannwhitneyu

    if len(base) < MIN_PER_SIDE or len(cand) < MIN_PER_SIDE:
        return None
    if np.ptp(np.concatenate([base, cand])) == 0:
        return None  # the same constant on both sides: nothing moved
    return float(mannwhitneyu(cand, base, alternative="two-sided", method="asymptotic").pvalue)


def other_changes(
    samples: Mapping[str, Mapping[str, Sequence[float]]],
    baseline: str,
    units: Mapping[str, str | None] | None = None,
    fdr: float = 0.05,
) -> OtherChanges:
    """``samples``: monitor metric -> variant -> its values (one per run).  Every candidate's counter is
    tested against the baseline's; those whose q-value is at most ``fdr`` are returned, largest move first
    (by q-value, then by name)."""
    if not 0 < fdr < 1:
        raise ValueError(f"fdr must be between 0 and 1, not {fdr!r}")
    units = units or {}
    tested: list[tuple[str, str, np.ndarray, np.ndarray, float]] = []
    for metric in sorted(samples):
        if not is_monitor(metric):
            continue
        by_variant = samples[metric]
        base = np.asarray(by_variant.get(baseline, ()), dtype=float)
        for candidate in sorted(by_variant):
            if candidate == baseline:
                continue
            cand = np.asarray(by_variant[candidate], dtype=float)
            p = _p_value(base, cand)
            if p is not None:
                tested.append((metric, candidate, base, cand, p))
    q_values = benjamini_hochberg([item[4] for item in tested])
    moved = [
        MovedCounter(
            metric,
            candidate,
            baseline,
            units.get(metric),
            float(np.median(base)),
            float(np.median(cand)),
            float(base.mean()),
            float(cand.mean()),
            p,
            q,
        )
        for (metric, candidate, base, cand, p), q in zip(tested, q_values, strict=True)
        if q <= fdr
    ]
    moved.sort(key=lambda row: (row.q_value, row.metric, row.candidate))
    return OtherChanges(len(tested), fdr, tuple(moved))
