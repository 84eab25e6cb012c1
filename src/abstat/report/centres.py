"""What a row prints of the centres its comparison carries (:mod:`abstat.comparison.centres`
computes them and their warnings), and a cell's centre before any comparison (:func:`cell_centre`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

SHAPE_WORDS = "shapes differ"  # on a summary line; a table's cell says SHAPE_MARK, its footnote the words
SHAPE_MARK = "(shape)"
STEP_WORDS = "medians in grid steps"  # integer data one step of their grid from agreeing
STEP_MARK = "(step)"


def small_median(groups: Sequence[Any], center: str, rule: str) -> float | None:
    """:func:`shown_median` of a cell of one short run of finite floats, no outlier ``rule`` and a
    ``center`` other than the mean, in Python (a history report's 10^5 revisions x metrics cells of
    a few values each: numpy's per-call cost was most of its CPU); None for any other cell (several
    runs, long, not floats, not finite, holding a zero whose sign numpy's sort could place
    otherwise): :func:`shown_median` then decides."""
    if len(groups) != 1 or center == "mean" or rule != "none":
        return None
    values = groups[0]
    if len(values) > 32 or not _FLOAT.issuperset(map(type, values)) or not all(map(math.isfinite, values)):
        return None  # (types first: math.isfinite takes floats)
    if 0.0 in values:
        return None
    ordered = sorted(values)
    size = len(ordered)
    if not size:
        return None
    if all(map(float.is_integer, ordered)):
        return ordered[(size - 1) // 2]
    half = size // 2
    if size % 2:
        return ordered[half]
    low, high = ordered[half - 1], ordered[half]
    middle = (low + high) / 2.0  # as stats.medians.sorted_median takes it
    return middle if math.isfinite(middle) else low / 2.0 + high / 2.0


_FLOAT = frozenset((float,))


def has_shape_warning(comparison: Any) -> bool:
    """Whether the row must say that its centres cannot agree with its change (shapes, or grid steps)."""
    return bool(row_words(comparison))


def row_words(comparison: Any, short: bool = False) -> str:
    """What the row says when its centres cannot agree with its change ("" when they agree)."""
    codes = {w.code for w in getattr(comparison, "warnings", ()) or ()}
    if "medians-disagree" in codes:
        return SHAPE_MARK if short else SHAPE_WORDS
    if "medians-step" in codes:
        return STEP_MARK if short else STEP_WORDS
    return ""


def cell_centre(runs: Sequence[Sequence[float]], center: str, outliers: str) -> tuple[float, str, int, int]:
    """(centre, its kind, n, values dropped by the outlier rule) of a cell before any comparison: the
    median of the samples kept (on the data's grid for integer data: :mod:`abstat.report.centres`),
    or with several runs or ``--center mean`` the centre its comparisons compare (``centre_of``).
    A comparison then replaces them with the centres it agreed (:func:`abstat.report.matrix._agree`)."""
    if len(runs) == 1 and type(runs[0]) is list:  # one run of a list: the quick median reads it as it is
        quick = small_median(runs, center, outliers)
        if quick is not None:
            return quick, "median", len(runs[0]), 0
    from abstat.comparison.centres import kept_runs, shown_median
    from abstat.comparison.estimands import centre_of

    groups = [run if hasattr(run, "dtype") else list(run) for run in runs if len(run)]  # arrays stay arrays
    quick = small_median(groups, center, outliers)
    if quick is not None:
        return quick, "median", len(groups[0]), 0
    kept = kept_runs(groups[0] if len(groups) == 1 else groups, outliers) or []
    n = sum(len(run) for run in kept)
    dropped = sum(len(run) for run in groups) - n
    if len(groups) == 1 and center != "mean" and n:
        return shown_median(kept[0]), "median", n, dropped
    value, kind = centre_of([list(map(float, run)) for run in kept] or groups, center)
    return value, kind, n, dropped


PENDING = -1  # a cell's n while its centre waits for its comparisons (:func:`start_centre`)


def start_centre(cell: Any, center: str, outliers: str) -> None:
    """A cell's centre before any comparison (:func:`cell_centre`), or, when its comparisons will
    most likely replace it (a numpy array of finite floats, on which :func:`cell_centre` raises
    nothing), ``cell.n`` :data:`PENDING` until :func:`settle` says whether they did: the median of 10^6
    values a side, sorted again, was a tenth of ``compare FILE FILE``."""
    from abstat.stats.outliers import RULES

    runs = cell.sample_set.runs
    if len(runs) == 1 and outliers in RULES and _finite_floats(runs[0]):
        cell.n = PENDING
    else:
        cell.center, cell.shown_kind, cell.n, cell.dropped = cell_centre(runs, center, outliers)


def settle(cell: Any, center: str, outliers: str, replaced: bool = False) -> None:
    """A cell's pending centre (:func:`start_centre`) computed now, unless its comparison is about to
    replace all of it (``replaced``: centre, kind, n and values dropped), as it would have replaced it."""
    if cell.n == PENDING and not replaced:
        cell.center, cell.shown_kind, cell.n, cell.dropped = cell_centre(cell.sample_set.runs, center, outliers)


def _finite_floats(run: Any) -> bool:
    """Whether ``run`` is a non-empty one-dimensional numpy array of finite doubles."""
    if not (getattr(run, "dtype", None) == "float64" and run.ndim == 1 and run.size):
        return False
    import numpy as np

    return bool(np.isfinite(run).all())
