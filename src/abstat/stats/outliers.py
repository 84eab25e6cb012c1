"""Outlier classification (always) and exclusion (only when asked).

- Tukey's fences (Tukey 1977, *Exploratory Data Analysis*): with quartiles
  Q1, Q3 (numpy's default linear interpolation) and IQR = Q3 - Q1, a value
  beyond 1.5 IQR outside the quartiles is *mild*, beyond 3 IQR *severe*.
  ``--outliers tukey`` drops both kinds.
- ``--outliers mad``: the modified z-score 0.6745 (x - median) / MAD above 3.5
  in absolute value (Iglewicz & Hoaglin 1993, *How to Detect and Handle
  Outliers*).

Quantized data (TSC counts in steps of 20 cycles) often have an IQR or a
MAD of zero, which would make every value off the most common one an
"outlier"; the spread is then taken as at least the data's smallest gap
between distinct values (one quantization step).  The rule is kept as
documented, but :func:`quantized_fences` tells when it drops values only a
few grid steps from the quartiles, so that the report can say so.
"""

from __future__ import annotations

import math

import numpy as np
from abstat.fastdataclass import dataclass
from abstat.stats.medians import median

RULES = ("none", "tukey", "mad")

#: A value dropped this many grid steps (or fewer) from its quartile is an
#: ordinary value of quantized data rather than an outlier worth the name.
NEAR_STEPS = 3.0


@dataclass(frozen=True)
class OutlierCounts:
    mild: int
    severe: int
    low: int
    high: int

    @property
    def total(self) -> int:
        return self.mild + self.severe


def smallest_gap(values: np.ndarray) -> float:
    """The smallest positive difference between distinct values (0 if none)."""
    u = np.unique(values)
    return float(np.min(np.diff(u))) if u.size > 1 else 0.0


def quartiles(values: np.ndarray) -> tuple[float, float]:
    """Q1 and Q3 with linear interpolation (numpy's default percentile method)."""
    s = np.sort(values)
    out = []
    for q in (0.25, 0.75):
        pos = q * (s.size - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, s.size - 1)
        out.append(float(s[lo] + (s[hi] - s[lo]) * (pos - lo)))
    return out[0], out[1]


def tukey_fences(values: np.ndarray) -> tuple[float, float, float, float]:
    """(outer low, inner low, inner high, outer high) fences."""
    q1, q3 = quartiles(values)
    iqr = q3 - q1
    if iqr == 0.0:
        iqr = smallest_gap(values)
    return q1 - 3.0 * iqr, q1 - 1.5 * iqr, q3 + 1.5 * iqr, q3 + 3.0 * iqr


def classify(values: np.ndarray) -> OutlierCounts:
    """Count Tukey mild and severe outliers, and how many lie low or high."""
    if values.size < 4:
        return OutlierCounts(0, 0, 0, 0)
    lo3, lo15, hi15, hi3 = tukey_fences(values)
    severe = (values < lo3) | (values > hi3)
    outside = (values < lo15) | (values > hi15)
    return OutlierCounts(
        mild=int(np.sum(outside & ~severe)),
        severe=int(np.sum(severe)),
        low=int(np.sum(values < lo15)),
        high=int(np.sum(values > hi15)),
    )


def keep_mask(values: np.ndarray, rule: str) -> np.ndarray:
    """Boolean mask of the values a rule keeps (all of them for ``none``)."""
    if rule not in RULES:
        raise ValueError(f"unknown outlier rule {rule!r} (choose from {', '.join(RULES)})")
    if rule == "none" or values.size < 4:
        return np.ones(values.size, dtype=bool)
    if rule == "tukey":
        _, lo, hi, _ = tukey_fences(values)
        return (values >= lo) & (values <= hi)
    med = median(values)
    mad = median(np.abs(values - med))
    if mad == 0.0:
        mad = smallest_gap(values)
        if mad == 0.0:
            return np.ones(values.size, dtype=bool)
    return np.abs(0.6745 * (values - med) / mad) <= 3.5


@dataclass(frozen=True)
class QuantizedFences:
    """Tukey's inner fences on quantized data, measured in grid steps."""

    step: float  # the grid (e.g. 20 cycles)
    fence_steps: float  # how far the inner fences lie outside the quartiles
    nearest_steps: float  # how far the closest dropped value lies from its quartile


def quantized_fences(values: np.ndarray) -> QuantizedFences | None:
    """The fences in grid steps when ``--outliers tukey`` drops values of
    quantized data at most NEAR_STEPS steps from the quartiles; else None.

    The grid is :func:`abstat.stats.diagnostics.quantization_step` (integer
    data, gcd of the gaps), as in the ``ties`` warning.
    """
    from abstat.stats.diagnostics import quantization_step

    if values.size < 4:
        return None
    step = quantization_step(values)
    if step is None:
        return None
    q1, q3 = quartiles(values)
    _, lo, hi, _ = tukey_fences(values)
    below = values[values < lo]
    above = values[values > hi]
    if below.size == 0 and above.size == 0:
        return None
    distances = [q1 - float(below.max())] if below.size else []
    distances += [float(above.min()) - q3] if above.size else []
    nearest = min(distances) / step
    if nearest > NEAR_STEPS:
        return None
    return QuantizedFences(step=step, fence_steps=(hi - q3) / step, nearest_steps=nearest)


def _by_size(runs: list[np.ndarray], minimum: int) -> dict[int, list[int]]:
    """Indices of the runs of at least ``minimum`` finite values, by size (for the row-wise forms)."""
    sizes: dict[int, list[int]] = {}
    for index, run in enumerate(runs):
        if run.size >= minimum:
            sizes.setdefault(run.size, []).append(index)
    return sizes


def sorted_run_counts(ordered: np.ndarray) -> tuple[int, int]:
    """(mild, severe) of one run of finite values, given sorted: :func:`classify_runs`'s fences
    (the same arithmetic) and its counts, each from two binary searches instead of a pass."""
    size = ordered.size
    if size < 4:
        return 0, 0
    bounds = []
    for q in (0.25, 0.75):
        pos = q * (size - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, size - 1)
        bounds.append(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))
    q1, q3 = bounds
    iqr = q3 - q1
    if iqr == 0.0:  # one quantization step, as there
        gaps = np.diff(ordered)
        gaps = gaps[gaps > 0.0]
        iqr = gaps.min() if gaps.size else 0.0
        iqr = 0.0 if math.isinf(iqr) else iqr
    lo3, lo15, hi15, hi3 = q1 - 3.0 * iqr, q1 - 1.5 * iqr, q3 + 1.5 * iqr, q3 + 3.0 * iqr
    below = ordered.searchsorted([lo3, lo15], side="left")  # values < each
    above = size - ordered.searchsorted([hi15, hi3], side="right")  # values > each
    severe = int(below[0] + above[1])
    return int(below[1] + above[0]) - severe, severe  # (the outer fences lie beyond the inner ones)


def classify_runs(runs: list[np.ndarray], rule: str) -> tuple[int, int, int, list[np.ndarray]]:
    """(mild, severe, dropped, the runs after ``rule``) summed over ``runs``: :func:`classify` and
    :func:`keep_mask` of each run, computed row-wise on the runs of equal size (one numpy call per
    size, not a dozen per run; the same arithmetic, so the same counts)."""
    if rule not in RULES:
        raise ValueError(f"unknown outlier rule {rule!r} (choose from {', '.join(RULES)})")
    kept: list[np.ndarray] = list(runs)
    mild = severe = dropped = 0
    for size, indices in _by_size(runs, 4).items():
        block = np.stack([runs[i] for i in indices])
        finite = np.isfinite(block).all(axis=1)
        rows = np.flatnonzero(finite)
        for row in np.flatnonzero(~finite):  # NaN and infinities as the one-run functions treat them
            run = runs[indices[row]]
            counts = classify(run)
            mild, severe = mild + counts.mild, severe + counts.severe
            mask = keep_mask(run, rule)
            dropped += int(run.size - mask.sum())
            kept[indices[row]] = run[mask]
        if rows.size == 0:
            continue
        values = block[rows]
        ordered = np.sort(values, axis=1)
        bounds = []
        for q in (0.25, 0.75):
            pos = q * (size - 1)
            lo = int(math.floor(pos))
            hi = min(lo + 1, size - 1)
            bounds.append(ordered[:, lo] + (ordered[:, hi] - ordered[:, lo]) * (pos - lo))
        q1, q3 = bounds
        iqr = q3 - q1
        if (iqr == 0.0).any():  # one quantization step (smallest_gap): the smallest positive difference
            gaps = np.diff(ordered, axis=1)
            gaps[gaps <= 0.0] = np.inf
            smallest = gaps.min(axis=1)
            smallest[np.isinf(smallest)] = 0.0
            iqr = np.where(iqr == 0.0, smallest, iqr)
        lo3, lo15 = (q1 - 3.0 * iqr)[:, None], (q1 - 1.5 * iqr)[:, None]
        hi15, hi3 = (q3 + 1.5 * iqr)[:, None], (q3 + 3.0 * iqr)[:, None]
        outer = (values < lo3) | (values > hi3)
        outside = (values < lo15) | (values > hi15)
        severe += int(np.sum(outer))
        mild += int(np.sum(outside & ~outer))
        if rule == "none":
            continue
        if rule == "tukey":
            masks = ~outside
        else:
            masks = np.stack([keep_mask(row, rule) for row in values])
        for row, mask in zip(rows, masks):
            run = runs[indices[row]]
            left = int(mask.sum())
            if left != size:
                dropped += size - left
                kept[indices[row]] = run[mask]
    return mild, severe, dropped, kept
