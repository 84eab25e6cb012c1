"""The centres a comparison carries, made to agree with its change.

A comparison estimates one quantity (the Hodges-Lehmann ratio by default)
whose per-variant "centres" (one-sample pseudo-medians) need not move the way
the two-sample estimate moves: ``519.5 µs → 482.0 µs  +9% [-30, +42]`` reads
as an arithmetic error.  :func:`abstat.comparison.compare` (so
``abstat.compare``, ``compare_many`` and every format of every command) therefore
carries each side's **median** of exactly the samples compared (after the outlier
rule), and for data on an integer grid (cycle counts, context switches) a median
that is one of the values (``median_low``), so integer data never print a
fraction.  Ratio estimands whose centres are the ratio's own terms (geometric
means, means) keep them, on integer data too, since their ratio *is* the change:
a median beside a ratio of means is a pair of numbers that need not agree with it.

:func:`agree` then checks the pair: it must move the way the change moves and
its ratio must lie inside the interval.  When it does not, the distributions
differ in shape (or in step) more than in location, no pair of centres can agree
with the change, and the comparison carries a ``medians-disagree`` warning
(``medians-step`` for integer data one grid step from agreeing): every format
says so on the row (:mod:`abstat.report.centres`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from abstat.stats.warnings import StatWarning

_MEDIAN_ESTIMANDS = ("hl_ratio", "median_ratio", "median_difference")


def kept_runs(data: Any, rule: str) -> list[Any] | None:
    """The runs of ``data`` (what :func:`abstat.compare` takes) after the outlier ``rule``, as numpy
    arrays; None for summary statistics (no values)."""
    from abstat.comparison.inputs import as_variant
    from abstat.stats.outliers import classify_runs

    variant = as_variant(data, "data")
    if variant.runs is None:
        return None
    if rule == "none":
        return list(variant.runs)
    return classify_runs(list(variant.runs), rule)[3]


def on_integer_grid(values: Any) -> bool:
    """All values whole numbers (counts, cycles, nanoseconds as integers)."""
    import numpy as np

    array = np.asarray(values, dtype=float)
    return bool(array.size) and bool(np.isfinite(array).all()) and bool((array == np.round(array)).all())


def shown_median(values: Any) -> float:
    """The median a row prints: on integer data one of the values (the lower middle one when the
    count is even and the two middle values differ), else the usual median."""
    import numpy as np

    return sorted_shown_median(np.sort(np.asarray(values, dtype=float)))


def sorted_shown_median(array: Any, integer: bool | None = None) -> float:
    """:func:`shown_median` of a sorted float array (``integer``: :func:`on_integer_grid` of it, if
    known)."""
    import numpy as np

    from abstat.stats.medians import sorted_median

    if on_integer_grid(array) if integer is None else integer:
        return float(array[(array.size - 1) // 2])
    if array.size and not np.isnan(array[-1]):  # (sorted: a NaN would be last)
        return sorted_median(array)  # np.median's value, without importing numpy.ma (start-up)
    return float(np.median(array))


def agree(comparison: Any, baseline: Any, candidate: Any, ordered: Sequence[Any] = ()) -> Any:
    """``comparison`` (of ``baseline`` and ``candidate``, the data it was computed from) with the centres
    every format prints (see the module) and, when they cannot agree with the change, a
    ``medians-disagree`` warning naming both moves.  ``ordered``: the values each variant compared
    after the outlier rule, sorted, if known (``baseline`` and ``candidate`` are then not read again)."""
    if comparison.unit == "runs" or comparison.summaries and any(s.kind == "summary" for s in comparison.summaries):
        return comparison  # centres of run centres, or means of summaries: the estimand's own terms
    if len(ordered) == 2:
        flat = list(ordered)
    else:
        import numpy as np

        base_runs, candidate_runs = (kept_runs(data, comparison.outlier_rule) for data in (baseline, candidate))
        if base_runs is None or candidate_runs is None:
            return comparison
        flat = [np.sort(_concatenate(base_runs)), np.sort(_concatenate(candidate_runs))]
    levels = [_runs_once(values) for values in flat]  # (sorted: each side's distinct values)
    grids = [on_integer_grid(values) for values in levels]  # (whole and finite: every value iff every level)
    integer = all(grids)
    centres, kind = comparison.centers, comparison.center_kind
    if comparison.estimand in _MEDIAN_ESTIMANDS or not centres:
        centres, kind = [sorted_shown_median(*side) for side in zip(flat, grids, strict=True)], "median"
    changed = dataclasses.replace(
        comparison, centers=list(centres), center_kind=kind, warnings=list(comparison.warnings)
    )
    warning = _disagreement_warning(comparison, centres, kind, levels if integer else None)
    if warning is not None:
        changed.warnings.append(warning)
    return changed


def within_step(
    before: float, after: float, step: float, ci_pct: Sequence[float] | None, delta_pct: float = 0.0
) -> bool:
    """Whether a candidate centre at most one grid ``step`` from ``after`` would agree with the change
    ``delta_pct`` and its interval ``ci_pct`` (inside the interval, not moving against the change): the
    data's grid, not their shape, keeps the printed pair from agreeing.  Medians several steps apart
    that move against the change are not one step from agreeing (newcomer22's item 6)."""
    if ci_pct is None or not before:
        return False
    low, high = sorted(before * (1.0 + bound / 100.0) for bound in ci_pct)
    lowest, highest = max(low, after - step), min(high, after + step)
    if delta_pct > 0:  # a candidate that agrees does not move down from before (nor up for a decrease)
        lowest = max(lowest, before)
    elif delta_pct < 0:
        highest = min(highest, before)
    return lowest <= highest


def _disagreement_warning(
    comparison: Any, centres: Sequence[float], kind: str, integer_sides: Sequence[Any] | None
) -> StatWarning | None:
    """The warning of a printed pair that cannot agree with the change: ``medians-step`` when integer
    data are one step of their grid from agreeing, else ``medians-disagree`` (None when they agree)."""
    problem = disagreement(centres[0], centres[1], comparison.delta_pct, comparison.ci_pct)
    if not problem:
        return None
    step = grid_step(integer_sides) if integer_sides is not None else 0.0
    if step and within_step(centres[0], centres[1], step, comparison.ci_pct, comparison.delta_pct):
        return StatWarning(
            "medians-step",
            f"{comparison.candidate}: {kind}s {problem}; on a grid of {step:g} they move in whole steps",
            comparison.candidate,
        )
    return StatWarning(
        "medians-disagree",
        f"{comparison.candidate}: {kind}s {problem}; the distributions differ in shape more than in location",
        comparison.candidate,
    )


def grid_step(sides: Sequence[Any]) -> float:
    """The step of integer data: the greatest common divisor of the differences between their values
    (1 for counts; 0 when there is no difference to measure it by)."""
    import numpy as np

    # (np.unique's values: sorted, each once; whole numbers, so no NaN to collapse)
    values = _runs_once(np.sort(np.concatenate([_runs_once(np.asarray(side, dtype=float)) for side in sides])))
    if values.size < 2:
        return 0.0
    step = 0
    for gap in np.diff(values[:100_000]).astype(np.int64):
        step = math.gcd(step, int(gap))
        if step == 1:
            break
    return float(step)


def _runs_once(values: Any) -> Any:
    """``values`` less each value equal to the one before it: every distinct value is still there, and few
    are left to sort of a sorted, tied side (grid data: a handful of levels)."""
    import numpy as np

    if not values.size:
        return values
    new = np.empty(values.size, dtype=bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return values[new]


def disagreement(before: float, after: float, delta_pct: float, ci_pct: Sequence[float] | None) -> str:
    """Why the printed pair ``before -> after`` contradicts the change ``delta_pct`` with interval
    ``ci_pct`` (both in percent), or ``""`` when it agrees (or there is no change to agree with)."""
    if ci_pct is None or not math.isfinite(delta_pct) or not before or not math.isfinite(before):
        return ""
    moved = 100.0 * (after / before - 1.0)
    low, high = ci_pct
    slack = 1e-9 * max(1.0, abs(low), abs(high))
    if moved < low - slack or moved > high + slack:
        return f"move {moved:+.3g}%, outside the interval [{low:+.3g}, {high:+.3g}]"
    if (after - before) * delta_pct < 0:
        return f"move {moved:+.3g}%, against the change {delta_pct:+.3g}%"
    return ""


def _concatenate(runs: list[Any]) -> Any:
    import numpy as np

    return np.concatenate([np.asarray(run, dtype=float) for run in runs]) if runs else np.asarray([], dtype=float)
