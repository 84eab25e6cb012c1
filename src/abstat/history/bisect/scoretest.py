"""A permutation test of a shift scored with the noise's own density (library code, no I/O).

Rank tests and trimmed means are valid for any noise shape but weak on a benchmark with two paths
(half of the runs 10% slower): a 2% change moves each run within its hump, and a statistic of the
whole sample sees it as a fifth of its spread.  The locally most powerful test of a shift scores
each value with ``-f'/f`` of the noise's density ``f``.  Here ``f`` is a kernel density
(:mod:`abstat.history.bisect.density`) of the *pooled* values, so the scores are a symmetric
function of the pool and the permutation test is exact whenever the pooled values are exchangeable
(no shift): its p-value is ``(1 + #{permuted >= observed}) / (1 + PERMUTATIONS)`` over random
relabellings drawn from a fixed seed (deterministic; valid for any number of them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

PERMUTATIONS = 4000
SEED = 20240534
MULTIMODAL = 3.5  # Fisher information of the fitted density times the squared robust scale above which
# the noise has humps (a normal's is 1; 20-100 ends' runs of one-path noise, normal or
# with 5% outliers, stayed below 3.2 in 60 draws, of a two-path benchmark's were 4-16)
MAX_POINTS = 200  # most recent values of each group used (bounded cost; the density is fitted to
# at most 400 values: the whole pool)


def scores(pooled) -> object:
    """``-d/dz log f(z)`` at each pooled value, ``f`` the density fitted to the pool (numpy array)."""
    import numpy as np

    from abstat.history.bisect import density

    z = np.asarray(pooled, dtype=float)
    centre = float(np.median(z))
    spread = max(1.4826 * float(np.median(np.abs(z - centre))), float(np.subtract(*np.percentile(z, [75, 25]))) / 1.349)
    steps = np.diff(np.unique(z))
    if steps.size:  # quantized data: the grid step is part of the spread (Sheppard)
        spread = math.sqrt(spread * spread + float(np.min(steps)) ** 2 / 12.0)
    shape = density.fit(z - centre, spread) if spread > 0 else None
    return z - centre if shape is None else density_score(shape, z - centre)


def density_score(shape, z):
    """``-d/dz log f(z)`` for the fitted density ``shape`` (a central difference a quarter bandwidth wide)."""
    h = shape.bandwidth / 4
    return -(shape.log_pdf(z + h) - shape.log_pdf(z - h)) / (2 * h)


def locations(first, second, steps: int = 2) -> tuple[float, float]:
    """(level of ``first``, ``second`` minus it) for two groups with the same noise: the first's median and
    the Hodges-Lehmann shift, then ``steps`` Newton steps of the likelihood under the density of the pooled
    residuals (on a two-path benchmark far more precise than the Hodges-Lehmann shift alone)."""
    import numpy as np

    from abstat.history.bisect import density

    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    level, delta = float(np.median(a)), float(np.median(np.subtract.outer(b, a)))
    for _ in range(steps):
        residuals = np.concatenate([a - level, b - level - delta])
        spread = 1.4826 * float(np.median(np.abs(residuals - np.median(residuals))))
        shape = density.fit(residuals, spread) if spread > 0 else None
        if shape is None:
            break
        sa, sb = density_score(shape, a - level), density_score(shape, b - level - delta)
        information = float(np.mean(np.concatenate([sa, sb]) ** 2))
        if not information > 0:
            break
        step_a, step_b = float(np.mean(sa)) / information, float(np.mean(sb)) / information
        level, delta = level + step_a, delta + step_b - step_a
    return level, delta


def multimodal(first, second) -> bool:
    """Whether two groups' noise (residuals from :func:`locations`) has humps narrower than its spread: the
    density's Fisher information times the squared robust scale above ``MULTIMODAL``.  The scored test is
    the more powerful there; elsewhere it is not needed, and it loses a large shift (a commit many
    bandwidths from the ends makes a hump of its own in the pooled density, whose scores sum to 0)."""
    import numpy as np

    from abstat.history.bisect import density

    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if min(a.size, b.size) < 4:
        return False
    level, delta = locations(a, b)
    residuals = np.concatenate([a - level, b - level - delta])
    spread = 1.4826 * float(np.median(np.abs(residuals - np.median(residuals))))
    shape = density.fit(residuals, spread) if spread > 0 else None
    if shape is None:
        return False
    return float(np.mean(density_score(shape, residuals) ** 2)) * spread * spread > MULTIMODAL


def shift_p(sample: Sequence[float], others: Sequence[float]) -> float:
    """One-sided p-value that ``sample`` lies higher than ``others`` (a positive shift), by the
    permutation distribution of the sum of the sample's density scores (1.0 with fewer than 4 of either)."""
    import numpy as np

    a = np.asarray(sample, dtype=float)[-MAX_POINTS:]
    b = np.asarray(others, dtype=float)[-MAX_POINTS:]
    if a.size < 4 or b.size < 4:
        return 1.0
    s = np.asarray(scores(np.concatenate([a, b])))
    if not np.all(np.isfinite(s)) or float(np.ptp(s)) == 0.0:
        return 1.0
    s = s - s.mean()
    observed = float(s[: a.size].sum())
    rng = np.random.default_rng(SEED)
    count = 0
    for _ in range(PERMUTATIONS // 500):
        picks = np.argsort(rng.random((500, s.size)), axis=1)[:, : a.size]
        count += int(np.sum(s[picks].sum(axis=1) >= observed - 1e-9 * (1 + abs(observed))))
    return (1 + count) / (1 + PERMUTATIONS)


def differ_p(good: Sequence[float], bad: Sequence[float]) -> float:
    """Two-sided p-value that the ends differ by a shift (twice the smaller one-sided; at most 1)."""
    return min(1.0, 2 * min(shift_p(bad, good), shift_p(good, bad)))
