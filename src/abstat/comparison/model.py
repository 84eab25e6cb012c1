"""The result values of a comparison; their attributes are the JSON fields
(``docs/json.md``)."""

from __future__ import annotations

import math
from typing import Any

from abstat.fastdataclass import dataclass, field
from abstat.stats.warnings import StatWarning

CENTERS = ("auto", "median", "mean")
OUTLIER_RULES = ("none", "tukey", "mad")
VERDICTS = ("faster", "slower", "equivalent", "no difference proven", "cannot judge")
JSON_VERSION = 2

#: The fixed vocabulary of the ``estimand`` field: the one quantity a
#: comparison estimates, whatever method computes it (docs/json.md).
ESTIMANDS = {
    "hl_ratio": "Hodges-Lehmann ratio (median of the candidate/baseline ratios{of})",
    "geomean_ratio": "ratio of geometric means{of}",
    "median_ratio": "ratio of medians",
    "median_difference": "difference of medians, relative to the baseline median",
    "mean_ratio": "ratio of means{of}",
    "mean_difference": "difference of the means{of}, relative to the baseline's",
}

#: ``hl_ratio`` when either variant has ties: they were spread over their grid cells before the ratios were
#: taken (stats/hodges_lehmann.py), so the number is not the median of the raw values' ratios (issue 34).
TIES_SPREAD_LABEL = (
    "Hodges-Lehmann ratio (median of the candidate/baseline ratios{of} after spreading tied values over their grid "
    "cells)"
)
#: what the method of such a comparison says (comparison/estimands.py writes it; the label is chosen by it)
TIES_SPREAD_METHOD = "tied values read as spread evenly over their grid cells"
#: what it says when only some tied levels were spread: the others are further from their neighbours than the
#: tie-cell limit allows (stats/tie_cells.py) and keep their values (wave 20: the label said all were spread)
TIES_SOME_METHOD = "only some " + TIES_SPREAD_METHOD + " (levels further apart keep their values)"

RUN_CENTRES = {"mean": "run means", "median": "run medians", "auto": "run medians"}


def estimand_label(estimand: str, center: str, unit: str = "samples", ties_spread: bool | str = False) -> str:
    """The caption text of an estimand (``ratio of medians``...); with runs
    as the unit, of what per-run centres (``ratio of geometric means of the
    run medians``); ``ties_spread``: the Hodges-Lehmann ratio was computed
    with tied values spread over their grid cells (``"some"``: some of them)."""
    of = f" of the {RUN_CENTRES.get(center, 'run medians')}" if unit == "runs" else ""
    if estimand == "hl_ratio" and ties_spread:
        label = TIES_SPREAD_LABEL.format(of=of)
        return label.replace("spreading tied", "spreading some tied") if ties_spread == "some" else label
    return ESTIMANDS[estimand].format(of=of)


@dataclass
class RunSummary:
    n: int
    median: float
    mean: float
    stddev: float

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "median": _num(self.median), "mean": _num(self.mean), "stddev": _num(self.stddev)}


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
    lag1: float | None = field(default=None, repr=False)  # lag-1 rank autocorrelation (not in the JSON)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "n": self.n,
            "min": _num(self.min),
            "max": _num(self.max),
            "median": _num(self.median),
            "median_ci": [_num(v) for v in self.median_ci] if self.median_ci else None,
            "mean": _num(self.mean),
            "stddev": _num(self.stddev),
            "outliers": None
            if self.outliers_mild is None
            else {"mild": self.outliers_mild, "severe": self.outliers_severe, "dropped": self.dropped},
            "runs": [r.to_dict() for r in self.runs] if self.runs is not None else None,
            "between_run_share": _num(self.between_run_share),
        }


@dataclass
class Comparison:
    """One candidate against the baseline; attributes are the JSON fields.

    ``estimand`` names the quantity ``delta_pct`` and ``ci_pct`` estimate
    (:data:`ESTIMANDS`); ``centers`` are each variant's centre of that
    estimand (``center_kind`` says which: ``pseudo-median``, ``geometric
    mean``, ``median``, ``mean``, ``geometric mean of run medians``...).
    When the data cannot support an interval the verdict is ``cannot judge``,
    ``delta_pct`` and ``p_value`` are NaN (null in JSON) and ``ci_pct`` is
    None; a warning says why.
    """

    baseline: str
    candidate: str
    n: list[int]
    center: str
    delta_pct: float
    ci_pct: list[float] | None
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
    estimand: str = "hl_ratio"
    centers: list[float] | None = None
    center_kind: str = ""
    # set when the comparison is one of a family judged together (report/adjust.py: adjust_family)
    p_adjusted: float | None = None
    adjustment: str | None = None

    @property
    def estimand_label(self) -> str:
        """The caption every format prints (and the JSON's ``estimand_label``): what was computed."""
        spread = "some" if TIES_SOME_METHOD in self.method else TIES_SPREAD_METHOD in self.method
        return estimand_label(self.estimand, self.center, self.unit, spread)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "n": list(self.n),
            "runs": list(self.runs) if self.runs is not None else None,
            "unit": self.unit,
            "center": self.center,
            "estimand": self.estimand,
            "estimand_label": self.estimand_label,
            "centers": [_num(c) for c in self.centers] if self.centers else None,
            "center_kind": self.center_kind or None,
            "delta_pct": _num(self.delta_pct),
            "ci_pct": [_num(self.ci_pct[0]), _num(self.ci_pct[1])] if self.ci_pct is not None else None,
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
            "p_adjusted": _num(self.p_adjusted),
            "adjustment": self.adjustment,
        }


def _num(value: float | None) -> float | None:
    """JSON has no infinities or NaN: they become null."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)
