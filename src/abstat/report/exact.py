"""Comparisons of units measured without noise (Go's ``Unit ... assume=exact``).

A binary's size does not vary from run to run: one value per side is the
whole truth, and any difference is real.  benchstat compares such units
exactly (its AssumeExact: the mode as the summary, every difference
significant, a warning when the values vary); abstat does the same instead
of asking for more samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from abstat.comparison import Comparison, VariantSummary, decide
from abstat.readers.sampleset import SampleSet


def mode(values: Sequence[float]) -> float:
    """The most frequent value (the smallest among equally frequent ones)."""
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v))


def _summary(name: str, values: Sequence[float]) -> VariantSummary:
    import statistics  # here: it imports random, fractions and decimal, which a noisy unit never needs

    return VariantSummary(
        name=name,
        kind="samples",
        n=len(values),
        mean=statistics.fmean(values),
        stddev=statistics.stdev(values) if len(values) > 1 else 0.0,
        min=min(values),
        max=max(values),
        median=statistics.median(values),
    )


def exact_comparison(
    baseline: SampleSet,
    candidate: SampleSet,
    *,
    names: tuple[str, str],
    confidence: float,
    higher_is_better: bool,
    seed: int = 0,
) -> Comparison:
    """The candidate's exact change from the baseline (modes), p 0 when they differ."""
    base, new = mode(baseline.values), mode(candidate.values)
    if base != 0:
        delta = (new - base) / abs(base) * 100.0
    else:
        delta = 0.0 if new == 0 else math.copysign(math.inf, new)
    differ = new != base
    return Comparison(
        baseline=names[0],
        candidate=names[1],
        n=[baseline.n, candidate.n],
        center="exact",
        delta_pct=delta,
        ci_pct=[delta, delta],
        p_value=0.0 if differ else 1.0,
        significant=differ,
        verdict=decide(delta, [delta, delta], differ, None, higher_is_better),
        method="exact",
        warnings=[],
        confidence=confidence,
        threshold=None,
        higher_is_better=higher_is_better,
        unit="samples",
        runs=None,
        outlier_rule="none",
        seed=seed,
        summaries=[_summary(names[0], baseline.values), _summary(names[1], candidate.values)],
    )
