"""Student's t distribution without scipy: ``history`` stays on the fast start-up path.

The two-sided tail is the regularized incomplete beta function
``I_{df/(df+t^2)}(df/2, 1/2)``, evaluated by its continued fraction (Lentz's
method, as in Numerical Recipes' ``betacf``); quantiles invert it by bisection.
``tests/test_history_stats.py`` checks both against ``scipy.stats.t``.
"""
from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (converges for x < (a+1)/(a+b+2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (df = inf: normal)."""
    if math.isnan(t):
        return 1.0
    if math.isinf(t):
        return 0.0
    if df > 1e7:
        return math.erfc(abs(t) / math.sqrt(2.0))
    return min(1.0, incomplete_beta(df / 2.0, 0.5, df / (df + t * t)))


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile (0.5 < probability < 1) of Student's t."""
    from statistics import NormalDist

    if df > 1e7:
        return NormalDist().inv_cdf(probability)
    tail = 2.0 * (1.0 - probability)
    low, high = 0.0, max(1.0, NormalDist().inv_cdf(probability))
    while t_two_sided_p(high, df) > tail:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_two_sided_p(middle, df) > tail:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2.0
