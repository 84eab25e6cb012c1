"""The default comparison (``--center auto``) and the one rule that names its estimand.

Decided per variant, never on the pooled sample:

- both variants positive: the **Hodges-Lehmann ratio** (``hl_ratio``), the
  median of the candidate / baseline ratios over all pairs, with the
  interval of the inverted Brunner-Munzel test
  (:mod:`abstat.stats.hodges_lehmann`; tied values read as spread over their
  grid step), its reference the permutation distribution when either
  variant has at most 50 values (:mod:`abstat.stats.permutation`: valid at
  5 against 500 and in the far tail Holm uses), Student's t above.  Until
  issue 34 fewer than 10 values switched to the ratio of geometric means
  with Welch's t on the logarithms, which called 47-50% of identical
  populations with interrupts different at 5 against 500;
- some value <= 0 (a ratio of pairs is undefined): the **ratio of means**
  (``mean_ratio``), Welch's t and Fieller's interval.

:func:`default_estimand` names the estimand that rule gives for data of a
given size and sign, so that ``plan``, ``noise``, ``report``, ``audit``,
``history`` and ``bisect`` can speak of the quantity ``compare`` would
estimate; :func:`default_change` computes it for two samples.  The rule and
its calibration: ``docs/statistics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from abstat.comparison.analyses import NAN, Result, _cannot, _constant, sample_means, to_pct
from abstat.comparison.model import TIES_SOME_METHOD, TIES_SPREAD_METHOD

HL_MIN_N = 2  # the Hodges-Lehmann ratio at any size (10 before issue 34, with geometric means below)


def default_estimand(n_baseline: int, n_candidate: int, positive: bool = True) -> str:
    """The ``estimand`` the default comparison uses for variants of these
    sizes (values or runs), all values positive or not."""
    if not positive:
        return "mean_ratio"
    return "hl_ratio" if min(n_baseline, n_candidate) >= HL_MIN_N else "geomean_ratio"


def geomeans(
    x: Any,
    y: Any,
    confidence: float,
    unit: str = "samples",
    center: str = "auto",
    inflate: tuple[float, float] = (1.0, 1.0),
    of: str = "",
) -> Result:
    """``geomean_ratio``: Welch's t on the logarithms (positive data), Student's t reference."""
    import numpy as np

    from abstat.stats.distributions import stdtr, t_quantile
    from abstat.stats.ratio import welch_df

    lx, ly = np.log(x), np.log(y)
    kind = "geometric mean" + (f" of {of}" if of else "")
    method = f"Welch t on the logarithms{f' of {of}' if of else ''} (geometric means)"
    centres = (math.exp(float(lx.mean())), math.exp(float(ly.mean())))
    if lx.min() == lx.max() and ly.min() == ly.max():
        r = _constant("geomean_ratio", center, unit, x, y, float(x[0]), "log")
        r.centres, r.center_kind = centres, kind
        return r
    a1 = float(lx.var(ddof=1)) / lx.size * inflate[0] if lx.size > 1 else 0.0
    a2 = float(ly.var(ddof=1)) / ly.size * inflate[1] if ly.size > 1 else 0.0
    if lx.size < 2 or ly.size < 2:
        # one value on a side: the other side's variance stands in for it (pooled t, df n - 1)
        many = lx if lx.size > 1 else ly
        v = float(many.var(ddof=1))
        a1, a2 = v / lx.size, v / ly.size
        df = float(many.size - 1)
        method += ", the spread of the variant with several values standing in for the other's"
    else:
        df = welch_df(lx.size, a1, ly.size, a2) if a1 + a2 > 0 else math.inf
    se = math.sqrt(a1 + a2)
    est = float(ly.mean() - lx.mean())
    if not se > 0.0:
        return _cannot(
            "geomean_ratio",
            method,
            center,
            unit,
            "neither variant varies, so there is no noise estimate to judge the change by",
        )
    q = t_quantile(df, 0.5 + confidence / 2.0)
    p = min(1.0, 2.0 * stdtr(df, -abs(est / se)))
    ci = (to_pct(est - q * se, "log", 1.0), to_pct(est + q * se, "log", 1.0))
    return Result(
        "geomean_ratio", to_pct(est, "log", 1.0), ci, p, method, center, unit, centres=centres, center_kind=kind
    )


def hodges_lehmann_ratio(
    x: Any,
    y: Any,
    confidence: float,
    unit: str = "samples",
    center: str = "auto",
    inflate: tuple[float, float] = (1.0, 1.0),
    of: str = "",
    seed: int = 0,
    logs: tuple[Any, Any] | None = None,
    pseudo_medians: bool = True,
) -> Result:
    """``hl_ratio``: the median of the pairwise log ratios, the inverted
    Brunner-Munzel interval, the Brunner-Munzel p-value at ratio 1 (``logs``: those of ``x`` and ``y``, if
    known; ``pseudo_medians``: False leaves the centres out, NaN, for a caller that replaces them)."""
    import numpy as np

    from abstat.stats.hodges_lehmann import PERMUTE_MAX, hodges_lehmann

    lx, ly = (np.log(x), np.log(y)) if logs is None else logs
    kind = "pseudo-median" + (f" of {of}" if of else "")
    if lx.min() == lx.max() and ly.min() == ly.max():
        r = _constant("hl_ratio", center, unit, x, y, float(x[0]), "log")
        r.centres, r.center_kind = (float(x[0]), float(y[0])), kind
        return r
    h = hodges_lehmann(lx, ly, confidence, inflate, centres=pseudo_medians, seed=seed)
    reference = "permutation" if min(lx.size, ly.size) <= PERMUTE_MAX else "t"
    method = (
        f"Hodges-Lehmann ratio{f' of {of}' if of else ''}, interval and p-value from the "
        f"Brunner-Munzel test{' (studentized permutation)' if reference == 'permutation' else ''}"
        + (
            f"; {TIES_SOME_METHOD if h.some else TIES_SPREAD_METHOD}, so the ratio is the median ratio of those "
            "spread values, not of the raw "
            "values (which moves only in whole steps)"
            if h.spread
            else ""
        )
    )
    centres = (math.exp(h.centres[0]), math.exp(h.centres[1]))
    if not (math.isfinite(h.low) and math.isfinite(h.high)):
        from abstat.stats.hodges_lehmann import separated_p

        floor = separated_p(lx.size, ly.size)
        why = "the interval of the ratio is unbounded: too few values to bound the change"
        if floor >= 1.0 - confidence:
            why += (
                f" ({lx.size} against {ly.size} values: even completely separated samples have a permutation "
                f"p-value of {floor:.2g}, not below {1.0 - confidence:.2g})"
            )
        elif reference == "permutation" and _unresolved_level(1.0 - confidence):
            why = "the interval of the ratio is unbounded: " + _unresolved_level(1.0 - confidence)
        return Result("hl_ratio", NAN, (NAN, NAN), NAN, method, center, unit, why, centres=centres, center_kind=kind)
    ci = (to_pct(h.low, "log", 1.0), to_pct(h.high, "log", 1.0))
    result = Result(
        "hl_ratio",
        to_pct(h.estimate, "log", 1.0),
        ci,
        h.p_value,
        method,
        center,
        unit,
        centres=centres,
        center_kind=kind,
    )
    if min(lx.size, ly.size) <= PERMUTE_MAX:  # (JOIN_MAX is below it: larger samples import no permutation code)
        from abstat.stats.permutation_power import JOIN_MAX

        if min(lx.size, ly.size) <= JOIN_MAX:
            _join_trimmed(result, x, y, confidence, inflate)
    return result


def _unresolved_level(alpha: float) -> str:
    """Why a drawn permutation reference bounds no interval at ``alpha`` when its draws cannot resolve it, or ''."""
    from abstat.stats.permutation import DRAWS_MAX, unresolved

    if not unresolved(alpha):
        return ""
    return (
        f"the permutation reference's {DRAWS_MAX:,} drawn arrangements resolve no p-value below "
        f"{1.0 / (DRAWS_MAX + 1.0):.2g}, and the level is {alpha:.2g} (a lower confidence can bound it)"
    )


TRIM = 0.1  # the share trimmed from each end by the small-sample partner test (floor(TRIM n) values)


def trimmed_logs(
    x: Any, y: Any, confidence: float, inflate: tuple[float, float] = (1.0, 1.0)
) -> tuple[float, tuple[float, float]]:
    """Yuen's :data:`TRIM`-trimmed t on the logarithms (Welch's t on trimmed
    means with winsorized variances, as ``scipy.stats.ttest_ind(trim=0.1)``, its
    degrees of freedom capped by :func:`abstat.stats.permutation_power.partner_df`):
    the p-value and the interval of the change in percent (NaN when neither
    side varies)."""
    import numpy as np

    from abstat.stats.distributions import stdtr, t_quantile

    parts = []
    for v, factor in zip((np.sort(np.log(x)), np.sort(np.log(y))), inflate, strict=True):
        n = v.size
        g = int(math.floor(TRIM * n))
        h = n - 2 * g
        w = np.clip(v, v[g], v[n - g - 1])
        d = (n - 1) * float(w.var(ddof=1)) / (h * (h - 1)) * factor if h > 1 else math.nan
        parts.append((float(v[g : n - g].mean()), d, h))
    (mx, dx, hx), (my, dy, hy) = parts
    se = math.sqrt(dx + dy)
    if not se > 0.0:
        return NAN, (NAN, NAN)
    from abstat.stats.permutation_power import partner_df

    df = float(partner_df((dx + dy) ** 2 / (dx * dx / (hx - 1) + dy * dy / (hy - 1)), hx, hy))
    est, q = my - mx, t_quantile(df, 0.5 + confidence / 2.0)
    p = min(1.0, 2.0 * stdtr(df, -abs(est / se)))
    return p, (to_pct(est - q * se, "log", 1.0), to_pct(est + q * se, "log", 1.0))


def _join_trimmed(result: Result, x: Any, y: Any, confidence: float, inflate: tuple[float, float]) -> None:
    """With at most :data:`abstat.stats.permutation_power.JOIN_MAX` values on a side a change is called only
    when Yuen's 10%-trimmed t on the logarithms calls it too: the p-value is
    the larger of the two tests', the interval the hull of both intervals (so
    it holds the Hodges-Lehmann interval and is at least as likely to cover
    the ratio).  Why: with 3 values against 500 and a small side 3x as wide
    as the other (same median), the studentized permutation Brunner-Munzel
    test calls 12% of draws different (measured, docs/statistics.md): three
    values in one tail have placements close together, so the ranks cannot
    tell a wide variant from a shifted one, and no rank test that has power
    there holds its level; the values' own spread can (the trimmed t is
    Welch's for so few values, valid for normal data of any spreads).  The
    joined test is valid whenever either test is (the permutation test when
    the variants have one shape, the trimmed t when both are symmetric about
    one centre), at the power of the weaker.  Trimmed rather than plain
    Welch (until wave 7): 3% interrupts in a big baseline raise its mean of
    logarithms by as much as a 1% slowdown of the few new runs, and Welch's t
    then called 2% of such slowdowns at 3 against 500 (15% trimmed)."""
    from abstat.stats.permutation_power import partner_df

    p, ci = trimmed_logs(x, y, confidence, inflate)
    if not (math.isfinite(p) and all(math.isfinite(v) for v in ci)):
        return
    result.p_value = max(result.p_value, p)
    result.ci = (min(result.ci[0], ci[0]), max(result.ci[1], ci[1]))
    if result.p_value < 1.0 - confidence and result.ci[0] <= 0.0 <= result.ci[1]:
        result.p_value = 1.0 - confidence  # the two tests call opposite directions: the hull decides
    m = min(x.size, y.size)
    result.method += (
        f"; with {m} values on a side, called only when Yuen's 10%-trimmed t on the logarithms agrees (degrees of "
        f"freedom Welch-Satterthwaite's, at most {float(partner_df(math.inf, m, m)):g}; p-value the larger of the "
        "two, interval the hull of both)"
    )


def default_change(
    x: Any,
    y: Any,
    confidence: float = 0.95,
    *,
    unit: str = "samples",
    inflate: tuple[float, float] = (1.0, 1.0),
    of: str = "",
    seed: int = 0,
    logs: tuple[Any, Any] | None = None,
    pseudo_medians: bool = True,
) -> Result:
    """The default comparison of two samples (numpy arrays of values, or of
    run centres with ``unit="runs"``; ``of`` names them, e.g. ``run medians``; ``logs``: their
    logarithms, if known; ``pseudo_medians``: as :func:`hodges_lehmann_ratio` takes it)."""
    import numpy as np

    positive = bool(np.all(x > 0) and np.all(y > 0))
    estimand = default_estimand(x.size, y.size, positive)
    if estimand == "hl_ratio":
        return hodges_lehmann_ratio(
            x, y, confidence, unit, inflate=inflate, of=of, seed=seed, logs=logs, pseudo_medians=pseudo_medians
        )
    if estimand == "geomean_ratio":
        return geomeans(x, y, confidence, unit, inflate=inflate, of=of)
    r = sample_means(
        x,
        y,
        confidence,
        inflate,
        f"Welch t on means{f' of {of}' if of else ''}, Fieller interval (some values <= 0: a ratio of "
        "pairs is undefined)",
        unit,
        single=0.0,
    )
    r.center = "auto"
    if of:
        r.center_kind = f"mean of {of}"
    return r


def centre_of(runs: list[Any], center: str = "auto", others: Sequence[list[Any]] = ()) -> tuple[float, str]:
    """A sample set's centre as a comparison with ``center`` compares it, and
    its kind (``pseudo-median``, ``geometric mean of run medians``...): one
    run or flat samples, or several runs reduced to their medians (means).
    The default rule is applied to the set's own size.  A pseudo-median's ties are spread as a comparison
    with ``others`` (the runs of the variants shown with it, reduced alike) spreads them
    (:func:`abstat.stats.hl_centre.centre`: alone, at its own finest gap)."""
    import numpy as np

    from abstat.stats.hl_centre import centre
    from abstat.stats.medians import median

    values, of = _compared(runs, center)
    if values is None:
        return math.nan, center
    suffix = f" of {of}" if of else ""
    positive = bool(np.all(values > 0))
    if center == "mean" or not positive:
        return float(values.mean()), "mean" + suffix
    if center == "median" and not of:
        return median(values), "median"
    if center == "auto" and values.size >= HL_MIN_N:
        beside = [v for v in (_compared(other, center)[0] for other in others) if v is not None and np.all(v > 0)]
        return math.exp(centre(np.log(values), [np.log(v) for v in beside])), "pseudo-median" + suffix
    return math.exp(float(np.log(values).mean())), "geometric mean" + suffix


def _compared(runs: list[Any], center: str) -> tuple[Any, str]:
    """The values a comparison reads of a variant's ``runs`` (None for none), and what they are of
    (``run medians``, ``run means``, or "" for one run's values)."""
    import numpy as np

    from abstat.stats.nested import run_centres

    arrays = [np.asarray(run, dtype=float) for run in runs if len(run)]
    if len(arrays) > 1:
        return run_centres(arrays, "mean" if center == "mean" else "median"), (
            "run means" if center == "mean" else "run medians"
        )
    return (arrays[0], "") if arrays else (None, "")
