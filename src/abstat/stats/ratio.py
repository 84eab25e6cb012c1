"""Ratio of two means: Welch's t test with Fieller's interval.

For ``--center mean`` (and for summary-statistics inputs) abstat reports the
ratio ``mean_candidate / mean_baseline``.  The p-value is Welch's unequal-
variances t test of equal means (Welch 1947), the interval for the ratio is
Fieller's (Fieller 1954, "Some problems in interval estimation", JRSS B 16):
the set of ratios ``r`` with ``(m2 - r m1)^2 <= t^2 (v2/n2 + r^2 v1/n1)``,
``t`` the Student quantile at Welch's degrees of freedom.  At ``r = 1`` the
condition is exactly Welch's test, so the interval excludes 1 precisely when
the p-value is below ``1 - confidence``.  Unlike ``difference / baseline``
(what ministat prints) it accounts for the uncertainty of the baseline mean;
when the baseline mean itself is not significantly different from zero the
interval is unbounded and reported as such.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special


@dataclass(frozen=True)
class RatioTest:
    ratio: float
    low: float
    high: float
    p_value: float
    df: float
    method: str = "Welch t, Fieller interval"


def welch_ratio(
    n1: int, mean1: float, sd1: float, n2: int, mean2: float, sd2: float, confidence: float
) -> RatioTest:
    a1 = sd1 * sd1 / n1
    a2 = sd2 * sd2 / n2
    se = math.sqrt(a1 + a2)
    if se == 0.0:
        equal = mean1 == mean2
        ratio = mean2 / mean1 if mean1 else math.nan
        return RatioTest(ratio, ratio, ratio, 1.0 if equal else 0.0, math.inf)
    df = (a1 + a2) ** 2 / (
        (a1 * a1 / (n1 - 1) if n1 > 1 else 0.0) + (a2 * a2 / (n2 - 1) if n2 > 1 else 0.0)
    )
    t = (mean2 - mean1) / se
    p = float(2.0 * special.stdtr(df, -abs(t)))
    q = float(special.stdtrit(df, 0.5 + confidence / 2.0))
    ratio = mean2 / mean1 if mean1 else math.nan
    qa = mean1 * mean1 - q * q * a1
    qb = mean1 * mean2
    qc = mean2 * mean2 - q * q * a2
    disc = qb * qb - qa * qc
    if qa <= 0.0 or disc < 0.0:
        return RatioTest(ratio, -math.inf, math.inf, p, df)
    root = math.sqrt(disc)
    return RatioTest(ratio, (qb - root) / qa, (qb + root) / qa, p, df)
