"""Recompute a printed ministat comparison from the printed vitals.

ministat (both dialects) computes, for data set ``c`` against the baseline
``b`` with the t value of its own table ``t = student[nb + nc - 2]``
(the infinity row beyond 100 degrees of freedom)::

    s  = sqrt(((nc-1) sc^2 + (nb-1) sb^2) / (nb + nc - 2))    pooled s
    d  = ac - ab                                              difference
    e  = t * s * sqrt(1/nc + 1/nb)                            half-width
    "Difference" when |d| > e, else "No difference proven"
    d * 100 / ab                                              relative difference
    classic: e * 100 / ab                                     relative half-width
    freebsd: t * sqrt(((nc-1) sc^2 + (nb-1) sb^2 ac^2/ab^2)
                      * (nb+nc) / (nb nc (nb+nc-2))) * 100 / ab

Only rounded vitals are printed, so each of ab, ac, sb, sc is an interval
(:mod:`abstat.audit.printed`).  Every quantity above is monotone in each of
the four inputs over such a box (as long as no average interval contains 0),
so its exact range is spanned by the 16 corners.  A printed line is
consistent when its own rounding interval meets that range.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from abstat.audit.printed import Printed, format_g
from abstat.audit.scan import DataSet, PrintedComparison

DIALECTS = ("classic", "freebsd")
_SLACK = 1e-12  # relative: double rounding inside the reference's arithmetic


def _quantities(nb: int, nc: int, confidence: float, ab: float, ac: float, sb: float, sc: float) -> dict[str, float]:
    """Every printed quantity for one set of vitals (ministat's arithmetic,
    :func:`abstat.stats.student.pooled_t`); no relative ones when ab is 0."""
    from abstat.stats.student import pooled_t

    r = pooled_t(nb, ab, sb, nc, ac, sc, confidence)
    out = {
        "difference": r.difference,
        "half_width": r.half_width,
        "pooled_s": r.pooled_sd,
        "margin": abs(r.difference) - r.half_width,
    }
    if ab != 0.0:
        out["percent"] = r.relative_pct
        out["percent_half_width_classic"] = r.relative_half_width_pct
        out["percent_half_width_freebsd"] = r.relative_half_width_pct_freebsd
    return out


@dataclass
class LineCheck:
    field: str
    line: int
    printed: str
    low: float
    high: float
    ok: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "field": self.field,
            "line": self.line,
            "printed": self.printed,
            "recomputed_range": [self.low, self.high],
            "ok": self.ok,
        }


@dataclass
class Recomputation:
    """What the printed vitals imply, and which printed lines agree."""

    t: float
    df: int
    confidence: float
    central: dict[str, float]
    ranges: dict[str, tuple[float, float]]
    verdict_possible: dict[str, bool]  # "difference" / "no difference" -> reachable
    checks: list[LineCheck] = field(default_factory=list)
    dialects: list[str] = field(default_factory=list)  # dialects whose relative interval fits
    consistent: bool | None = None
    reasons: list[str] = field(default_factory=list)
    spread_known: bool = True  # False: a printed stddev is nan
    overflow: bool = False  # the difference, half-width or pooled s is not finite: nothing recomputed

    def to_dict(self) -> dict[str, object]:
        central = self.central
        ranges = {key: list(value) for key, value in self.ranges.items()}
        out: dict[str, object] = {
            "t": self.t,
            "df": self.df,
            "confidence": self.confidence,
            "verdict": "difference" if central["margin"] > 0 else "no difference proven",
            "difference": central["difference"],
            "half_width": central["half_width"],
            "pooled_s": central["pooled_s"],
            "percent": central.get("percent"),
            "percent_half_width": {
                "classic": central.get("percent_half_width_classic"),
                "freebsd": central.get("percent_half_width_freebsd"),
            },
            "ranges": ranges,
            "checks": [check.to_dict() for check in self.checks],
        }
        if not self.spread_known:  # a stddev printed as nan: nothing spread-based is known
            out.update(
                verdict=None, half_width=None, pooled_s=None, percent_half_width={"classic": None, "freebsd": None}
            )
            out["ranges"] = {k: v for k, v in ranges.items() if k in ("difference", "percent")}
        return out


def _widen(low: float, high: float) -> tuple[float, float]:
    slack = _SLACK * max(abs(low), abs(high))
    return low - slack, high + slack


def _spread_box(value: Printed) -> tuple[float, float]:
    if math.isnan(value.value):
        return (0.0, 0.0)
    return (max(0.0, value.low), value.high)


def _spread_value(value: Printed) -> float:
    return 0.0 if math.isnan(value.value) else value.value


def recompute(base: DataSet, cand: DataSet, confidence: float) -> Recomputation:
    """Ranges of every printed quantity over the vitals' rounding box."""
    from abstat.stats.student import t_critical

    nb, nc = base.n, cand.n
    df = nb + nc - 2
    t = float(t_critical(df, confidence))
    boxes = [
        (base.avg.low, base.avg.high),
        (cand.avg.low, cand.avg.high),
        _spread_box(base.stddev),
        _spread_box(cand.stddev),
    ]
    central = _quantities(
        nb, nc, confidence, base.avg.value, cand.avg.value, *(_spread_value(p) for p in (base.stddev, cand.stddev))
    )
    corners = [_quantities(nb, nc, confidence, *corner) for corner in itertools.product(*boxes)]
    ranges = _ranges(central, corners)
    return Recomputation(
        t=t, df=df, confidence=confidence, central=central, ranges=ranges, verdict_possible=_verdicts_possible(ranges)
    )


def _ranges(central: dict[str, float], corners: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Each quantity's range over the corners of the rounding box (those every corner has), widened."""
    ranges: dict[str, tuple[float, float]] = {}
    for key in central:
        values = [corner[key] for corner in corners if key in corner]
        if len(values) == len(corners):
            ranges[key] = _widen(min(values), max(values))
    return ranges


def _verdicts_possible(ranges: dict[str, tuple[float, float]]) -> dict[str, bool]:
    """Which verdicts some point of the box gives: |d| - e, where d depends on the averages only and e on
    the spreads only."""
    d_low, d_high = ranges["difference"]
    abs_d_max = max(abs(d_low), abs(d_high))
    abs_d_min = 0.0 if d_low <= 0.0 <= d_high else min(abs(d_low), abs(d_high))
    e_low, e_high = ranges["half_width"]
    return {"difference": abs_d_max > e_low, "no difference": abs_d_min <= e_high}


def check(base: DataSet, cand: DataSet, comparison: PrintedComparison) -> Recomputation:
    """Check every printed line of ``comparison`` against the recomputation."""
    result = recompute(base, cand, comparison.confidence)
    nan_spread = math.isnan(base.stddev.value) or math.isnan(cand.stddev.value)
    overflow = not all(math.isfinite(result.central[key]) for key in ("difference", "half_width", "pooled_s"))
    if nan_spread:
        _note_nan_spread(result, any(_squares_overflow(side) for side in (base, cand)))
    if overflow:  # nothing to check a printed line against (an inf or nan is no range): not checkable
        result.spread_known, result.overflow = False, True
        result.reasons.append(
            "the vitals overflow double precision (the difference, half-width or pooled s is not finite): "
            "the comparison's lines cannot be recomputed"
        )
        return result
    if base.avg.low <= 0.0 <= base.avg.high:
        result.reasons.append("the baseline average is 0: no relative interval")
    _check_verdict(result, comparison, nan_spread)
    if comparison.difference_proven:
        _check_difference(result, comparison, nan_spread)
    _settle(result, comparison)
    return result


def _check_difference(result: Recomputation, comparison: PrintedComparison, nan_spread: bool) -> None:
    """The lines of a "Difference at": the difference, percent and pooled s, and the relative half-width
    (which tells the dialect) when a spread and a relative interval can be recomputed."""
    _check_difference_lines(result, comparison, nan_spread)
    relative = comparison.percent_half_width
    if relative is not None and "percent_half_width_classic" in result.ranges and not nan_spread:
        _check_relative(result, comparison, relative)


def _squares_overflow(ds: DataSet) -> bool:
    """Whether ministat's sums overflow on this data set: an Avg of inf, or values whose squares exceed the
    largest double (beyond 1.34e154)."""
    return math.isinf(ds.avg.value) or max(abs(ds.min.value), abs(ds.max.value)) > 1.34e154


def _note_nan_spread(result: Recomputation, overflow: bool) -> None:
    """A stddev printed as nan: only the lines that depend on the averages alone can be checked."""
    result.spread_known = False
    # Classic ministat's one-pass variance of (nearly) constant data can
    # come out as a tiny negative number: its sqrt prints as -nan, while
    # the comparison goes on with the negative variance.  Only the lines
    # that depend on the averages alone can be checked; the nan itself
    # is a fingerprint of the classic dialect (FreeBSD uses two passes).
    # Values whose sum overflows (an Avg of inf) give inf - inf there: nan too.
    why = (
        "its sums overflowed double precision: an Avg of inf, or squares of values beyond 1.34e154"
        if overflow
        else "classic ministat's one-pass variance came out negative"
    )
    result.reasons.append(
        f"a printed stddev is nan ({why}): the half-width, relative half-width and pooled s cannot be recomputed"
    )
    result.dialects.append("classic")


def _settle(result: Recomputation, comparison: PrintedComparison) -> None:
    """Consistent when every line checked fits; undecided (None) when the fitting comparison is incomplete."""
    complete = _complete(comparison)
    if all(c.ok for c in result.checks):
        result.consistent = True if complete else None
        if not complete:
            result.reasons.append("some comparison lines are damaged or missing: the rest is consistent")
    else:
        result.consistent = False


def _complete(comparison: PrintedComparison) -> bool:
    """No line of the comparison damaged or missing (a "Difference at" has its three lines)."""
    return comparison.complete and (
        not comparison.difference_proven
        or all(getattr(comparison, key) is not None for key in ("difference", "percent", "pooled_s"))
    )


def _check_verdict(result: Recomputation, comparison: PrintedComparison, nan_spread: bool) -> None:
    """Whether some vitals that round to the printed ones give the printed verdict."""
    verdict = "difference" if comparison.difference_proven else "no difference"
    verdict_ok = nan_spread or result.verdict_possible[verdict]
    result.checks.append(
        LineCheck(
            "verdict",
            comparison.line,
            "Difference" if comparison.difference_proven else "No difference proven",
            result.ranges["margin"][0],
            result.ranges["margin"][1],
            verdict_ok,
        )
    )
    if verdict_ok:
        return
    if comparison.difference_proven:
        result.reasons.append(
            f"printed 'Difference at {comparison.confidence:.1f}% confidence', but |difference| "
            f"{format_g(abs(result.central['difference']))} does not exceed the half-width "
            f"{format_g(result.central['half_width'])} for any vitals that round to the printed ones"
        )
    else:
        result.reasons.append(
            f"printed 'No difference proven', but |difference| {format_g(abs(result.central['difference']))} "
            f"exceeds the half-width {format_g(result.central['half_width'])} for all vitals that round to the printed ones"
        )


def _check_difference_lines(result: Recomputation, comparison: PrintedComparison, nan_spread: bool) -> None:
    """The printed difference, half-width, percent and pooled s, each against its recomputed range."""
    for name in ("difference", "half_width", "percent", "pooled_s"):
        value: Printed | None = getattr(comparison, name)
        if value is None or name not in result.ranges or (nan_spread and name in ("half_width", "pooled_s")):
            continue
        low, high = result.ranges[name]
        ok = value.contains(low, high)
        result.checks.append(LineCheck(name, comparison.lines.get(name, comparison.line), value.text, low, high, ok))
        if not ok:
            result.reasons.append(
                f"printed {name.replace('_', ' ')} {value.text} but the vitals give "
                f"{format_g(result.central[name])} (any value in [{format_g(low, 9)}, {format_g(high, 9)}] would print)"
            )


def _check_relative(result: Recomputation, comparison: PrintedComparison, relative: Printed) -> None:
    """The printed relative half-width: the dialects (classic e/avg, freebsd) whose range holds it."""
    for dialect in DIALECTS:
        low, high = result.ranges[f"percent_half_width_{dialect}"]
        if relative.contains(low, high):
            result.dialects.append(dialect)
    both = [result.ranges[f"percent_half_width_{d}"] for d in DIALECTS]
    ok = bool(result.dialects)
    result.checks.append(
        LineCheck(
            "percent_half_width",
            comparison.lines.get("percent_half_width", comparison.line),
            relative.text,
            min(r[0] for r in both),
            max(r[1] for r in both),
            ok,
        )
    )
    if not ok:
        result.reasons.append(
            f"printed relative half-width {relative.text}% fits neither dialect: classic (e/avg) gives "
            f"{format_g(result.central['percent_half_width_classic'])}%, freebsd gives "
            f"{format_g(result.central['percent_half_width_freebsd'])}%"
        )
