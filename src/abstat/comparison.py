"""Compare a candidate with a baseline: ``abstat.compare(...)``.

The pipeline: variant data (samples, runs of samples, or summary statistics)
-> per-variant summaries and diagnostics -> the comparison of centres
(:mod:`abstat.stats.adaptive` for the median, :mod:`abstat.stats.ratio` for
means, run centres for nested data) -> a verdict.  Results are values with
warnings attached; nothing is printed.  The methods and their calibration
are documented in ``docs/statistics.md``, the JSON form in ``docs/json.md``.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.readers.summary import Summary
from abstat.stats.warnings import StatWarning

CENTERS = ("median", "mean")
OUTLIER_RULES = ("none", "tukey", "mad")
VERDICTS = ("faster", "slower", "equivalent", "no difference proven")
JSON_VERSION = 1


@dataclass
class RunSummary:
    n: int
    median: float
    mean: float
    stddev: float

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "median": self.median, "mean": self.mean, "stddev": _num(self.stddev)}


@dataclass
class VariantSummary:
    """Per-variant vitals (after outlier exclusion, when asked for)."""

    name: str
    kind: str  # "samples", "runs" or "summary"
    n: int
    mean: float
    stddev: float
    min: float | None = None
    max: float | None = None
    median: float | None = None
    median_ci: tuple[float, float] | None = None
    outliers_mild: int | None = None
    outliers_severe: int | None = None
    dropped: int = 0
    runs: list[RunSummary] | None = None
    between_run_share: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "n": self.n,
            "min": self.min,
            "max": self.max,
            "median": self.median,
            "median_ci": list(self.median_ci) if self.median_ci else None,
            "mean": self.mean,
            "stddev": _num(self.stddev),
            "outliers": None
            if self.outliers_mild is None
            else {"mild": self.outliers_mild, "severe": self.outliers_severe, "dropped": self.dropped},
            "runs": [r.to_dict() for r in self.runs] if self.runs is not None else None,
            "between_run_share": self.between_run_share,
        }


@dataclass
class Comparison:
    """One candidate against the baseline; attributes are the JSON fields."""

    baseline: str
    candidate: str
    n: list[int]
    center: str
    delta_pct: float
    ci_pct: list[float]
    p_value: float
    significant: bool
    verdict: str
    method: str
    warnings: list[StatWarning]
    confidence: float
    threshold: float | None
    higher_is_better: bool
    unit: str  # "samples" or "runs": the independent unit of the test
    runs: list[int] | None
    outlier_rule: str
    seed: int
    summaries: list[VariantSummary] = field(default_factory=list)
    notes: list[StatWarning] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "n": list(self.n),
            "runs": list(self.runs) if self.runs is not None else None,
            "unit": self.unit,
            "center": self.center,
            "delta_pct": _num(self.delta_pct),
            "ci_pct": [_num(self.ci_pct[0]), _num(self.ci_pct[1])],
            "confidence": self.confidence * 100.0,
            "p_value": _num(self.p_value),
            "significant": self.significant,
            "verdict": self.verdict,
            "method": self.method,
            "threshold_pct": self.threshold,
            "higher_is_better": self.higher_is_better,
            "outliers": self.outlier_rule,
            "seed": self.seed,
            "warnings": [w.to_dict() for w in self.warnings],
            "notes": [w.to_dict() for w in self.notes],
            "summaries": [s.to_dict() for s in self.summaries],
        }


def _num(value: float | None) -> float | None:
    """JSON has no infinities or NaN: they become null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


# ---------------------------------------------------------------- input shapes


@dataclass
class _Variant:
    name: str
    runs: list[Any] | None  # numpy arrays
    summary: Summary | None

    @property
    def nested(self) -> bool:
        return self.runs is not None and len(self.runs) > 1


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or (
        hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0
    )


def _as_variant(data: Any, name: str) -> _Variant:
    import numpy as np

    from abstat.readers.specs import VariantData

    if isinstance(data, VariantData):
        return _as_variant(data.data, data.name)
    if isinstance(data, Summary):
        return _Variant(name, None, data)
    if isinstance(data, (str, bytes)) or not isinstance(data, (Sequence, np.ndarray)):
        raise UsageError(f"{name}: expected a sequence of numbers, of runs, or a Summary, not {type(data).__name__}")
    if len(data) == 0:
        raise InputError("no samples", path=name)
    first = data[0]
    if _is_number(first):
        groups = [data]
    else:
        groups = list(data)
    runs = []
    for index, group in enumerate(groups, start=1):
        try:
            arr = np.asarray(group, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"run {index} is not a sequence of numbers", path=name) from None
        if arr.ndim != 1:
            raise InputError(f"run {index} is not a flat sequence of numbers", path=name)
        if arr.size == 0:
            raise InputError(f"run {index} has no samples", path=name)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise InputError(f"value {int(bad[0]) + 1} of run {index} is not a finite number", path=name)
        runs.append(arr)
    return _Variant(name, runs, None)


# ---------------------------------------------------------------- summaries


def _quantized_fences_note(*variants: _Variant) -> str:
    """``; the data are quantized (grid 20) and the fences lie 1.5 steps
    outside the quartiles...`` when Tukey's fences drop values of quantized
    data only a few grid steps from the quartiles (per run, as the rule is
    applied), naming the variant unless both say the same; else ``""``."""
    from abstat.stats.outliers import quantized_fences

    def steps(values: list[float]) -> str:
        low, high = min(values), max(values)
        return f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g} to {high:.3g}"

    clauses: list[tuple[str, str]] = []
    for v in variants:
        if v.runs is None:
            continue
        found = [f for f in (quantized_fences(run) for run in v.runs) if f is not None]
        if not found:
            continue
        grids = sorted({f.step for f in found})
        clauses.append((v.name, (
            f"the data are quantized (grid {'/'.join(f'{g:g}' for g in grids)}) and the fences lie "
            f"{steps([f.fence_steps for f in found])} steps outside the quartiles: values "
            f"{steps([f.nearest_steps for f in found])} steps beyond them were dropped"
        )))
    if not clauses:
        return ""
    if len(clauses) == len(variants) and len({text for _, text in clauses}) == 1:
        return "; " + clauses[0][1]
    return "".join(f"; {name}: {text}" for name, text in clauses)


def _summarise(
    v: _Variant, confidence: float, outlier_rule: str, factor: float = 1.0
) -> tuple[_Variant, VariantSummary, list[StatWarning]]:
    """Summaries (in the data's units) and per-variant diagnostics (on the
    data times ``factor``); returns the variant after outlier exclusion
    (when a rule other than ``none`` is asked for)."""
    import numpy as np

    from abstat.stats import diagnostics, nested, outliers
    from abstat.stats.descriptive import describe
    from abstat.stats.location import median_ci, min_n_for_median_ci

    found: list[StatWarning] = []
    if v.summary is not None:
        s = v.summary
        return v, VariantSummary(v.name, "summary", s.n, s.mean, s.stddev), found
    assert v.runs is not None
    mild = severe = dropped = 0
    kept_runs = []
    for run in v.runs:
        counts = outliers.classify(run)
        mild += counts.mild
        severe += counts.severe
        mask = outliers.keep_mask(run, outlier_rule)
        dropped += int(run.size - mask.sum())
        kept_runs.append(run[mask])
    everything = np.concatenate(kept_runs)
    d = describe(everything.tolist())
    ci = median_ci(everything, confidence)
    if ci is None:
        need = min_n_for_median_ci(confidence)
        found.append(
            StatWarning(
                "too-few-samples",
                f"{v.name}: {d.n} samples cannot give a distribution-free {confidence:.0%} interval "
                f"for the median; {need} would",
                v.name,
            )
        )
    summary = VariantSummary(
        v.name,
        "runs" if len(kept_runs) > 1 else "samples",
        d.n,
        d.mean,
        d.stddev,
        d.min,
        d.max,
        d.median,
        ci,
        mild,
        severe,
        dropped,
    )
    scaled = everything * factor
    found += diagnostics.ties(v.name, everything)
    if not diagnostics.heavily_tied(scaled):
        found += diagnostics.bimodal(v.name, scaled)
    if len(kept_runs) > 1:
        runs_summary = []
        for run in kept_runs:
            rd = describe(run.tolist())
            runs_summary.append(RunSummary(rd.n, rd.median, rd.mean, rd.stddev))
        summary.runs = runs_summary
        comps = nested.variance_components([run * factor for run in kept_runs])
        if comps is not None:
            summary.between_run_share = comps.share_between
            found += diagnostics.runs_disagree(v.name, comps.p_value, comps.share_between)
        # Bonferroni over the runs, so that many runs do not raise false alarms.
        level = 0.01 / len(kept_runs)
        drifting = sum(1 for run in kept_runs if diagnostics.drift(v.name, run, level))
        if drifting:
            found.append(
                StatWarning(
                    "drift",
                    f"{v.name}: trend or autocorrelation inside {drifting} of {len(kept_runs)} runs",
                    v.name,
                )
            )
    else:
        found += diagnostics.drift(v.name, everything)
    return _Variant(v.name, kept_runs, None), summary, found


# ---------------------------------------------------------------- analyses


@dataclass
class _Result:
    delta_pct: float
    ci: tuple[float, float]
    p_value: float
    method: str
    center: str
    unit: str
    far_out: tuple[int, int] | None = None


def _ratio_result(n1: int, m1: float, s1: float, n2: int, m2: float, s2: float, confidence: float, method: str, unit: str) -> _Result:
    from abstat.stats.ratio import welch_ratio

    r = welch_ratio(n1, m1, s1, n2, m2, s2, confidence)
    sign = 1.0 if m1 > 0 else -1.0  # relative to the magnitude of the baseline

    def pct(q: float) -> float:
        if math.isnan(q):
            return math.nan
        return 100.0 * (q - 1.0) * sign if math.isfinite(q) else (math.inf if q > 0 else -math.inf)

    lo, hi = pct(r.low), pct(r.high)
    if lo > hi:
        lo, hi = hi, lo
    return _Result(pct(r.ratio), (lo, hi), r.p_value, method, "mean", unit)


def _flat(x, y, center: str, confidence: float) -> _Result:
    import numpy as np

    if center == "mean":
        return _ratio_result(
            x.size, float(x.mean()), float(x.std(ddof=1)), y.size, float(y.mean()), float(y.std(ddof=1)),
            confidence, "Welch t on means, Fieller interval", "samples",
        )
    from abstat.stats.adaptive import location_shift

    loc = location_shift(np.asarray(x), np.asarray(y), confidence)
    result = _Result(loc.delta_pct, loc.ci_pct, loc.p_value, f"{loc.method} (adaptive choice)", "median", "samples")
    if loc.far_out is not None:
        result.far_out = loc.far_out
    return result


def _nested(bx: list, by: list, center: str, confidence: float, found: list[StatWarning], names: tuple[str, str]) -> _Result:
    import numpy as np

    from abstat.stats import nested
    from abstat.stats.shift import Shift, welch

    cx = nested.run_centres(bx, center)
    cy = nested.run_centres(by, center)
    kx, ky = cx.size, cy.size
    label = "medians" if center == "median" else "means"
    unit_text = f"runs are the independent unit: {kx} vs {ky}"
    for name, k in zip(names, (kx, ky)):
        if k < 3:
            found.append(
                StatWarning(
                    "too-few-samples",
                    f"{name}: {k} run{'s' if k != 1 else ''}; the run-to-run variation is poorly known "
                    "with fewer than 3 runs per variant (5 or more are better)",
                    name,
                )
            )
    if kx >= 2 and ky >= 2:
        if center == "mean":
            return _ratio_result(
                kx, float(cx.mean()), float(cx.std(ddof=1)), ky, float(cy.mean()), float(cy.std(ddof=1)),
                confidence, f"Welch t on per-run means, Fieller interval ({unit_text})", "runs",
            )
        positive = bool(np.all(cx > 0) and np.all(cy > 0))
        ax, ay = (np.log(cx), np.log(cy)) if positive else (cx, cy)
        s: Shift = welch(ax, ay, confidence)
        method = f"Welch t on per-run {label}{' (log)' if positive else ''} ({unit_text})"
    else:
        # One side has a single run: borrow the other side's run-to-run
        # variance (pooled t, assumes equal between-run variance).
        positive = bool(np.all(cx > 0) and np.all(cy > 0))
        ax, ay = (np.log(cx), np.log(cy)) if positive else (cx, cy)
        many = ax if kx > 1 else ay
        sd = float(many.std(ddof=1))
        df = many.size - 1
        est = float(ay.mean() - ax.mean())
        se = sd * math.sqrt(1.0 / kx + 1.0 / ky)
        from scipy import special

        q = float(special.stdtrit(df, 0.5 + confidence / 2.0))
        p = float(2.0 * special.stdtr(df, -abs(est / se))) if se > 0 else (1.0 if est == 0 else 0.0)
        s = Shift(est, est - q * se, est + q * se, p, se, "t", df)
        method = (
            f"t on per-run {label}{' (log)' if positive else ''}, run-to-run variance from "
            f"the variant with several runs ({unit_text})"
        )
    from abstat.stats.adaptive import to_pct

    reference = float(np.median(cx))
    scale = "log" if positive else "linear"
    return _Result(
        to_pct(s.estimate, scale, reference),
        (to_pct(s.low, scale, reference), to_pct(s.high, scale, reference)),
        s.p_value,
        method,
        center,
        "runs",
    )


def _scale_factor(vx: _Variant, vy: _Variant) -> float:
    """A power of two that brings the largest magnitude near 1: multiplying
    by it is exact in floating point, invisible in relative changes and
    p-values, and keeps squares of 1e-300 or 1e300 from under- or
    overflowing (1.0 when the data are in a safe range)."""
    import numpy as np

    magnitudes = []
    for v in (vx, vy):
        if v.summary is not None:
            magnitudes += [abs(v.summary.mean), v.summary.stddev]
        else:
            assert v.runs is not None
            magnitudes += [float(np.max(np.abs(r))) for r in v.runs]
    top = max(magnitudes)
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    exponent = math.frexp(top)[1]
    if -64 <= exponent <= 64:
        return 1.0
    return math.ldexp(1.0, -exponent)


def _rescaled(vx: _Variant, vy: _Variant, factor: float) -> tuple[_Variant, _Variant]:
    """Both variants multiplied by ``factor`` (see :func:`_scale_factor`)."""
    if factor == 1.0:
        return vx, vy

    def scale(v: _Variant) -> _Variant:
        if v.summary is not None:
            s = v.summary
            return _Variant(v.name, None, Summary(s.n, s.mean * factor, s.stddev * factor))
        assert v.runs is not None
        return _Variant(v.name, [r * factor for r in v.runs], None)

    return scale(vx), scale(vy)


def decide(
    delta_pct: float,
    ci_pct: Sequence[float],
    significant: bool,
    threshold: float | None,
    higher_is_better: bool,
) -> str:
    """The verdict.

    ``equivalent``: a threshold was given and the whole interval lies inside
    ``(-threshold, +threshold)`` (an interval-inclusion equivalence test, at
    least as strict as TOST at level ``(1 - confidence) / 2`` per side).
    ``faster``/``slower``: significant and the estimate beyond the threshold
    (0 without one) in the better/worse direction.  Otherwise ``no
    difference proven``.
    """
    limit = threshold or 0.0
    lo, hi = ci_pct
    if threshold is not None and threshold > 0 and -limit < lo and hi < limit:
        return "equivalent"
    if significant and not math.isnan(delta_pct) and abs(delta_pct) > limit:
        better = delta_pct > 0 if higher_is_better else delta_pct < 0
        return "faster" if better else "slower"
    return "no difference proven"


def _check_options(confidence: float, center: str, threshold: float | None, outliers: str) -> float:
    if confidence > 1.0:
        confidence = confidence / 100.0
    if not 0.5 <= confidence < 1.0:
        raise UsageError(f"confidence must be between 50% and 100% (exclusive), not {confidence:.6g}")
    if center not in CENTERS:
        raise UsageError(f"center must be one of {', '.join(CENTERS)}, not {center!r}")
    if outliers not in OUTLIER_RULES:
        raise UsageError(f"outliers must be one of {', '.join(OUTLIER_RULES)}, not {outliers!r}")
    if threshold is not None and not (math.isfinite(threshold) and threshold >= 0):
        raise UsageError(f"threshold must be a percentage >= 0, not {threshold!r}")
    return confidence


def compare(
    baseline: Any,
    candidate: Any,
    *,
    confidence: float = 0.95,
    center: str = "median",
    threshold: float | None = None,
    higher_is_better: bool = False,
    seed: int = 0,
    outliers: str = "none",
    names: tuple[str, str] = ("baseline", "candidate"),
) -> Comparison:
    """Compare ``candidate`` with ``baseline``.

    Each is a sequence of numbers, a sequence of runs (sequences of
    numbers; runs are then the independent unit), an
    :class:`abstat.readers.summary.Summary` or a
    :class:`abstat.readers.specs.VariantData`.  ``confidence`` is a fraction
    (0.95) or a percentage (95).  ``threshold`` is a practical threshold in
    percent.  ``seed`` seeds any resampling (the current methods are exact
    or asymptotic and do not resample; it is recorded in the result).
    """
    import numpy as np

    with np.errstate(all="ignore"):  # degenerate data are reported as warnings, not numpy noise
        return _compare(baseline, candidate, confidence=confidence, center=center, threshold=threshold,
                        higher_is_better=higher_is_better, seed=seed, outliers=outliers, names=names)


def _compare(
    baseline: Any,
    candidate: Any,
    *,
    confidence: float,
    center: str,
    threshold: float | None,
    higher_is_better: bool,
    seed: int,
    outliers: str,
    names: tuple[str, str],
) -> Comparison:
    from abstat.readers.specs import VariantData

    confidence = _check_options(confidence, center, threshold, outliers)
    name_x = baseline.name if isinstance(baseline, VariantData) else names[0]
    name_y = candidate.name if isinstance(candidate, VariantData) else names[1]
    vx = _as_variant(baseline, name_x)
    vy = _as_variant(candidate, name_y)
    warnings: list[StatWarning] = []
    notes: list[StatWarning] = []
    factor = _scale_factor(vx, vy)
    quantized = _quantized_fences_note(vx, vy) if outliers == "tukey" else ""
    vx, sx, wx = _summarise(vx, confidence, outliers, factor)
    vy, sy, wy = _summarise(vy, confidence, outliers, factor)
    warnings += wx + wy
    for v, s in ((vx, sx), (vy, sy)):
        if s.kind != "summary" and s.n < 2:
            after = " after outlier exclusion" if outliers != "none" else ""
            raise InputError(f"{s.n} sample{'s' if s.n != 1 else ''}{after}; at least 2 are needed", path=v.name)
    if outliers != "none":
        notes.append(
            StatWarning(
                "outliers-dropped",
                f"outliers dropped ({outliers} rule): {sx.name} {sx.dropped}, {sy.name} {sy.dropped}"
                + quantized,
            )
        )
    else:
        for s in (sx, sy):
            if s.outliers_mild or s.outliers_severe:
                notes.append(
                    StatWarning(
                        "outliers",
                        f"{s.name}: {s.outliers_mild} mild and {s.outliers_severe} severe outliers (Tukey), "
                        "kept (--outliers tukey|mad drops them)",
                        s.name,
                    )
                )
    runs = None
    vx, vy = _rescaled(vx, vy, factor)
    if vx.summary is not None or vy.summary is not None:
        if center == "median":
            warnings.append(
                StatWarning(
                    "summary-only",
                    "summary statistics only: medians, outliers, ties, bimodality and drift need raw "
                    "samples; compared the means with Welch's t",
                )
            )
        if outliers != "none":
            warnings.append(StatWarning("summary-only", "outliers cannot be dropped from summary statistics"))
        nested_side = [v.name for v in (vx, vy) if v.nested]
        if nested_side:
            warnings.append(
                StatWarning(
                    "summary-only",
                    f"{', '.join(nested_side)}: runs pooled as one sample, since the other side is a summary "
                    "without run structure; the test treats samples as independent",
                )
            )
        result = _ratio_result(
            sx.n, sx.mean, sx.stddev, sy.n, sy.mean, sy.stddev, confidence,
            "Welch t on means from summary statistics, Fieller interval", "samples",
        )
    elif vx.nested or vy.nested:
        assert vx.runs is not None and vy.runs is not None
        result = _nested(vx.runs, vy.runs, center, confidence, warnings, (vx.name, vy.name))
        runs = [len(vx.runs), len(vy.runs)]
    else:
        import numpy as np

        from abstat.stats import diagnostics

        assert vx.runs is not None and vy.runs is not None
        x, y = vx.runs[0], vy.runs[0]
        warnings += diagnostics.unequal_spread(vx.name, np.log(x) if np.all(x > 0) and np.all(y > 0) else x,
                                               vy.name, np.log(y) if np.all(x > 0) and np.all(y > 0) else y)
        result = _flat(x, y, center, confidence)
        if result.far_out is not None:
            warnings += diagnostics.far_out_share(vx.name, x.size, result.far_out[0], vy.name, y.size, result.far_out[1])
        need = diagnostics.min_n_rank_test(confidence)
        if min(x.size, y.size) < need:
            warnings.append(
                StatWarning(
                    "too-few-samples",
                    f"{min(x.size, y.size)} samples in the smaller variant: a distribution-free test at "
                    f"{confidence:.0%} needs at least {need} per variant (10 or more for a useful interval)",
                )
            )
    if math.isnan(result.delta_pct):
        warnings.append(
            StatWarning(
                "zero-baseline",
                "the baseline centre is 0, so a relative change is undefined; the p-value still tests "
                "for a difference",
            )
        )
    elif not (math.isfinite(result.ci[0]) and math.isfinite(result.ci[1])):
        warnings.append(
            StatWarning("too-few-samples", "the confidence interval is unbounded: too few samples or too much noise")
        )
    elif result.center == "median" and vx.summary is None and vy.summary is None and not runs:
        tied = any(w.code == "ties" for w in warnings)
        warnings += _medians_disagree(sx, sy, result, tied)
    alpha = 1.0 - confidence
    significant = bool(result.p_value < alpha)
    verdict = decide(result.delta_pct, result.ci, significant, threshold, higher_is_better)
    if verdict == "no difference proven" and significant and math.isnan(result.delta_pct):
        # Zero baseline: no relative change, but the test still found a
        # difference; its direction decides (any change is beyond a
        # threshold given in percent of zero).
        change = (sy.mean - sx.mean) if result.center == "mean" else (sy.median - sx.median)
        if change:
            better = change > 0 if higher_is_better else change < 0
            verdict = "faster" if better else "slower"
    return Comparison(
        baseline=vx.name,
        candidate=vy.name,
        n=[sx.n, sy.n],
        center=result.center,
        delta_pct=result.delta_pct,
        ci_pct=[result.ci[0], result.ci[1]],
        p_value=result.p_value,
        significant=significant,
        verdict=verdict,
        method=result.method,
        warnings=warnings,
        confidence=confidence,
        threshold=threshold,
        higher_is_better=higher_is_better,
        unit=result.unit,
        runs=runs,
        outlier_rule=outliers,
        seed=seed,
        summaries=[sx, sy],
        notes=notes,
    )


def _medians_disagree(sx: VariantSummary, sy: VariantSummary, result: _Result, tied: bool) -> list[StatWarning]:
    """A warning when the sample medians tell another story than the
    estimated shift: opposite direction, or outside its interval (not
    checked for heavily tied data, whose medians move in whole steps)."""
    if not sx.median or not math.isfinite(result.delta_pct):
        return []
    moved = (sy.median / sx.median - 1.0) * 100.0
    if sx.median < 0:
        moved = -moved
    lo, hi = result.ci
    # Opposite direction matters only where the interval settles the
    # direction; outside the interval matters unless medians move in steps.
    opposite = moved * result.delta_pct < 0 and (lo > 0 or hi < 0)
    outside = not tied and not (lo <= moved <= hi)
    if not (opposite or outside):
        return []
    how = "in the opposite direction to" if opposite else "outside the interval of"
    return [
        StatWarning(
            "medians-disagree",
            f"the sample medians moved {moved:+.2f}%, {how} the estimated shift ({result.delta_pct:+.2f}%, "
            f"{result.method}): the variants differ in shape, not only in location, or the samples are "
            "too small to pin the centre down; look at the distributions (abstat report --format html)",
        )
    ]


def compare_many(variants: Mapping[str, Any], *, baseline: str | None = None, **options: Any) -> list[Comparison]:
    """Compare every variant with the baseline (the first one by default)."""
    names = list(variants)
    if len(names) < 2:
        raise UsageError("need at least two variants to compare")
    base = names[0] if baseline is None else baseline
    if base not in variants:
        raise UsageError(f"no variant named {base!r} (have: {', '.join(names)})")
    return [
        compare(variants[base], variants[name], names=(base, name), **options)
        for name in names
        if name != base
    ]
