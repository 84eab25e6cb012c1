"""The comparison of centres, one function per estimand family.

Each returns a :class:`Result`: the relative change of the named estimand
(``model.ESTIMANDS``) in percent, its interval and p-value from one and the
same statistic (so the interval excludes 0 exactly when ``p < 1 -
confidence``), or, when the data cannot support an interval, ``cannot`` set
to the one-line reason and no numbers.  Methods and references:
``docs/statistics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from abstat.fastdataclass import dataclass

NAN = math.nan


@dataclass
class Result:
    estimand: str
    delta_pct: float
    ci: tuple[float, float]
    p_value: float
    method: str
    center: str
    unit: str
    cannot: str = ""  # why no interval can be given ("" when it can)
    pinned: bool = False  # a median sat on one grid value: it moves only in whole steps
    centres: tuple[float, float] | None = None  # each variant's centre of the estimand (data units)
    center_kind: str = ""  # what those centres are ("median", "pseudo-median", "geometric mean"...)


def _cannot(estimand: str, method: str, center: str, unit: str, why: str) -> Result:
    return Result(estimand, NAN, (NAN, NAN), NAN, method, center, unit, why)


def withheld(result: Result, why: str) -> Result:
    """``result`` with no estimate, interval or p-value: ``why`` says what kept them (its centres stay)."""
    found = _cannot(result.estimand, result.method, result.center, result.unit, why)
    found.centres, found.center_kind = result.centres, result.center_kind
    return found


def negative_baseline(what: str, reference: float) -> str:
    """Why a change relative to a baseline centre of 0 or below is not given: undefined at 0, and below it
    a percentage would change meaning with the sign."""
    if reference == 0.0:
        return f"the baseline {what} is 0, so a relative change is undefined"
    return f"the baseline {what} is negative ({reference:.6g}), so a relative change is undefined"


def to_pct(d: float, scale: str, reference: float) -> float:
    """A shift on the analysis scale as a change in percent."""
    if scale == "log":
        if d == -math.inf:
            return -100.0
        try:
            return 100.0 * math.expm1(d)
        except OverflowError:  # a ratio beyond 1e308
            return math.inf
    return 100.0 * d / abs(reference)


def relative_interval(
    reference: float, other: float, se_reference: float, se_other: float, q: float
) -> tuple[float, float] | None:
    """The interval, in percent, of ``(other - reference) / |reference|`` on
    the linear scale: Fieller's interval for ``other / reference`` (the
    uncertainty of the reference counts too), None when it is unbounded
    (the reference is not clearly away from 0).  At a ratio of 1 its
    condition is the test of ``other = reference``, so the interval holds 0
    exactly when that test is not significant."""
    from abstat.stats.ratio import fieller

    ratio, v1, v2 = other / reference, se_reference / reference, se_other / reference
    low, high = fieller(ratio, v1 * v1, v2 * v2, q)  # products overflow to inf, not an error
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    sign = 1.0 if reference > 0 else -1.0
    lo, hi = sorted((100.0 * (low - 1.0) * sign + 0.0, 100.0 * (high - 1.0) * sign + 0.0))
    return lo, hi


UNBOUNDED = (
    "the interval of the change is unbounded: the baseline {what} is not clearly away from 0 "
    "(too few samples or too much noise for a change relative to it)"
)


def _clamped(ci: tuple[float, float], nonnegative: bool) -> tuple[float, float]:
    """A quantity that cannot be negative cannot fall by more than 100%."""
    lo, hi = ci
    if nonnegative:
        lo, hi = max(lo, -100.0), max(hi, -100.0)
    return lo, hi


def _constant(
    estimand: str, center: str, unit: str, x: Any, y: Any, reference: float, scale: str, unit_text: str = ""
) -> Result:
    """Both variants constant, equal or not: the change is exact for these
    samples (0 when equal), but with no variation there is no noise to judge
    it by, so no interval (``cannot judge``, the change kept for information,
    no p-value: never a verdict without an interval).  Until wave 9 equal
    constants got the zero-width interval ``[0, 0]`` and "no difference
    proven", beside a "too few samples" footnote at 2 values: a certainty
    the data cannot give (issue 34).  O(1): no combinatorics of the sizes."""
    c0, c1 = float(x[0]), float(y[0])
    method = "both variants constant" + (f" ({unit_text})" if unit_text else "")
    if scale == "linear" and reference <= 0.0:
        return _cannot(estimand, method, center, unit, negative_baseline("centre", reference))
    delta = 0.0 if c0 == c1 else 100.0 * (c1 / c0 - 1.0) if scale == "log" else 100.0 * (c1 - c0) / abs(reference)
    why = (
        f"both variants are constant ({c0:.6g} against {c1:.6g}, {x.size} and {y.size} values): the change "
        "shown is exact for these samples, but with no variation there is no noise estimate to give "
        "an interval or a p-value by"
    )
    return Result(estimand, delta, (NAN, NAN), NAN, method, center, unit, why)


def means(
    n1: int,
    m1: float,
    s1: float,
    n2: int,
    m2: float,
    s2: float,
    confidence: float,
    method: str,
    unit: str,
    *,
    nonnegative: bool = False,
    constant: bool = False,
    reference: tuple[float, float, float] | None = None,
) -> Result:
    """``mean_ratio``: Welch's t and Fieller's interval (``reference``: a p-value and Welch's t's critical values
    below and above 0 in place of Student's t); the centres are the means whatever the outcome."""
    r = _mean_ratio(n1, m1, s1, n2, m2, s2, confidence, method, unit, nonnegative, constant, reference)
    r.centres, r.center_kind = (m1, m2), "mean"
    return r


def sample_means(
    x: Any,
    y: Any,
    confidence: float,
    inflate: Sequence[float],
    method: str,
    unit: str,
    single: float = math.nan,
    reference: tuple[float, float, float] | None = None,
) -> Result:
    """:func:`means` of two samples, each standard deviation widened by its serial-correlation factor
    (``single``: the standard deviation of a sample of one value; ``reference``: as :func:`means` takes it)."""
    import numpy as np

    sd = [float(v.std(ddof=1)) * math.sqrt(k) if v.size > 1 else single for v, k in zip((x, y), inflate, strict=True)]
    return means(
        x.size,
        float(x.mean()),
        sd[0],
        y.size,
        float(y.mean()),
        sd[1],
        confidence,
        method,
        unit,
        nonnegative=bool(np.all(x >= 0) and np.all(y >= 0)),
        constant=bool(x.min() == x.max() and y.min() == y.max()),
        reference=reference,
    )


def mean_difference(n1: int, m1: float, s1: float, n2: int, m2: float, s2: float, confidence: float) -> str:
    """The difference of the means with its Welch interval, as words ("" without an estimate of the noise)."""
    from abstat.stats.distributions import t_quantile
    from abstat.stats.ratio import welch_df

    a1, a2 = (s * s / n if n > 1 else math.nan for s, n in ((s1, n1), (s2, n2)))
    se = math.sqrt(a1 + a2)
    if not (math.isfinite(se) and se > 0.0):
        return ""
    q = t_quantile(welch_df(n1, a1, n2, a2), 0.5 + confidence / 2.0)
    d = m2 - m1
    return f"; the difference of the means is {d:+.4g} [{d - q * se:+.4g}, {d + q * se:+.4g}] ({confidence:.0%}, Welch's t)"


def _mean_ratio(
    n1: int,
    m1: float,
    s1: float,
    n2: int,
    m2: float,
    s2: float,
    confidence: float,
    method: str,
    unit: str,
    nonnegative: bool = False,
    constant: bool = False,
    reference: tuple[float, float, float] | None = None,
) -> Result:
    from abstat.stats.ratio import welch_ratio

    if m1 <= 0.0:
        why = negative_baseline("mean", m1) + mean_difference(n1, m1, s1, n2, m2, s2, confidence)
        return _cannot("mean_ratio", method, "mean", unit, why)
    if s1 == 0.0 and s2 == 0.0:
        if constant:
            import numpy as np

            return _constant("mean_ratio", "mean", unit, np.full(n1, m1), np.full(n2, m2), m1, "linear")
        return _cannot(
            "mean_ratio",
            method,
            "mean",
            unit,
            "neither variant varies, so there is no noise estimate to judge the change by",
        )
    r = welch_ratio(n1, m1, s1, n2, m2, s2, confidence, reference)
    if not math.isfinite(r.ratio):
        return _cannot(
            "mean_ratio", method, "mean", unit, "the ratio of the means is beyond the range of double precision"
        )
    if not (math.isfinite(r.low) and math.isfinite(r.high)):
        return _cannot(
            "mean_ratio",
            method,
            "mean",
            unit,
            "the interval of the ratio is unbounded: the baseline mean is not clearly away from 0 "
            "(too few samples or too much noise)",
        )
    sign = 1.0 if m1 > 0 else -1.0  # relative to the magnitude of the baseline
    lo, hi = sorted((100.0 * (r.low - 1.0) * sign + 0.0, 100.0 * (r.high - 1.0) * sign + 0.0))
    return Result(
        "mean_ratio",
        100.0 * (r.ratio - 1.0) * sign + 0.0,
        _clamped((lo, hi), nonnegative),
        r.p_value,
        method,
        "mean",
        unit,
        centres=(m1, m2),
        center_kind="mean",
    )


def _holding(delta: float, lo: float, hi: float) -> tuple[float, float]:
    """The interval ``(lo, hi)`` stretched to hold ``delta`` when rounding alone puts it outside (the ends
    and the estimate are computed by different float paths: 6.000000000000005 beside [6.000000000000024, 10],
    rev19); a real miss is left as it is."""
    slack = 1e-9 * max(1.0, abs(delta))
    return (delta if lo - slack <= delta < lo else lo), (delta if hi < delta <= hi + slack else hi)


def _log_ratio(a: float, b: float) -> float:
    """``log(a / b)`` of positive values, also where ``a / b`` under- or overflows (a subnormal median against
    1e11: the quotient is 0, its logarithm a domain error) as ``log a - log b``."""
    ratio = a / b
    return math.log(ratio) if 0.0 < ratio < math.inf else math.log(a) - math.log(b)


def medians(x: Any, y: Any, confidence: float, inflate: tuple[float, float] = (1.0, 1.0)) -> Result:
    """``median_ratio`` (positive data, on logarithms) or ``median_difference``:
    the Bonett-Price test of the medians (:mod:`abstat.stats.medians`); when
    either median is discrete or lies between two modes (checked per
    variant), the exact order-statistic intervals of both medians instead."""
    import numpy as np

    from abstat.stats.medians import median, median_shift, unreliable

    positive = bool(np.all(x > 0) and np.all(y > 0))
    estimand = "median_ratio" if positive else "median_difference"
    method = "Bonett-Price test of the medians" + (" (on log values)" if positive else "")
    ax, ay = (np.log(x), np.log(y)) if positive else (x, y)
    reference = median(x)
    centres = (reference, median(y))
    if x.min() == x.max() and y.min() == y.max():
        r = _constant(estimand, "median", "samples", x, y, reference, scale="log" if positive else "linear")
        r.centres, r.center_kind = centres, "median"
        return r
    if not positive and reference <= 0.0:
        return _cannot(estimand, method, "median", "samples", negative_baseline("median", reference))
    sx, sy = np.sort(ax), np.sort(ay)
    why = {name: unreliable(s) for name, s in (("baseline", sx), ("candidate", sy))}
    if any(why.values()):
        return _exact_medians(x, y, sx, sy, confidence, estimand, positive, why, centres)
    shift = median_shift(ax, ay, confidence, _log_ratio(centres[1], reference) if positive else None, inflate)
    if not shift.se > 0.0:
        return _cannot(
            estimand,
            method,
            "median",
            "samples",
            "neither variant varies, so there is no noise estimate to judge the change of the medians by",
        )
    scale = "log" if positive else "linear"
    if positive:
        ci = (to_pct(shift.low, scale, reference), to_pct(shift.high, scale, reference))
    else:
        from abstat.stats.distributions import ndtri, stdtrit

        level = 0.5 + confidence / 2.0
        q = ndtri(level) if math.isinf(shift.df) else stdtrit(shift.df, level)
        relative = relative_interval(reference, centres[1], shift.se_x, shift.se_y, q)
        if relative is None:
            return _cannot(estimand, method, "median", "samples", UNBOUNDED.format(what="median"))
        ci = relative
    nonnegative = bool(np.all(x >= 0) and np.all(y >= 0))
    return Result(
        estimand,
        to_pct(shift.estimate, scale, reference),
        _clamped(ci, nonnegative),
        shift.p_value,
        method,
        "median",
        "samples",
        pinned=shift.pinned,
        centres=centres,
        center_kind="median",
    )


def _exact_medians(
    x: Any,
    y: Any,
    sx: Any,
    sy: Any,
    confidence: float,
    estimand: str,
    positive: bool,
    why: dict[str, str],
    centres: tuple[float, float],
) -> Result:
    """Both medians' distribution-free intervals, at levels whose product is
    ``confidence`` (most of the miss to the smaller side), combined: the
    change lies between the ratios (or relative differences) of their ends.  Wider than Bonett-Price's, and valid on discrete data and
    between modes, where a normal interval is not."""
    from abstat.stats.medians import exact_medians

    reasons = "; ".join(
        f"the {side} median is {'on discrete values' if w == 'discrete' else 'between two modes'}"
        for side, w in why.items()
        if w
    )
    method = (
        f"order-statistic intervals of the medians combined ({reasons}; Bonett-Price's for the other)"
        if not all(why.values())
        else f"order-statistic intervals of both medians combined ({reasons})"
    )
    found = exact_medians(sx, sy, confidence, (bool(why["baseline"]), bool(why["candidate"])))
    if found.x is None or found.y is None:
        return _cannot(
            estimand,
            method,
            "median",
            "samples",
            "too few samples for distribution-free intervals of the medians at "
            f"{found.levels[0]:.2%} and {found.levels[1]:.2%} (together {100 * confidence:g}%)",
        )
    (xl, xh), (yl, yh) = found.x, found.y
    reference, other = centres
    if positive:  # on logarithms
        lo, hi = to_pct(yl - xh, "log", 1.0), to_pct(yh - xl, "log", 1.0)
        delta = to_pct(_log_ratio(other, reference), "log", 1.0)
    else:
        if xl <= 0.0 <= xh:
            return _cannot(estimand, method, "median", "samples", UNBOUNDED.format(what="median"))
        sign = 1.0 if reference > 0 else -1.0
        ratios = [b / a for a in (xl, xh) for b in (yl, yh)]
        lo, hi = sorted((100.0 * (min(ratios) - 1.0) * sign, 100.0 * (max(ratios) - 1.0) * sign))
        delta = 100.0 * (other - reference) / abs(reference)
    nonnegative = bool((x >= 0).all() and (y >= 0).all())
    lo, hi = _holding(delta, lo, hi)
    return Result(
        estimand,
        delta,
        _clamped((lo, hi), nonnegative),
        found.p_value,
        method,
        "median",
        "samples",
        pinned=any(w == "discrete" for w in why.values()),
        centres=centres,
        center_kind="median",
    )
