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

from abstat.fastdataclass import dataclass
from abstat.stats.distributions import stdtr, stdtrit


@dataclass(frozen=True)
class RatioTest:
    ratio: float
    low: float
    high: float
    p_value: float
    df: float
    method: str = "Welch t, Fieller interval"


def _square(value: float) -> float:
    return value * value  # inf rather than OverflowError


def welch_df(n1: int, a1: float, n2: int, a2: float) -> float:
    """Welch-Satterthwaite degrees of freedom from the squared standard errors
    ``a_i = s_i^2 / n_i``, computed from their shares so that neither
    underflows nor overflows (1e-130 squared twice is below the doubles)."""
    total = a1 + a2
    w1, w2 = a1 / total, a2 / total
    denominator = (w1 * w1 / (n1 - 1) if n1 > 1 else 0.0) + (w2 * w2 / (n2 - 1) if n2 > 1 else 0.0)
    return 1.0 / denominator if denominator > 0.0 else math.inf


def welch_p(n1: int, mean1: float, sd1: float, n2: int, mean2: float, sd2: float) -> tuple[float, float]:
    """Welch's two-sided p-value of equal means and its degrees of freedom (:func:`welch_ratio`'s: a
    caller that needs only the p-value is spared the t quantile of the interval)."""
    spread = max(sd1, sd2)
    if spread == 0.0:
        return 1.0 if mean1 == mean2 else 0.0, math.inf
    a1 = _square(sd1 / spread) / n1
    a2 = _square(sd2 / spread) / n2
    df = welch_df(n1, a1, n2, a2)
    t = (mean2 / spread - mean1 / spread) / math.sqrt(a1 + a2)
    return (min(1.0, 2.0 * stdtr(df, -abs(t))) if not math.isnan(t) else 1.0), df


def welch_ratio(
    n1: int,
    mean1: float,
    sd1: float,
    n2: int,
    mean2: float,
    sd2: float,
    confidence: float,
    reference: tuple[float, float, float] | None = None,
) -> RatioTest:
    """Welch's test of equal means and Fieller's interval for ``mean2 / mean1``; ``reference``: a p-value and
    the critical values of Welch's ``T`` below and above 0 in place of Student's t
    (:mod:`abstat.stats.mean_permutation`'s): the interval is then the ratios ``r`` whose ``T(r) = (mean2 - r
    mean1) / se(r)`` lies between them, Fieller's lower end at the upper value and upper end at the lower one.

    Everything is computed relative to the larger standard deviation and the
    baseline mean, so that data near the limits of double precision
    (1e-320 or 1e308) neither underflow nor overflow."""
    ratio = mean2 / mean1 if mean1 else math.nan
    p, df = welch_p(n1, mean1, sd1, n2, mean2, sd2)
    if reference is not None and max(sd1, sd2) > 0.0:
        p = reference[0]
    if max(sd1, sd2) == 0.0:
        return RatioTest(ratio, ratio, ratio, p, df)
    if not mean1:
        return RatioTest(ratio, -math.inf, math.inf, p, df)
    v1, v2 = _square(sd1 / mean1) / n1, _square(sd2 / mean1) / n2
    if reference is not None:
        if not reference[1] < 0.0 < reference[2]:
            return RatioTest(ratio, -math.inf, math.inf, p, df)
        low, high = fieller(ratio, v1, v2, reference[2])[0], fieller(ratio, v1, v2, -reference[1])[1]
        return RatioTest(ratio, low, high, p, df)
    low, high = fieller(ratio, v1, v2, stdtrit(df, 0.5 + confidence / 2.0))
    return RatioTest(ratio, low, high, p, df)


def fieller(ratio: float, v1: float, v2: float, q: float) -> tuple[float, float]:
    """Fieller's interval for ``m2 / m1`` given ``ratio = m2 / m1`` and the
    squared standard errors of ``m1`` and ``m2`` relative to ``m1`` (``v1 =
    se1^2 / m1^2``, ``v2 = se2^2 / m1^2``): the ratios ``r`` with ``(ratio -
    r)^2 <= q^2 (v2 + r^2 v1)``.  ``(-inf, inf)`` when that set is unbounded
    (``m1`` is not clearly away from 0)."""
    qa = 1.0 - q * q * v1
    qc = ratio * ratio - q * q * v2
    disc = ratio * ratio - qa * qc
    if qa <= 0.0 or disc < 0.0 or not math.isfinite(disc):
        return -math.inf, math.inf
    root = math.sqrt(disc)
    return (ratio - root) / qa, (ratio + root) / qa
