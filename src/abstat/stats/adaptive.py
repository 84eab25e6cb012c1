"""The default two-sample analysis: an adaptive choice of location estimator.

Performance data come in many shapes (normal, skewed, quantized, with
interrupts' outliers, bimodal).  No single test is best on all of them: the
t test is optimal for normal data and collapses with a few outliers, the
Mann-Whitney test is robust but loses ~5% efficiency on normal data.
abstat computes, on the logarithms of the values (a multiplicative model,
so that changes are relative), four estimators of the shift between the two
variants:

- the difference of means (Welch t),
- the difference of 10% and 20% trimmed means (Yuen's t),
- the Hodges-Lehmann shift (Mann-Whitney inverted),

and uses the one with the smallest estimated standard error, preferring
Welch unless another is at least 10% more precise.  Each standard error is
invariant to a shift of either sample, so the choice does not look at the
difference being tested (the same principle as Hogg's adaptive tests,
Hogg 1974, JASA 69; O'Gorman, *Applied Adaptive Statistical Methods*, 2004).
Trimmed means are not offered for heavily tied (quantized) data, whose
winsorized variances degenerate.  ``benchmarks/calibration.py`` measures
the resulting false-positive rate and power (``docs/statistics.md``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from abstat.stats.diagnostics import heavily_tied
from abstat.stats.shift import Shift, hodges_lehmann, welch, yuen

PREFERENCE_MARGIN = 0.9  # an alternative must beat Welch's SE by 10%
SMALL_SAMPLE_MARGIN = 0.8  # ... by 20% below TRIM_MIN_N samples per variant (noisier estimates)
TRIM_MIN_N = 20  # trimmed means only with at least this many samples per variant
SHARE_SWITCH_LEVEL = 0.001  # far-out shares this different: keep them in (Hodges-Lehmann)
TRIMS = (0.1,)  # trimming proportions offered (20% trimming proved weaker in calibration)


@dataclass(frozen=True)
class LocationShift:
    """The chosen estimate, expressed as a relative change in percent."""

    delta_pct: float
    ci_pct: tuple[float, float]
    p_value: float
    method: str
    scale: str  # "log" or "linear"
    shift: Shift
    far_out: tuple[int, int] | None = None  # values left out by the skipped estimator, per variant


def to_pct(d: float, scale: str, reference: float) -> float:
    if scale == "log":
        if d == math.inf:
            return math.inf
        if d == -math.inf:
            return -100.0
        try:
            return 100.0 * math.expm1(d)
        except OverflowError:  # a ratio beyond 1e308 (subnormal or huge values)
            return math.inf
    if reference == 0.0:
        return math.nan
    return 100.0 * d / abs(reference)


def choose(ses: dict[str, float], margin: float = PREFERENCE_MARGIN) -> str:
    """The smallest standard error, Welch unless beaten by the margin."""
    best = "welch"
    limit = margin * ses["welch"]
    for name, se in ses.items():
        if name == "welch" or not math.isfinite(se) or se <= 0.0:
            continue
        if se < limit and se < ses[best]:
            best = name
    return best


def far_out_fences(pooled: np.ndarray) -> tuple[float, float]:
    """Tukey's outer fences (3 IQR beyond the quartiles) of the pooled sample."""
    from abstat.stats.outliers import quartiles

    q1, q3 = quartiles(pooled)
    iqr = q3 - q1
    return q1 - 3.0 * iqr, q3 + 3.0 * iqr


def _skipped(ax: np.ndarray, ay: np.ndarray, confidence: float, fences: tuple[float, float]) -> Shift:
    lo, hi = fences
    kx = ax[(ax >= lo) & (ax <= hi)]
    ky = ay[(ay >= lo) & (ay <= hi)]
    dropped = ax.size - kx.size + ay.size - ky.size
    result = welch(kx, ky, confidence)
    return Shift(
        result.estimate, result.low, result.high, result.p_value, result.se,
        f"Welch t without {dropped} far-out value{'s' if dropped != 1 else ''} (Tukey outer fences of the pooled data)",
        result.df,
    )


def _candidates(
    ax: np.ndarray, ay: np.ndarray, confidence: float, trimming: bool, fences: tuple[float, float] | None
) -> dict[str, Callable[[], Shift]]:
    tests: dict[str, Callable[[], Shift]] = {"welch": lambda: welch(ax, ay, confidence)}
    if fences is not None:
        tests["skipped"] = lambda: _skipped(ax, ay, confidence, fences)
    if trimming:
        for trim in TRIMS:
            tests[f"yuen{int(trim * 100)}"] = lambda trim=trim: yuen(ax, ay, confidence, trim)
    tests["hodges_lehmann"] = lambda: hodges_lehmann(ax, ay, confidence)
    return tests


def select(ax: np.ndarray, ay: np.ndarray, confidence: float) -> str:
    """Name of the estimator to use, chosen on the pooled sample only.

    Each candidate's standard error is computed for two copies of the pooled
    sample (labels ignored), so the choice is the same for every relabelling
    of the data: under "no difference" it cannot favour the estimator that
    happens to show a difference.
    """
    pooled = np.concatenate([ax, ay])
    tests = _candidates(pooled, pooled, confidence, trimming(ax, ay), skip_fences(pooled))
    ses = {name: test().se for name, test in tests.items()}
    margin = PREFERENCE_MARGIN if min(ax.size, ay.size) >= TRIM_MIN_N else SMALL_SAMPLE_MARGIN
    return choose(ses, margin)


def far_out_shares_differ(n_x: int, out_x: int, n_y: int, out_y: int, level: float = 0.05) -> bool:
    """Fisher's exact test of equal far-out shares (two-sided)."""
    from scipy import stats

    return bool(stats.fisher_exact([[out_x, n_x - out_x], [out_y, n_y - out_y]]).pvalue < level)


def skip_fences(pooled: np.ndarray) -> tuple[float, float] | None:
    """Outer fences of the pooled sample when they exclude something (and
    leave at least 4 values per copy), else None."""
    if pooled.size < 8:
        return None
    lo, hi = far_out_fences(pooled)
    outside = int(np.count_nonzero((pooled < lo) | (pooled > hi)))
    if outside == 0 or hi <= lo:
        return None
    return lo, hi


def trimming(ax: np.ndarray, ay: np.ndarray) -> bool:
    """Trimmed means are candidates for large enough, not heavily tied samples."""
    return min(ax.size, ay.size) >= TRIM_MIN_N and not heavily_tied(np.concatenate([ax, ay]))


def location_shift(x: np.ndarray, y: np.ndarray, confidence: float) -> LocationShift:
    """Adaptive shift of ``y`` (candidate) against ``x`` (baseline)."""
    positive = bool(np.all(x > 0) and np.all(y > 0))
    scale = "log" if positive else "linear"
    ax, ay = (np.log(x), np.log(y)) if positive else (x, y)
    name = select(ax, ay, confidence)
    fences = skip_fences(np.concatenate([ax, ay]))
    far_out = None
    keep_in = ""
    if name == "skipped" and fences is not None:
        lo, hi = fences
        far_out = (
            int(np.count_nonzero((ax < lo) | (ax > hi))),
            int(np.count_nonzero((ay < lo) | (ay > hi))),
        )
        if far_out_shares_differ(ax.size, far_out[0], ay.size, far_out[1], SHARE_SWITCH_LEVEL):
            keep_in = "far-out values kept: their share differs"
        elif min(ax.size - far_out[0], ay.size - far_out[1]) < 2 or 2 * far_out[0] > ax.size or 2 * far_out[1] > ay.size:
            keep_in = "far-out values kept: they are half a variant or more"
    if keep_in:
        # The far-out values are part of the change: keep them in.
        chosen = hodges_lehmann(ax, ay, confidence)
        chosen = Shift(chosen.estimate, chosen.low, chosen.high, chosen.p_value, chosen.se,
                       f"{chosen.method} ({keep_in})", chosen.df)
    else:
        chosen = _candidates(ax, ay, confidence, trimming(ax, ay), fences)[name]()
    if name == "welch" and chosen.se == 0.0:
        chosen = hodges_lehmann(ax, ay, confidence)
    reference = float(np.median(x))
    return LocationShift(
        delta_pct=to_pct(chosen.estimate, scale, reference),
        ci_pct=(to_pct(chosen.low, scale, reference), to_pct(chosen.high, scale, reference)),
        p_value=chosen.p_value,
        method=chosen.method + (" on log values" if scale == "log" else ""),
        scale=scale,
        shift=chosen,
        far_out=far_out,
    )
