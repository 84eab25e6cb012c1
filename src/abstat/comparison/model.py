"""The result values of a comparison; their attributes are the JSON fields
(``docs/json.md``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from abstat.stats.warnings import StatWarning

CENTERS = ("median", "mean")
OUTLIER_RULES = ("none", "tukey", "mad")
VERDICTS = ("faster", "slower", "equivalent", "no difference proven", "cannot judge")
JSON_VERSION = 1

#: The fixed vocabulary of the ``estimand`` field: the one quantity a
#: comparison estimates, whatever method computes it (docs/json.md).
ESTIMANDS = {
    "median_ratio": "ratio of medians",
    "median_difference": "difference of medians, relative to the baseline median",
    "mean_ratio": "ratio of means",
    "geomean_ratio": "ratio of the geometric means of the per-run {center}s",
    "mean_difference": "difference of the means of the per-run {center}s, relative to the baseline's",
}


def estimand_label(estimand: str, center: str) -> str:
    """The caption text of an estimand (``ratio of medians``...)."""
    return ESTIMANDS[estimand].format(center=center)


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
    (:data:`ESTIMANDS`).  When the data cannot support an interval the
    verdict is ``cannot judge`` and ``delta_pct``, ``ci_pct`` and
    ``p_value`` are NaN (null in JSON); a warning says why.
    """

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
    estimand: str = "median_ratio"

    @property
    def estimand_label(self) -> str:
        return estimand_label(self.estimand, self.center)

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
