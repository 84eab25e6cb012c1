"""Compare a candidate with a baseline: ``abstat.compare(...)``.

The pipeline: variant data (samples, runs of samples, or summary statistics)
-> per-variant summaries and diagnostics (:mod:`.summaries`) -> the
comparison of one named estimand (:mod:`.analyses`) -> a verdict.  Results
are values with warnings attached; nothing is printed.  The methods and
their calibration are documented in ``docs/statistics.md``, the JSON form
in ``docs/json.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.comparison import analyses
from abstat.comparison import runs as run_unit
from abstat.comparison.centres import agree
from abstat.comparison.flat import flat_change
from abstat.comparison.inputs import VariantSamples, as_variant, rescaled, scale_factor
from abstat.comparison.model import CENTERS, OUTLIER_RULES, Comparison, VariantSummary
from abstat.comparison.summaries import quantized_fences_note, summarise
from abstat.errors import InputError, UsageError
from abstat.stats.warnings import StatWarning


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
    center: str = "auto",
    threshold: float | None = None,
    higher_is_better: bool = False,
    seed: int = 0,
    outliers: str = "none",
    names: tuple[str, str] = ("baseline", "candidate"),
) -> Comparison:
    """Compare ``candidate`` with ``baseline``.

    ``center``: ``"auto"`` (the default rule of
    :mod:`abstat.comparison.estimands`: the Hodges-Lehmann ratio, its test's
    reference the permutation distribution up to 50 values), ``"median"``
    (the ratio of medians) or ``"mean"`` (the ratio of means).

    Each is a sequence of numbers, a sequence of runs (sequences of
    numbers; runs are then the independent unit), an
    :class:`abstat.readers.summary.Summary` or a
    :class:`abstat.readers.specs.VariantData`.  ``confidence`` is a fraction
    (0.95) or a percentage (95).  ``threshold`` is a practical threshold in
    percent.  ``seed`` seeds the drawn permutations of the default test
    (at most 50 values in a variant and more than 20,000 arrangements;
    recorded in the result).
    """
    import numpy as np

    kept: list[Any] = []  # each variant's values compared, sorted (when values: not summaries)
    with np.errstate(all="ignore"):  # degenerate data are reported as warnings, not numpy noise
        found = _compare(
            baseline,
            candidate,
            confidence=confidence,
            center=center,
            threshold=threshold,
            higher_is_better=higher_is_better,
            seed=seed,
            outliers=outliers,
            names=names,
            kept=kept,
        )
        return agree(found, baseline, candidate, kept)  # the centres every format prints, checked against the change


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
    kept: list[Any] | None = None,
) -> Comparison:
    from abstat.readers.specs import VariantData

    confidence = _check_options(confidence, center, threshold, outliers)
    name_x = baseline.name if isinstance(baseline, VariantData) else names[0]
    name_y = candidate.name if isinstance(candidate, VariantData) else names[1]
    vx = as_variant(baseline, name_x)
    vy = as_variant(candidate, name_y)
    warnings: list[StatWarning] = []
    factor = scale_factor(vx, vy)
    quantized = quantized_fences_note(vx, vy) if outliers == "tukey" else ""
    vx, sx, wx = summarise(vx, confidence, outliers, factor, medians=center == "median", kept=kept)
    vy, sy, wy = summarise(vy, confidence, outliers, factor, medians=center == "median", kept=kept)
    warnings += wx + wy
    _enough(((vx, sx), (vy, sy)), outliers)
    notes = _outlier_notes(sx, sy, outliers, quantized)
    runs = None
    given = (vx, vy)
    vx, vy = rescaled(vx, vy, factor)
    lost = factor != 1.0 and _lost(given, (vx, vy))  # (at factor 1 nothing can vanish)
    if vx.summary is not None or vy.summary is not None:
        warnings += _summary_warnings(vx, vy, center, outliers)
        result = analyses.means(
            sx.n,
            sx.mean * factor,
            sx.stddev * factor,
            sy.n,
            sy.mean * factor,
            sy.stddev * factor,
            confidence,
            "Welch t on means from summary statistics, Fieller interval",
            "samples",
        )
    elif vx.nested or vy.nested:
        assert vx.runs is not None and vy.runs is not None
        result = run_unit.run_centres(vx.runs, vy.runs, center, confidence, warnings, (vx.name, vy.name))
        runs = [len(vx.runs), len(vy.runs)]
    else:
        assert vx.runs is not None and vy.runs is not None
        tied = _tied(wx, wy, factor)
        ordered = (kept[0], kept[1]) if tied is not None and kept is not None and len(kept) == 2 else None
        result = flat_change(vx, vy, center, confidence, warnings, notes, (sx.lag1, sy.lag1), seed, tied, ordered)
    result = _beyond_range(_constant_side(result, sx, sy), lost)
    if result.cannot:
        warnings.append(StatWarning("cannot-judge", result.cannot))
    centers = _centers(result, sx, sy, factor, given if lost else None)
    alpha = 1.0 - confidence
    significant = bool(result.p_value < alpha) and not result.cannot
    if result.cannot:
        verdict = "cannot judge"
    else:
        verdict = decide(result.delta_pct, result.ci, significant, threshold, higher_is_better)
    return Comparison(
        baseline=vx.name,
        candidate=vy.name,
        n=[sx.n, sy.n],
        center=result.center,
        delta_pct=result.delta_pct,
        ci_pct=None if result.cannot else [result.ci[0], result.ci[1]],
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
        estimand=result.estimand,
        centers=centers,
        center_kind=result.center_kind or result.center,
    )


def _tied(found_x: list[StatWarning], found_y: list[StatWarning], factor: float) -> tuple[bool, bool] | None:
    """Whether each flat sample is heavily tied: its summary's ties warning says so (one run, the
    one summarised); None when rescaled (a value may underflow into another's: then counted again)."""
    if factor != 1.0:
        return None
    return any(w.code == "ties" for w in found_x), any(w.code == "ties" for w in found_y)


def _constant_side(result: analyses.Result, sx: VariantSummary, sy: VariantSummary) -> analyses.Result:
    """``cannot judge`` when one side is constant (all zeros: tick-granular CPU time) and the interval of
    the change has no width: then no noise bounds the change (``-100% [-100, -100]`` for any baseline
    against zeros).  Both sides constant is :func:`analyses._constant`'s; a constant side beside one that
    varies keeps the interval the other's noise gives."""
    if result.cannot or not (math.isfinite(result.ci[0]) and result.ci[0] == result.ci[1]):
        return result
    constant = [s for s in (sx, sy) if s.kind != "summary" and s.stddev == 0.0 and s.min == s.max]
    if len(constant) != 1:
        return result
    side = constant[0]
    value = side.min if side.min is not None else side.mean
    role = "baseline" if side is sx else "candidate"
    why = (
        f"the {role} is constant (all {side.n:,} values are {value:.6g}): the interval of the change has "
        f"no width ({result.ci[0]:+.3g}%), so no noise bounds the change"
    )
    return _unjudged(result, why, result.delta_pct, result.centres, result.center_kind)


def _unjudged(
    result: analyses.Result, why: str, delta: float, centres: tuple[float, float] | None, kind: str
) -> analyses.Result:
    """``result`` without an interval or p-value, for the reason ``why``."""
    return analyses.Result(
        result.estimand,
        delta,
        (math.nan, math.nan),
        math.nan,
        result.method,
        result.center,
        result.unit,
        why,
        centres=centres,
        center_kind=kind,
    )


def _enough(sides: tuple[tuple[VariantSamples, VariantSummary], ...], outliers: str) -> None:
    """InputError naming a side of samples with fewer than 2 values (after the outlier rule)."""
    for v, s in sides:
        if s.kind != "summary" and s.n < 2:
            after = " after outlier exclusion" if outliers != "none" else ""
            raise InputError(f"{s.n} sample{'s' if s.n != 1 else ''}{after}; at least 2 are needed", path=v.name)


def _lost(given: tuple[VariantSamples, VariantSamples], scaled: tuple[VariantSamples, VariantSamples]) -> bool:
    """Whether a value that is not 0 became 0 when both sides were rescaled to one scale: the sides span more
    than double precision holds (1e-300 beside 1e308)."""
    import numpy as np

    return any(
        bool(np.any((r == 0.0) & (o != 0.0)))
        for v, w in zip(given, scaled, strict=True)
        for o, r in zip(v.runs or (), w.runs or (), strict=True)
    )


def _given_centres(given: tuple[VariantSamples, VariantSamples], center: str) -> list[float]:
    """Each side's mean (``center`` mean) or median of its own values, unscaled: what the rescaled sides lost."""
    import numpy as np

    pooled = [
        np.concatenate(v.runs) if v.runs else np.asarray([v.summary.mean if v.summary else math.nan]) for v in given
    ]
    return [float(np.mean(p) if center == "mean" else np.median(p)) for p in pooled]


def _beyond_range(result: analyses.Result, lost: bool) -> analyses.Result:
    """``cannot judge`` when the values span more than double precision holds (1e-300 beside 1e308: the small
    ones become 0 on the common scale) or the change itself overflows (1.5 against 1.1e308: +7e309%): no verdict
    word beside a change that cannot be printed or computed (attack20 A13)."""
    if not lost and (result.cannot or math.isfinite(result.delta_pct)):
        return result
    if lost:
        why = (
            "the values span more than double precision holds (some vanish beside the others): too far apart to compare"
        )
    else:
        why = "the change is beyond the floating-point range: too large to compare"
    if lost:
        return _unjudged(result, why, math.nan, None, "")
    return _unjudged(result, why, result.delta_pct, result.centres, result.center_kind)


def _centers(
    result: analyses.Result,
    sx: VariantSummary,
    sy: VariantSummary,
    factor: float,
    given: tuple[VariantSamples, VariantSamples] | None = None,
) -> list[float] | None:
    """Each variant's centre of the estimand, in the data's units (of the ``given`` values when rescaling them to
    one scale lost some)."""
    if given is not None:
        return _given_centres(given, result.center)
    if result.centres is not None:
        return [result.centres[0] / factor, result.centres[1] / factor]
    kind = result.center_kind or result.center
    if kind == "mean":
        return [sx.mean, sy.mean]
    if kind == "median" and sx.median is not None and sy.median is not None:
        return [sx.median, sy.median]
    return None


def _outlier_notes(sx: VariantSummary, sy: VariantSummary, outliers: str, quantized: str) -> list[StatWarning]:
    if outliers != "none":
        return [
            StatWarning(
                "outliers-dropped",
                f"outliers dropped ({outliers} rule): {sx.name} {sx.dropped}, {sy.name} {sy.dropped}" + quantized,
            )
        ]
    return [
        StatWarning(
            "outliers",
            f"{s.name}: {s.outliers_mild} mild and {s.outliers_severe} severe outliers (Tukey), "
            "kept ({outliers} tukey|mad drops them)",
            s.name,
            fields=["outliers"],
        )
        for s in (sx, sy)
        if s.outliers_mild or s.outliers_severe
    ]


def _summary_warnings(vx: VariantSamples, vy: VariantSamples, center: str, outliers: str) -> list[StatWarning]:
    found = []
    if center != "mean":
        found.append(
            StatWarning(
                "summary-only",
                "summary statistics only: medians, outliers, ties, bimodality and drift need raw "
                "samples; compared the means with Welch's t",
            )
        )
    if outliers != "none":
        found.append(StatWarning("summary-only", "outliers cannot be dropped from summary statistics"))
    nested_side = [v.name for v in (vx, vy) if v.nested]
    if nested_side:
        found.append(
            StatWarning(
                "summary-only",
                f"{', '.join(nested_side)}: runs pooled as one sample, since the other side is a summary "
                "without run structure; the test treats samples as independent",
            )
        )
    return found


def compare_many(variants: Mapping[str, Any], *, baseline: str | None = None, **options: Any) -> list[Comparison]:
    """Compare every variant with the baseline (the first one by default); ``variants`` maps names to data."""
    if not isinstance(variants, Mapping):
        raise TypeError(f"compare_many(variants=...) takes a mapping of name -> data, not a {type(variants).__name__}")
    names = list(variants)
    if len(names) < 2:
        raise UsageError("need at least two variants to compare")
    base = names[0] if baseline is None else baseline
    if base not in variants:
        raise UsageError(f"no variant named {base!r} (have: {', '.join(names)})")
    return [compare(variants[base], variants[name], names=(base, name), **options) for name in names if name != base]
