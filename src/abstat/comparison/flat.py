"""Independent samples compared by the default rule, medians or means (the flat branch of
:func:`abstat.comparison.core.compare`), with the serial-correlation factors of sample order."""

from __future__ import annotations

import math
from typing import Any

from abstat.comparison import analyses
from abstat.comparison.inputs import VariantSamples
from abstat.stats.warnings import StatWarning

MEDIAN_MIN_N = 5  # below this the Bonett-Price statistic takes a t quantile (stats.medians.SMALL_N)


def flat_change(
    vx: VariantSamples,
    vy: VariantSamples,
    center: str,
    confidence: float,
    warnings: list[StatWarning],
    notes: list[StatWarning],
    lag1: tuple[float | None, float | None] = (None, None),
    seed: int = 0,
    tied: tuple[bool, bool] | None = None,
    ordered: tuple[Any, Any] | None = None,
) -> analyses.Result:
    """Independent samples: the default rule, medians or means (``tied``: whether each is heavily
    tied, :func:`abstat.stats.diagnostics.heavily_tied`, if known; ``ordered``: both sorted, if known)."""
    import numpy as np

    from abstat.comparison import estimands
    from abstat.stats import diagnostics

    assert vx.runs is not None and vy.runs is not None
    x, y = vx.runs[0], vy.runs[0]
    if ordered is not None:  # (the least values first)
        positive = bool(ordered[0][0] > 0 and ordered[1][0] > 0)
    else:
        positive = bool(np.all(x > 0) and np.all(y > 0))
    logs = (np.log(x), np.log(y)) if positive else None  # (the default's analysis scale: taken once)
    warnings += diagnostics.unequal_spread(vx.name, logs[0] if logs else x, vy.name, logs[1] if logs else y)
    warnings += diagnostics.grids_differ(vx.name, x, vy.name, y, tied, logs if center == "auto" else None, ordered)
    inflate = serial_factors_noted(vx.name, x, vy.name, y, notes, lag1, confidence)
    if center == "auto":
        # (no pseudo-medians: comparison.centres.agree puts the medians of the samples compared in their place)
        result = estimands.default_change(x, y, confidence, inflate=inflate, seed=seed, logs=logs, pseudo_medians=False)
        notes += means_differ(x, y, result, confidence, inflate)
        if min(x.size, y.size) < MEDIAN_MIN_N:
            warnings.append(
                StatWarning(
                    "too-few-samples",
                    f"{min(x.size, y.size)} samples in the smaller variant: only a few arrangements of the values "
                    f"exist, so the interval is wide and small p-values cannot occur; {MEDIAN_MIN_N} or more per "
                    "variant are better",
                )
            )
        return result
    if center == "mean":
        return _means_change(x, y, confidence, inflate, warnings, seed)
    result = analyses.medians(x, y, confidence, inflate)
    if min(x.size, y.size) < MEDIAN_MIN_N:
        warnings.append(
            StatWarning(
                "too-few-samples",
                f"{min(x.size, y.size)} samples in the smaller variant: the medians' standard errors need at least "
                f"{MEDIAN_MIN_N} per variant (10 or more for a useful interval); the interval uses a t quantile "
                "with few degrees of freedom and is wide",
            )
        )
    if result.pinned and not result.p_value < 1.0 - confidence:
        warnings.append(
            StatWarning(
                "median-resolution",
                "quantized data: medians move in whole steps, so a change smaller than a step cannot show in "
                "them; the default comparison ({center} auto) or {center} mean can resolve it",
                fields=["center"],
            )
        )
    return result


PERMUTED = "Welch t on means, permutation reference (Janssen), Fieller interval at its critical values"


def _means_change(
    x: Any, y: Any, confidence: float, inflate: tuple[float, float], warnings: list[StatWarning], seed: int = 0
) -> analyses.Result:
    """``--center mean``: Welch's t referred to its permutation distribution and Fieller's interval at that
    reference's critical value (:mod:`abstat.stats.mean_permutation`; Student's t beyond its budget), withheld
    when the smaller variant cannot hold the pooled sample's far tail (:mod:`abstat.comparison.mean_tails`)."""
    result = analyses.sample_means(x, y, confidence, inflate, "Welch t on means, Fieller interval", "samples")
    from abstat.comparison.mean_tails import tail_shown, unrepresented_tail
    from abstat.stats.mean_permutation import affordable, welch_permutation

    shown = result.p_value == result.p_value and tail_shown(x, y)
    tail = unrepresented_tail(x, y) if shown else ""
    if tail:
        result = analyses.withheld(result, tail)
    elif shown and affordable(x.size, y.size, 1.0 - confidence):
        test = welch_permutation(x, y, 1.0 - confidence, seed, inflate)
        reference = (test.p_value, test.low, test.high)
        result = analyses.sample_means(x, y, confidence, inflate, PERMUTED, "samples", reference=reference)
    if min(x.size, y.size) < MEDIAN_MIN_N and max(x.size, y.size) >= 4 * min(x.size, y.size):
        warnings.append(
            StatWarning(
                "too-few-samples",
                f"{min(x.size, y.size)} samples against {max(x.size, y.size)}: Welch's t is liberal when one "
                "variant has so few (a 95% interval covers about 92% of the time at 3 vs 30)",
            )
        )
    return result


def serial_factors_noted(
    name_x: str,
    x: Any,
    name_y: str,
    y: Any,
    notes: list[StatWarning],
    lag1: tuple[float | None, float | None] = (None, None),
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The variance factors for serial correlation in ``x`` and ``y`` (sample
    order) at ``confidence``, with a note when they widen the interval."""
    from abstat.stats.dependence import ROUGH_N, is_sorted, serial_factors

    fx, fy, phi = serial_factors(x, y, lag1, confidence)
    ordered = [name for name, v in ((name_x, x), (name_y, y)) if is_sorted(v)]
    if ordered:
        notes.append(
            StatWarning(
                "sorted",
                f"{' and '.join(ordered)}: the values are in sorted order, so their order carries no time: not "
                "read as drift or serial correlation",
            )
        )
    if fx > 1.0 or fy > 1.0:
        which = " and ".join(name for name, f in ((name_x, fx), (name_y, fy)) if f > 1.0)
        notes.append(
            StatWarning(
                "autocorrelation",
                f"{which}: samples resemble their neighbours in sample order (lag-1 autocorrelation about "
                f"{phi:+.2f}): the interval is widened for it (variance x{max(fx, fy):.2g})"
                + (
                    "; with fewer than 20 values the correction is rough (about 8% false calls at phi 0.2-0.3 "
                    "and 15 values, 9-13% at phi 0.6 and 10-12 values): measure longer or in several runs"
                    if min(x.size, y.size) < ROUGH_N
                    else ""
                ),
            )
        )
    return fx, fy


MEANS_NOTE_MIN = 20  # values a side for the "means differ" note
MEANS_NOTE_BALANCE = 1.25  # at most this ratio of the sizes: Welch's t is liberal on skewed data of unequal sizes


def means_differ(
    x: Any, y: Any, result: analyses.Result, confidence: float, inflate: tuple[float, float]
) -> list[StatWarning]:
    """A note when the default's estimand did not move beyond its noise but Welch's t on the means calls
    a change: the tail or the share of slow values changed (an interrupt rate 2% -> 8% moves the mean
    +1.1%, the median of pairwise ratios +0.12%).  The verdict is the default's, unchanged.  Only at
    >= :data:`MEANS_NOTE_MIN` values a side and sizes within :data:`MEANS_NOTE_BALANCE` of each other,
    where Welch's t on raw values held its level on every shape of the workflow calibration (normal,
    interrupts, skewed, grid, mixtures: 1.2-5.3% of 4,000 A/A draws each; at 50 against 500 with
    interrupts 25-32%: no note there).  docs/statistics.md, wave 9."""
    if result.cannot or not result.p_value >= 1.0 - confidence:
        return []
    small, big = sorted((x.size, y.size))
    if small < MEANS_NOTE_MIN or big > MEANS_NOTE_BALANCE * small:
        return []
    sd = [float(v.std(ddof=1)) * math.sqrt(k) for v, k in zip((x, y), inflate, strict=True)]
    if not (sd[0] > 0 or sd[1] > 0):
        return []
    from abstat.stats.ratio import welch_p

    mx, my = float(x.mean()), float(y.mean())
    if not welch_p(x.size, mx, sd[0], y.size, my, sd[1])[0] < 1.0 - confidence:
        return []  # (the p-value of analyses.means below: no note, and no t quantile for its interval)
    means = analyses.means(x.size, mx, sd[0], y.size, my, sd[1], confidence, "Welch t", "samples")
    if means.cannot or not means.p_value < 1.0 - confidence:
        return []
    lo, hi = means.ci
    return [
        StatWarning(
            "means-differ",
            f"the means differ although the default's estimand did not move beyond its noise: ratio of means "
            f"{means.delta_pct:+.3g}% [{lo:+.3g}, {hi:+.3g}], Welch's t p {means.p_value:.2g}; the tail or the "
            "share of slow values changed ({center} mean compares the means; the verdict above is the default's)",
            fields=["center"],
        )
    ]
