"""Runs as the unit of a comparison: each run reduced to one centre, the
centres compared (split from :mod:`abstat.comparison.analyses`, whose
estimand families it uses, beside :mod:`abstat.comparison.estimands`, whose
default rule it applies to the run medians)."""

from __future__ import annotations

import math
from typing import Any

from abstat.comparison import estimands
from abstat.comparison.analyses import (
    UNBOUNDED,
    Result,
    _cannot,
    _clamped,
    _constant,
    means,
    negative_baseline,
    relative_interval,
    to_pct,
)
from abstat.errors import named
from abstat.stats.warnings import StatWarning


def run_centres(
    bx: list, by: list, center: str, confidence: float, found: list[StatWarning], names: tuple[str, str]
) -> Result:
    """Runs as the unit: each run reduced to its median (its mean with
    ``--center mean``), the run centres compared.  ``mean``: the ratio of the
    means of the run means (Welch, Fieller: pyperf's ratio); ``median``: the
    ratio of the geometric means of the run medians; ``auto``: the default
    rule on the run medians (:mod:`abstat.comparison.estimands`).  Run
    centres <= 0: ``mean_difference``."""
    import numpy as np

    from abstat.stats import nested

    per_run = "mean" if center == "mean" else "median"
    cx = nested.run_centres(bx, per_run)
    cy = nested.run_centres(by, per_run)
    kx, ky = cx.size, cy.size
    unit_text = f"runs are the independent unit: {kx} vs {ky}"
    found.extend(_few_runs(names, (kx, ky)))
    from abstat.comparison.two_runs import reason

    two = reason(bx, by, names)
    if two:
        estimand = {"auto": "hl_ratio", "median": "geomean_ratio"}.get(center, "mean_ratio")
        return _cannot(estimand, f"run {per_run}s compared ({unit_text})", center, "runs", two)
    constant = all(np.ptp(r) == 0 for r in (*bx, *by))
    positive = bool(np.all(cx > 0) and np.all(cy > 0))
    if center == "mean":
        return _run_means(cx, cy, confidence, unit_text, constant)
    if positive:
        if np.ptp(cx) == 0.0 and np.ptp(cy) == 0.0 and not constant:
            return _cannot(
                "geomean_ratio",
                f"Welch t on the logarithms of the run medians ({unit_text})",
                center,
                "runs",
                named(
                    "the per-run medians do not vary, so the run-to-run variation cannot be "
                    "estimated (quantized data: the run medians move in whole steps; {center} mean can "
                    "resolve smaller changes)",
                    "center",
                ),
            )
        if center == "auto":
            r = estimands.default_change(cx, cy, confidence, unit="runs", of="run medians")
        else:
            r = estimands.geomeans(cx, cy, confidence, "runs", center, of="run medians")
        r.center = center
        r.method += f" ({unit_text})"
        return r
    return _run_differences(cx, cy, bx, by, center, confidence, unit_text)


def _few_runs(names: tuple[str, str], counts: tuple[int, int]) -> list[StatWarning]:
    """A warning for each variant with fewer than 3 runs."""
    return [
        StatWarning(
            "too-few-samples",
            f"{name}: {k} run{'s' if k != 1 else ''}; the run-to-run variation is poorly known "
            "with fewer than 3 runs per variant (5 or more are better)",
            name,
        )
        for name, k in zip(names, counts)
        if k < 3
    ]


def _run_means(cx: Any, cy: Any, confidence: float, unit_text: str, constant: bool) -> Result:
    """``--center mean`` on runs: the ratio of the means of the run means (Welch, Fieller); a side
    with one run borrows the other side's run-to-run spread."""
    import numpy as np

    many = cx if cx.size > 1 else cy
    sd = [float(c.std(ddof=1)) if c.size > 1 else float(many.std(ddof=1)) if many.size > 1 else 0.0 for c in (cx, cy)]
    r = means(
        cx.size,
        float(cx.mean()),
        sd[0],
        cy.size,
        float(cy.mean()),
        sd[1],
        confidence,
        f"Welch t on the per-run means, Fieller interval ({unit_text})",
        "runs",
        nonnegative=bool(np.all(cx >= 0) and np.all(cy >= 0)),
        constant=constant and np.ptp(cx) == 0 and np.ptp(cy) == 0,
    )
    r.center, r.center_kind = "mean", "mean of run means"
    return r


def _run_differences(cx: Any, cy: Any, bx: list, by: list, center: str, confidence: float, unit_text: str) -> Result:
    """``mean_difference``: Welch's t on run medians of which some are <= 0,
    relative to the baseline's mean run median (Fieller's interval)."""
    import numpy as np

    from abstat.stats.distributions import stdtr, stdtrit
    from abstat.stats.ratio import welch_df

    kx, ky = cx.size, cy.size
    estimand, label = "mean_difference", "medians"
    est = float(cy.mean() - cx.mean())
    if kx >= 2 and ky >= 2:
        a1, a2 = float(cx.var(ddof=1)) / kx, float(cy.var(ddof=1)) / ky
        se = math.sqrt(a1 + a2)
        df = welch_df(kx, a1, ky, a2) if se > 0 else math.inf
        method = f"Welch t on per-run {label} ({unit_text})"
    else:
        # One side has a single run: borrow the other side's run-to-run
        # variance (pooled t, assumes equal between-run variance).
        many = cx if kx > 1 else cy
        df = many.size - 1
        a1, a2 = float(many.var(ddof=1)) / kx, float(many.var(ddof=1)) / ky
        se = math.sqrt(a1 + a2)
        method = f"t on per-run {label}, run-to-run variance from the variant with several runs ({unit_text})"
    reference = float(cx.mean())
    centres = (reference, float(cy.mean()))

    def cannot(reason: str) -> Result:  # (labelled with the centres its reason names: attack17 #4)
        r = _cannot(estimand, method, center, "runs", reason)
        r.centres, r.center_kind = centres, "mean of run medians"
        return r

    if reference == 0.0:
        return cannot(f"the baseline's run {label} average 0, so a relative change is undefined")
    if reference < 0.0:
        return cannot(negative_baseline(f"run {label}' average", reference))
    if not se > 0.0:
        if np.ptp(cx) == 0.0 and np.ptp(cy) == 0.0 and all(np.ptp(r) == 0 for r in (*bx, *by)):
            # every sample of each variant is one value: the change is exact (no interval)
            r = _constant(estimand, center, "runs", cx, cy, reference, "linear", unit_text)
            r.centres, r.center_kind = centres, "mean of run medians"
            return r
        return cannot(f"the per-run {label} do not vary, so the run-to-run variation cannot be estimated")
    q = stdtrit(df, 0.5 + confidence / 2.0)
    p = min(1.0, 2.0 * stdtr(df, -abs(est / se)))
    relative = relative_interval(reference, float(cy.mean()), math.sqrt(a1), math.sqrt(a2), q)
    if relative is None:
        return cannot(UNBOUNDED.format(what=f"runs' {label}"))
    nonnegative = bool(np.all(cx >= 0) and np.all(cy >= 0))
    return Result(
        estimand,
        to_pct(est, "linear", reference),
        _clamped(relative, nonnegative),
        p,
        method,
        center,
        "runs",
        centres=centres,
        center_kind="mean of run medians",
    )
