"""The one decision rule of a change point, and the size, interval and p-value it reports.

A change at ``k`` is judged on the revisions around it (at most ``changepoints.SIZE_WINDOW`` each side, never
past its neighbouring change points) by one weighted least-squares model: a level, a common slope
(when both sides have ``SIZE_SLOPE_SIDE`` revisions and the slope's t exceeds ``SLOPE_T``) and a
step at ``k``.  The slope guards against a drift read as a step, but it costs power: on a symmetric
window a step and a slope are correlated 0.87, so the slope multiplies the step's variance by 4
(single-value series lost a third of their recall to it); windows without a sign of a slope leave it
out.  Real series wander: their level moves slowly, so residuals about a level and a step are
serially correlated and the plain standard error is too small (day-to-day levels drifting +-4% in
2.3% noise were cut into pieces, each at p 1e-4 to 1e-11).  The model allows for it: when the residuals' lag-1
autocorrelation r exceeds ``WANDER_GATE / sqrt(m)`` (m revisions), the step's variance is
multiplied by ``(1 + r) / (1 - r)``, the variance of a mean under an AR(1) wander.

From that one fit come the p-value (its t test) and the interval: the location is chosen, not
known, so the interval is the projection of the joint likelihood-ratio region of location and size
(``JOINT``): every location whose deficit ``g`` (the best split's gain minus its own) is within the
bound ``2 F(2, df)`` at the confidence level (5.99 at 95% for large df) contributes its estimate
+- ``se sqrt(bound - g)``.  The union of 95% t intervals over the locations a 95% test keeps
(``JOINT = False``, the rule before) covered 0.89-0.91 on quantized and spiky series: it spends
95% on the location and 95% on the size, and the chosen split's own estimate is selected.
A change is reported only when the p-value is at most ``max_pvalue`` and the interval excludes
0, so a reported change's interval never includes 0.  Below the practical floor (``min_change``,
a fraction of the level before) it is listed as small, not alerted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from abstat.history.segment import Sums, location_deficits
from abstat.history.wander import RHO_CAP, chosen_rho, whiten

SIZE_SLOPE_SIDE = 10  # the model has a common slope when both sides have this many revisions
JOINT = True  # the interval is the projection of the joint likelihood-ratio region of location and size
LOCATION_LEVEL = 3.84  # (JOINT False) the interval spans the locations whose gain is within this of the best's
WANDER_GATE = 2.0  # residual lag-1 r above this / sqrt(m) widens the step's variance
AR1_FIT = True  # a wandering level: the model refitted by GLS under AR(1) errors (False: its variance
#                         widened by (1 + r) / (1 - r), the rule before; lost run_log's steps, docs/history.md)
RAMPS = (1, 4)  # under AR(1) errors the step may be a ramp of these widths (revisions; (1,): a step)
RAMP_RHO = 0.5  # ... when the AR(1) fit's rho is at least this (the series' floor or the window's r)
SLOPE_T = 0.0  # the slope is in the model when its t exceeds this (0: always).  0.5 (in ~60% of flat
#                         windows) found 0.06-0.15 more recall but cut the interval's coverage to 0.80-0.91:
#                         `python benchmarks/changepoints.py --series 100 --seed 2 --set decide.SLOPE_T=0.5
#                         --set decide.SIZE_SLOPE_SIDE=20` (docs/history.md).  Coverage was kept.


@dataclass
class Judgement:
    diff: float  # the step, working scale
    low: float  # its interval
    high: float
    p_value: float
    wander: bool = False  # fitted under AR(1) errors (serially correlated residuals)

    def stands(self, max_pvalue: float) -> bool:
        return self.p_value <= max_pvalue and (self.low > 0.0 or self.high < 0.0)


def _lag1(r: np.ndarray, k: int) -> float:
    """Lag-1 autocorrelation of residuals ``r``, not across the step at ``k``."""
    bottom = float(np.dot(r, r))
    if bottom <= 0 or r.size < 4:
        return 0.0
    top = float(np.dot(r[1:k], r[: k - 1]) + np.dot(r[k + 1 :], r[k:-1]))
    return top / bottom


def _design(
    x: np.ndarray, w: np.ndarray, k: int, slope: bool, others: tuple[int, ...], width: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted rows of a level (a slope), steps at ``others`` and a step at ``k`` (last; with
    ``width``, a ramp from ``k`` reaching its full size ``width`` revisions on), and of ``x``."""
    n = x.size
    index = np.arange(n, dtype=float)
    columns = [np.ones(n), *((index >= o).astype(float) for o in others), np.clip((index - k + 1) / width, 0, 1)]
    if slope:
        columns.insert(1, index / max(n - 1, 1) * 2.0 - 1.0)
    root = np.sqrt(w)
    return np.column_stack(columns) * root[:, None], x * root


def _fit(
    x: np.ndarray, w: np.ndarray, k: int, slope: bool, others: tuple[int, ...] = (), rho: float = 0.0, width: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Weighted least squares of a level (a slope), steps at ``others`` and a step at ``k`` (the last
    coefficient): (coef, inverse, residuals, df); with ``rho``, generalised least squares under AR(1)
    errors of that lag-1 correlation (Prais-Winsten; one more parameter in df)."""
    design, y = _design(x, w, k, slope, others, width)
    if rho:
        design, y = whiten(design, rho), whiten(y, rho)
    inverse = np.linalg.inv(design.T @ design)
    coef = inverse @ (design.T @ y)
    return coef, inverse, y - design @ coef, x.size - design.shape[1] - (1 if rho else 0)


def step_fit(sums: Sums, a: int, k: int, b: int, others: tuple[int, ...] = ()) -> tuple[float, float, int]:
    """The step at ``k`` on [a, b), with steps at ``others`` (neighbouring changes inside [a, b))
    in the model too: (step, its standard error allowing for wander, df).  A common slope is in
    the model when both sides have ``SIZE_SLOPE_SIDE`` revisions (a drift biases a difference
    of levels; a short side leaves it out)."""
    diff, se, df, _ = step_model(sums, a, k, b, others)
    return diff, se, df


def step_model(
    sums: Sums, a: int, k: int, b: int, others: tuple[int, ...] = (), slope: bool = True
) -> tuple[float, float, int, float | None]:
    """:func:`step_fit` and, when the fit is under AR(1) errors, its -2 log profile likelihood (else None)."""
    x, w = sums.x[a:b], sums.weight[a:b]
    n, at = b - a, k - a
    inner = tuple(o - a for o in others)
    if n - 2 - len(inner) <= 0:
        return (float(x[at:].mean() - x[:at].mean()) if 0 < at < n else 0.0), math.inf, 0, None
    try:
        coef, inverse, residual, df = _fit(x, w, at, False, inner)
        if slope and min(at, n - at) >= SIZE_SLOPE_SIDE and n > 3 + len(inner):
            c2, i2, r2, df2 = _fit(x, w, at, True, inner)
            sse2 = float(r2 @ r2)
            if df2 > 0 and sse2 > 0 and abs(c2[1]) > SLOPE_T * math.sqrt(sse2 / df2 * float(i2[1, 1])):
                coef, inverse, residual, df = c2, i2, r2, df2
    except np.linalg.LinAlgError:
        return 0.0, math.inf, n - 2, None
    rho = _lag1(residual, at)
    if rho <= WANDER_GATE / math.sqrt(n):
        rho = 0.0
    elif AR1_FIT:
        return _ar1_step(x, w, at, inverse.shape[0] > 2 + len(inner), inner, min(max(rho, sums.rho_floor), RHO_CAP))
    sse = max(0.0, float(residual @ residual))
    variance = sse / df * float(inverse[-1, -1])
    if rho:
        rho = min(rho, RHO_CAP)
        variance *= (1.0 + rho) / (1.0 - rho)
    return float(coef[-1]), math.sqrt(variance), df, None


def ramps(rho: float) -> tuple[int, ...]:
    """The widths a step under AR(1) errors of lag-1 correlation at least ``rho`` may take: ``RAMPS`` when
    ``rho`` is at least ``RAMP_RHO`` (whitening then turns a ramp into several moves, not one), else a step."""
    return RAMPS if rho >= RAMP_RHO else (1,)


def _ar1_step(
    x: np.ndarray, w: np.ndarray, at: int, slope: bool, inner: tuple[int, ...], rho: float
) -> tuple[float, float, int, float | None]:
    """The same model refitted by generalised least squares under AR(1) errors, their lag-1 correlation
    at least ``rho`` (:func:`abstat.history.wander.chosen_rho`): (step, its standard error, df, -2 log
    profile likelihood).  With ``RAMPS``, the step may be a ramp of each of those widths (the widest
    profile likelihood's), its p-value then Bonferroni-adjusted by inflating the error."""
    best: tuple[float, float, int, float | None] = (0.0, math.inf, x.size - 2, None)
    widths = [r for r in ramps(rho) if r == 1 or at + r <= x.size - 2]
    for width in widths:
        try:
            chosen = chosen_rho(*_design(x, w, at, slope, inner, width), rho)
            coef, inverse, residual, df = _fit(x, w, at, slope, inner, chosen, width)
        except np.linalg.LinAlgError:
            continue
        sse = max(0.0, float(residual @ residual))
        score = x.size * math.log(max(sse, 1e-300) / x.size) - math.log(1.0 - chosen * chosen)
        se = math.sqrt(sse / df * float(inverse[-1, -1])) if df > 0 else math.inf
        if best[3] is None or score < best[3]:
            best = (float(coef[-1]), se, max(df, 0), score)
    if len(widths) > 1 and best[2] > 0 and math.isfinite(best[1]) and best[1] > 0:
        best = (best[0], _bonferroni_se(best[0], best[1], best[2], len(widths)), best[2], best[3])
    return best


def _bonferroni_se(diff: float, se: float, df: int, tried: int) -> float:
    """The standard error whose t test of ``diff`` gives the p-value of ``se``'s times ``tried``."""
    from abstat.stats.distributions import stdtr, stdtrit

    p = min(1.0, tried * 2.0 * stdtr(df, -abs(diff) / se))
    t = stdtrit(df, 1.0 - p / 2.0) if p < 1.0 else 0.0
    return abs(diff) / t if t > 0 else math.inf


def judge(
    sums: Sums,
    a: int,
    k: int,
    b: int,
    m: int,
    confidence: float,
    wide: tuple[int, int, tuple[int, ...]] | None = None,
    slope: bool = True,
) -> Judgement:
    """The change at ``k`` judged on [a, b) (see the module's text); with ``wide`` = (wa, wb,
    others), the model is fitted on [wa, wb) with steps at ``others`` too (a short side extended
    past its neighbouring change), the locations still those [a, b) does not rule out."""
    from abstat.stats.distributions import stdtr, stdtrit

    fa, fb, others = wide if wide is not None else (a, b, ())

    def one(position: int) -> tuple[float, float, int, float | None]:
        return step_model(sums, fa, position, fb, tuple(o for o in others if o != position), slope)

    def bounds(diff: float, se: float, df: int, deficit: float) -> tuple[float, float]:
        if df <= 0 or not math.isfinite(se):
            return -math.inf, math.inf
        if JOINT:  # the joint region's slice at this location: its deficit leaves less for the size
            half = se * math.sqrt(max(joint_level(df, confidence) - deficit, 0.0))
        else:
            half = se * stdtrit(df, 0.5 + confidence / 2.0)
        return diff - half, diff + half

    diff, se, df, score = one(k)
    if df <= 0 or not math.isfinite(se):
        return Judgement(diff, -math.inf, math.inf, 1.0, score is not None)
    if se <= 1e-12 * (abs(diff) + 1e-300):
        return Judgement(diff, diff, diff, 0.0 if diff else 1.0, score is not None)
    low, high = bounds(diff, se, df, 0.0)
    level = joint_level(max(fb - fa - 3, 1), confidence) if JOINT else LOCATION_LEVEL
    for other, gain_deficit in location_deficits(sums, a, k, b, m, level) if level else ():
        o_diff, o_se, o_df, o_score = one(other)
        deficit = gain_deficit
        # under AR(1) errors a location is ruled out by the fit's own likelihood ratio (the gains
        # assume independent errors: with a wandering level they keep locations the abrupt move rules out)
        if score is not None and o_score is not None:
            if o_score - score > level:
                continue
            deficit = max(o_score - score, 0.0)
        o_low, o_high = bounds(o_diff, o_se, o_df, deficit)
        low, high = min(low, o_low), max(high, o_high)
    return Judgement(diff, low, high, min(1.0, 2.0 * stdtr(df, -abs(diff) / se)), score is not None)


def joint_level(df: int, confidence: float) -> float:
    """The likelihood-ratio bound of a joint ``confidence`` region for a step's location and size, in
    units of the residual variance: 2 F(2, df) at ``confidence``, ``df (alpha^(-2/df) - 1)`` (chi-square
    with 2 degrees of freedom, 5.99 at 95%, when ``df`` is large)."""
    return df * ((1.0 - confidence) ** (-2.0 / max(df, 1)) - 1.0)


def level_interval(sums: Sums, a: int, k: int, b: int, confidence: float) -> tuple[float, float]:
    """The ``confidence`` interval of the level before a change at ``k`` (working scale): the weighted mean of
    [a, k), a t interval from its residuals, its variance times ``(1 + r) / (1 - r)`` when the residuals about the
    two levels of [a, b) are serially correlated (a wandering level; r at least the series' floor, at most
    ``RHO_CAP``).  A change relative to a level this interval does not keep clear of 0 is undefined (Fieller's
    interval of a ratio is unbounded then: ``comparison.analyses.relative_interval``)."""
    from abstat.stats.distributions import stdtrit

    weight, total, squares = (float(v) for v in sums.window(a, k))
    level, df = total / weight, k - a - 1
    if df <= 0:
        return -math.inf, math.inf
    rho = min(max(sums.serial_rho(a, k, b, WANDER_GATE), sums.rho_floor), RHO_CAP)
    variance = max(0.0, squares - total * level) / df / weight * (1.0 + rho) / (1.0 - rho)
    half = math.sqrt(variance) * stdtrit(df, 0.5 + confidence / 2.0)
    return level - half, level + half
