"""Re-judge a printed comparison from its summaries (n, mean, stddev).

ministat's verdict is Student's t with a pooled variance.  From the same
three numbers per side we can also say:

* Welch's t (no equal-variance assumption; Welch 1947) and its interval;
* whether the spreads differ so much that the pooled t misleads: the pooled
  standard error differs from Welch's when the spreads *and* the sample
  sizes differ (with equal n the two standard errors are identical);
* the smallest change these sample sizes could have detected with 80 %
  power, and how many samples per side would confirm the observed change
  with 80 % power (:mod:`abstat.stats.power`);
* whether the change lies inside a practical threshold (``--threshold``).

The t distribution comes from :mod:`abstat.stats.distributions` (plain
Python, checked against scipy in its tests): importing scipy cost audit
about 1.5 s of start-up for two p-values and one quantile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from abstat.audit.findings import Finding
from abstat.comparison.analyses import negative_baseline, relative_interval
from abstat.stats import power as power_mod

POWER = 0.8
SPREAD_RATIO_NOTE = 2.0  # larger/smaller stddev worth mentioning
SE_DISTORTION = 0.10  # pooled vs Welch standard error: > 10 % off misleads


def _pct(value: float) -> str:
    return f"{value:+.3g}%"


def _pval(p: float) -> str:
    return f"= {p:.2g}" if p >= 1e-4 else "< 0.0001"


def _two_sided(stdtr: object, df: float, t: float) -> float:
    """The two-sided p-value of Student's t (as scipy's ttest_ind_from_stats gives it)."""
    if math.isnan(t):
        return math.nan
    return min(1.0, 2.0 * stdtr(df, -abs(t)))  # type: ignore[operator]


def _relative_ci(ab: float, sb: float, nb: int, ac: float, sc: float, nc: int, q: float) -> list[float] | None:
    """Fieller's interval of the change relative to the baseline mean, whose
    own uncertainty counts (docs/statistics.md); None when it is unbounded."""
    if ab == 0.0:
        return None
    interval = relative_interval(ab, ac, sb / math.sqrt(nb), sc / math.sqrt(nc), q)
    return list(interval) if interval else None


@dataclass
class Judgement:
    confidence: float
    difference: float
    percent: float | None
    welch: dict[str, float | list[float] | None] = field(default_factory=dict)
    pooled: dict[str, float] = field(default_factory=dict)
    spread_ratio: float | None = None
    se_ratio: float | None = None
    detectable_change: float | None = None
    detectable_change_pct: float | None = None
    samples_per_side: int | None = None
    threshold_pct: float | None = None
    threshold_verdict: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "confidence": self.confidence,
            "power": POWER,
            "difference": self.difference,
            "percent": self.percent,
            "welch": self.welch,
            "pooled": self.pooled,
            "spread_ratio": self.spread_ratio,
            "se_ratio_pooled_to_welch": self.se_ratio,
            "detectable_change": self.detectable_change,
            "detectable_change_pct": self.detectable_change_pct,
            "samples_per_side_for_change": self.samples_per_side,
            "threshold_pct": self.threshold_pct,
            "threshold_verdict": self.threshold_verdict,
        }


def judge(
    nb: int,
    ab: float,
    sb: float,
    nc: int,
    ac: float,
    sc: float,
    *,
    confidence: float = 95.0,
    printed_difference: bool | None = None,
    threshold_pct: float | None = None,
    varied: bool = False,
) -> Judgement:
    """Re-judge candidate (nc, ac, sc) against baseline (nb, ab, sb); ``varied``: a side's values are known to
    differ (its printed Min below its Max), so stddevs of 0 are rounding, not constant values."""
    alpha = 1.0 - confidence / 100.0
    d = ac - ab
    percent = d * 100.0 / ab if ab > 0.0 else None  # relative to a baseline at or below 0: undefined
    result = Judgement(confidence=confidence, difference=d, percent=percent, threshold_pct=threshold_pct)
    if not _judgeable(result.findings, nb, ab, sb, nc, ac, sc):
        return result
    se_welch, sp, se_pooled = _standard_errors(nb, sb, nc, sc)
    if se_welch == 0.0:
        result.findings.append(_no_spread(varied))
        return result
    half = _t_tests(result, nb, ab, sb, nc, ac, sc, alpha, se_pooled, sp)
    _welch_disagreement(result.findings, printed_difference, abs(d) > half, confidence)
    _spreads(result, nb, sb, nc, sc, se_pooled / se_welch)
    _power(result, nb, ab, sb, nc, sc, alpha)
    if printed_difference is False and percent is not None:
        _underpowered(result)
    ci_pct = result.welch.get("ci_pct")
    if threshold_pct is not None and isinstance(ci_pct, list) and ci_pct:
        _threshold(result, ci_pct, threshold_pct)
    elif threshold_pct is not None:
        result.findings.append(
            Finding(
                "threshold_undefined",
                "warning",
                f"no verdict on the threshold of +/-{abs(threshold_pct):g}%: it is relative to the baseline mean, "
                "and a change relative to it is undefined here",
            )
        )
    return result


def _undefined(ab: float) -> str:
    """Why a change relative to the baseline mean ``ab`` is not given, as compare says it (a mean above 0 whose
    relative interval is unbounded: not clearly away from 0)."""
    if ab <= 0.0:
        return negative_baseline("mean", ab)
    return f"the baseline mean ({ab:.6g}) is not clearly away from 0, so the interval of a relative change is unbounded"


def _no_spread(varied: bool) -> Finding:
    """Both stddevs 0: constant values, or (``varied``) a spread lost to rounding."""
    if varied:
        return Finding(
            "no_spread",
            "warning",
            "both stddevs print as 0 though Min is below Max: the spread was lost to rounding (squares of values "
            "below 1.5e-154 underflow double precision), so nothing can be re-judged",
        )
    return Finding(
        "no_spread", "info", "both stddevs are 0: the values are constant, any difference is exact and no test applies"
    )


def _standard_errors(nb: int, sb: float, nc: int, sc: float) -> tuple[float, float, float]:
    """Welch's standard error of the difference, the pooled standard deviation and Student's standard error."""
    vb, vc = sb * sb, sc * sc
    se_welch = math.sqrt(vb / nb + vc / nc)
    sp = math.sqrt(((nb - 1) * vb + (nc - 1) * vc) / (nb + nc - 2))
    return se_welch, sp, sp * math.sqrt(1.0 / nb + 1.0 / nc)


def _underpowered(result: Judgement) -> None:
    """A printed "no difference proven": the changes it cannot rule out, when the power analysis gives them."""
    if result.detectable_change_pct is not None:
        result.findings.append(
            Finding(
                "underpowered",
                "warning",
                f"'no difference proven' only rules out changes of about {result.detectable_change_pct:.3g}% "
                "or more: smaller ones may be hidden",
            )
        )


def _judgeable(out: list[Finding], nb: int, ab: float, sb: float, nc: int, ac: float, sc: float) -> bool:
    """False, with the finding, when a stddev is nan, a side has fewer than 2 values or the values
    overflow double precision."""
    if any(math.isnan(x) for x in (sb, sc)):
        out.append(Finding("no_spread", "warning", "a stddev is nan: nothing can be re-judged"))
        return False
    if nb < 2 or nc < 2:
        out.append(Finding("too_few", "warning", "fewer than 2 values on a side: nothing can be re-judged"))
        return False
    vb, vc = sb * sb, sc * sc
    if not all(math.isfinite(x) for x in (ab, ac, vb, vc, ac - ab, vb / nb + vc / nc)):
        out.append(Finding("too_large", "warning", "the values are too large to re-judge in double precision"))
        return False
    return True


def _t_tests(
    result: Judgement,
    nb: int,
    ab: float,
    sb: float,
    nc: int,
    ac: float,
    sc: float,
    alpha: float,
    se_pooled: float,
    sp: float,
) -> float:
    """Welch's and the pooled t test (``result.welch``, ``result.pooled``) and the finding on Welch's;
    the half width of Welch's interval of the difference."""
    from abstat.stats.distributions import stdtr, stdtrit

    d, percent, confidence = result.difference, result.percent, result.confidence  # percent: None at ab <= 0
    vb, vc = sb * sb, sc * sc
    se_welch = math.sqrt(vb / nb + vc / nc)
    df_pooled = nb + nc - 2
    df_welch = power_mod.welch_df(vb, nb, vc, nc)
    t_welch = d / se_welch
    half = stdtrit(df_welch, 1.0 - alpha / 2.0) * se_welch
    p_welch = _two_sided(stdtr, df_welch, t_welch)
    ci_pct = _relative_ci(ab, sb, nb, ac, sc, nc, half / se_welch) if percent is not None else None
    why = ""
    if percent is not None and ci_pct is not None:
        shown = f"{_pct(percent)}, {confidence:g}% interval {_pct(ci_pct[0])} .. {_pct(ci_pct[1])}"
    else:  # the estimate and its interval both the difference of the means, and why
        result.percent, why = None, f": {_undefined(ab)}"
        shown = f"the difference of the means is {d:+.6g}, {confidence:g}% interval {d - half:+.6g} .. {d + half:+.6g}"
    result.welch = {"t": t_welch, "df": df_welch, "p": p_welch, "ci": [d - half, d + half], "ci_pct": ci_pct}
    t_pooled = d / se_pooled if se_pooled > 0.0 else math.copysign(math.inf, d) if d else math.nan
    result.pooled = {"t": t_pooled, "df": float(df_pooled), "p": _two_sided(stdtr, float(df_pooled), t_pooled), "s": sp}
    result.findings.append(
        Finding(
            "welch",
            "info",
            f"Welch's t: {shown}, p {_pval(p_welch)} (df {df_welch:.1f}){why}; of the means, all that N, Avg and "
            "Stddev allow (abstat compare on the samples compares the Hodges-Lehmann ratio, which outliers and "
            "quantization sway less, so its verdict may differ)",
        )
    )
    return half


def _welch_disagreement(
    out: list[Finding], printed_difference: bool | None, welch_significant: bool, confidence: float
) -> None:
    if printed_difference is None or printed_difference == welch_significant:
        return
    if printed_difference:
        out.append(
            Finding(
                "welch_disagrees",
                "warning",
                f"without assuming equal variances (Welch) the difference is NOT significant at {confidence:g}%",
            )
        )
    else:
        out.append(
            Finding(
                "welch_disagrees",
                "warning",
                f"without assuming equal variances (Welch) the difference IS significant at {confidence:g}%",
            )
        )


def _spreads(result: Judgement, nb: int, sb: float, nc: int, sc: float, se_ratio: float) -> None:
    """The ratio of the stddevs, and whether the pooled standard error misleads (``se_ratio``: pooled to Welch's)."""
    small, large = sorted((sb, sc))
    result.spread_ratio = large / small if small > 0 else math.inf
    result.se_ratio = se_ratio
    distortion = se_ratio - 1.0
    if result.spread_ratio < SPREAD_RATIO_NOTE:
        return
    if abs(distortion) > SE_DISTORTION:
        wider = "larger" if sc > sb else "smaller"
        direction = "too small (claims too strong)" if distortion < 0 else "too large (claims too weak)"
        result.findings.append(
            Finding(
                "pooled_misleads",
                "warning",
                f"the stddevs differ {result.spread_ratio:.2g}x and the samples differ in size "
                f"({nb} vs {nc}): the pooled standard error is {abs(distortion):.0%} {direction}; "
                f"trust Welch's t (the candidate has the {wider} spread)",
            )
        )
    else:
        result.findings.append(
            Finding(
                "unequal_spread",
                "info",
                f"the stddevs differ {result.spread_ratio:.2g}x; with near-equal sample sizes the pooled "
                f"standard error stays within {abs(distortion):.1%} of Welch's, so the pooled t holds here",
            )
        )


def _power(result: Judgement, nb: int, ab: float, sb: float, nc: int, sc: float, alpha: float) -> None:
    """The smallest change these samples detect, and the samples per side the observed change needs."""
    confidence, out = result.confidence, result.findings
    mde = power_mod.detectable_difference(sb, nb, sc, nc, alpha=alpha, power=POWER)
    result.detectable_change = mde
    result.detectable_change_pct = mde * 100.0 / ab if result.percent is not None else None
    mde_text = f"{result.detectable_change_pct:.3g}%" if result.detectable_change_pct is not None else f"{mde:.6g}"
    out.append(
        Finding(
            "detectable_change",
            "info",
            f"smallest change these samples detect with {POWER:.0%} power at {confidence:g}%: {mde_text}",
        )
    )
    if result.difference != 0.0:
        _samples_needed(result, nb, sb, nc, sc, alpha)


def _samples_needed(result: Judgement, nb: int, sb: float, nc: int, sc: float, alpha: float) -> None:
    """The samples per side the observed change needs (a warning when more than were measured)."""
    d, percent, out = result.difference, result.percent, result.findings
    needed = power_mod.samples_per_side(abs(d), sb, sc, alpha=alpha, power=POWER)
    result.samples_per_side = needed
    change = _pct(percent) if percent is not None else f"{d:.6g}"
    if needed is None:
        out.append(Finding("samples_needed", "info", f"no practical sample size confirms a change of {change}"))
        return
    enough = needed <= min(nb, nc)
    out.append(
        Finding(
            "samples_needed",
            "info" if enough else "warning",
            f"samples per side to confirm {change} with {POWER:.0%} power: {needed}"
            + (f" (have {nb} and {nc})" if enough else f" -- more than the {min(nb, nc)} measured"),
        )
    )


def _threshold(result: Judgement, ci_pct: list[float], threshold_pct: float) -> None:
    """Whether the relative interval lies inside, outside or across +/- ``threshold_pct``."""
    confidence = result.confidence
    low, high = sorted(ci_pct)
    limit = abs(threshold_pct)
    if -limit < low and high < limit:
        verdict, severity, text = (
            "inside",
            "info",
            f"the whole {confidence:g}% interval lies within +/-{limit:g}%: practically no change",
        )
    elif low >= limit or high <= -limit:
        verdict, severity, text = (
            "outside",
            "info",
            f"the whole {confidence:g}% interval lies beyond +/-{limit:g}%: a change that matters",
        )
    else:
        verdict, severity, text = (
            "undecided",
            "warning",
            f"the {confidence:g}% interval straddles +/-{limit:g}%: cannot tell whether the change matters",
        )
    result.threshold_verdict = verdict
    result.findings.append(Finding(f"threshold_{verdict}", severity, text))
