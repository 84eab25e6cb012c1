"""What ``abstat plan`` answers: the pilots' summaries, runs x samples allocations and the plan
(:func:`abstat.comparison.planning.plan` computes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_COST_RATIOS = (1.0, 10.0, 100.0)


@dataclass
class VariantPilot:
    name: str
    n: int
    mean: float
    stddev: float
    runs: int | None = None  # nested pilots: number of runs
    current_power: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "n": self.n,
            "mean": self.mean,
            "stddev": self.stddev,
            "runs": self.runs,
            "current_power": self.current_power,
        }


@dataclass
class Allocation:
    cost_ratio: float
    assumed: bool
    samples_per_run: int
    runs_per_variant: int | None
    samples_per_variant: int | None
    relative_cost: float | None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


NESTED_NOTE = (
    "runs x samples: Kalibera & Jones' allocation from the variance components of the samples, "
    "for the ratio of the means of the run means (Welch's t on run means)"
)


@dataclass
class Plan:
    """What ``abstat plan`` answers (``to_dict()`` is its JSON)."""

    baseline: str
    detect: float  # absolute change to detect
    detect_pct: float | None
    power: float
    confidence: float  # percent
    method: str  # "flat" or "nested"
    variants: list[VariantPilot]
    samples_per_variant: int | None  # flat plan (for nested: if runs were ignored)
    pairs: list[dict[str, object]] = field(default_factory=list)
    within: float | None = None
    between: float | None = None
    allocations: list[Allocation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    estimand: str = "hl_ratio"  # the comparison the sizes are for (docs/json.md vocabulary)
    estimand_label: str = ""
    center: str = "auto"

    def to_dict(self) -> dict[str, object]:
        return {
            "baseline": self.baseline,
            "detect": self.detect,
            "detect_pct": self.detect_pct,
            "power": self.power,
            "confidence": self.confidence,
            "method": self.method,
            "estimand": self.estimand,
            "estimand_label": self.estimand_label,
            "center": self.center,
            "variants": [v.to_dict() for v in self.variants],
            "samples_per_variant": self.samples_per_variant,
            "pairs": self.pairs,
            "variance_components": None if self.within is None else {"within": self.within, "between": self.between},
            "allocations": [a.to_dict() for a in self.allocations],
            "notes": self.notes,
        }


def change_to_detect(centre: float, detect: float, relative: bool) -> tuple[float, float]:
    """The change to detect in percent and absolute, of a baseline centre ``centre``."""
    if centre <= 0:  # as compare says it: no relative change against a centre at or below 0
        from abstat.comparison.analyses import negative_baseline

        raise ValueError(negative_baseline("centre", centre))
    if relative:
        return detect, centre * detect / 100.0
    return 100.0 * detect / centre, detect
