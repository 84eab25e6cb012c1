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
between distinct values (one quantization step).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RULES = ("none", "tukey", "mad")


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
    med = np.median(values)
    mad = np.median(np.abs(values - med))
    if mad == 0.0:
        mad = smallest_gap(values)
        if mad == 0.0:
            return np.ones(values.size, dtype=bool)
    return np.abs(0.6745 * (values - med) / mad) <= 3.5
