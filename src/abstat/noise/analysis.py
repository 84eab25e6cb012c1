"""Per-metric noise of an A/A experiment: spread, detectable change, stability."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from abstat.noise.stability import TESTS, BlockCalls, Stability, block_calls, stability
from abstat.render.units import format_p, format_size_pct

POWER = 0.8
TARGETS_PCT = (1.0, 2.0, 5.0)


@dataclass
class RunValue:
    """One run's value of a metric (its centre as ``abstat compare`` reduces a run), in run order."""

    variant: str
    invocation: int
    boot: str | None
    value: float
    samples: int = 1  # how many samples the run held (several: compare takes the runs as its unit)


@dataclass
class MetricNoise:
    metric: str
    unit: str | None
    runs: dict[str, int]
    mean: float
    stddev: float
    cv_pct: float | None
    robust_cv_pct: float | None
    detectable_pct: float | None
    samples_needed: dict[str, int | None]
    stability: Stability | None
    blocks: BlockCalls | None
    invocations: int
    boots: int
    between_share: float | None
    between_p: float | None
    aa_delta_pct: float | None
    aa_ci_pct: list[float] | None
    aa_significant: bool | None
    confidence: float
    notes: list[str] = field(default_factory=list)
    estimand: str = ""  # the comparison the sizes are for (abstat compare's default on these runs)
    estimand_label: str = ""
    unresolvable: str = ""  # why no number of runs resolves a change ("" if some does)
    aa_cannot: str = ""  # why compare cannot judge the A/A pair ("" when it can)
    real_changes: bool = False  # runs on a grid: the sizes are for real changes of the values

    @property
    def stable(self) -> bool | None:
        if self.stability is None:
            return None
        return self.stability.stable and not (self.blocks is not None and self.blocks.clearly_high)

    def verdict(self) -> str:
        """The finding in words."""
        alpha = 1.0 - self.confidence
        if self.stability is None:
            return "too few runs to judge stability (at least 6 are needed; 16 for the A/A blocks)"
        parts = []
        if self.blocks is not None:
            rate = (
                f"A/A comparisons of disjoint blocks called a difference in {self.blocks.calls} of"
                f" {self.blocks.comparisons} ({self.blocks.rate:.0%}; a pair calls one {alpha:.0%} of the time by"
                " chance, and pairs that share a block call together: the Kruskal-Wallis test across all"
                f" blocks, p {format_p(self.blocks.p_value)}, judges them)"
            )
        else:
            rate = "too few runs for A/A blocks"
        parts.append(self._stable_text(rate) if self.stable else self._unstable_text(self.stability, rate, alpha))
        if self.between_share is not None and self.between_p is not None and self.between_p < alpha:
            parts.append(
                f"{self.between_share:.0%} of the variance lies between invocations: repeat the"
                " experiment in several invocations (or boots) and compare run groups."
            )
        if self.aa_significant:
            parts.append("The two identical variants differ significantly: a sign of instability or of order effects.")
        return " ".join(parts)

    def _stable_text(self, rate: str) -> str:
        """A stable series: the A/A rate, and the smallest change this n detects (or why none is resolvable)."""
        level = self.stability.alpha / TESTS if self.stability is not None else 0.0
        text = (
            f"stable: no drift, step, autocorrelation or difference between blocks beyond chance along the"
            f" {sum(self.runs.values())} runs (each of the four tests flags below p {format_p(level, 3)}); {rate}."
        )
        text += self._borderline(level)
        if self.detectable_pct is not None:
            text += (
                f" At this n, changes of {format_size_pct(self.detectable_pct)} or more ({self._of_what()}) are"
                f" detected {POWER:.0%} of the time; smaller claims need more runs."
            )
        elif self.unresolvable:
            text += f" No number of runs resolves a change here: {self.unresolvable}."
        return text

    def _of_what(self) -> str:
        if self.real_changes:
            return f"real changes of the values; abstat compare compares the {self.estimand_label} here"
        return f"of the {self.estimand_label}, what abstat compare compares here"

    def _borderline(self, level: float) -> str:
        """A stable series whose tests' own p-values fall below alpha, though not below the level each
        test has when four share alpha: say so, in the tests' words."""
        if self.stability is None:
            return ""
        alpha = self.stability.alpha
        tests = [
            ("the trend's", self.stability.trend.p_value),
            ("the autocorrelation's", self.stability.autocorrelation.p_value),
            ("the step's", self.stability.step.p_value),
        ]
        if self.blocks is not None:
            tests.append(("the blocks' Kruskal-Wallis", self.blocks.p_value))
        low = [f"{name} p {format_p(p)}" for name, p in tests if level <= p < alpha]
        if not low:
            return ""
        return (
            f" Borderline: {' and '.join(low)} {'is' if len(low) == 1 else 'are'} below {alpha:.0%} on"
            f" {'its' if len(low) == 1 else 'their'} own, not below {format_p(level, 3)}; more runs will tell."
        )

    def _unstable_text(self, stability: Stability, rate: str, alpha: float) -> str:
        """An unstable series: why (the stability tests', the A/A blocks'), and what to do."""
        reasons = list(stability.reasons)
        if self.blocks is not None and self.blocks.clearly_high:
            reasons.append(
                f"disjoint blocks of runs differ (Kruskal-Wallis p = {self.blocks.p_value:.2g}):"
                f" A/A comparisons of them called a difference in {self.blocks.calls} of"
                f" {self.blocks.comparisons} ({self.blocks.rate:.0%}; about {alpha:.0%} is chance)"
            )
        elif self.blocks is not None:
            reasons.append(rate)
        return (
            "UNSTABLE: " + "; ".join(reasons) + ". Runs made at different times differ more than"
            " their spread says: results measured apart are not comparable, and the detectable"
            " change is optimistic. Interleave variants (abstat run does) and fix what abstat doctor"
            " reports."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "unit": self.unit,
            "runs": self.runs,
            "mean": self.mean,
            "stddev": self.stddev,
            "cv_pct": self.cv_pct,
            "robust_cv_pct": self.robust_cv_pct,
            "detectable_change_pct": self.detectable_pct,
            "power": POWER,
            "confidence": self.confidence * 100,
            "estimand": self.estimand or None,
            "estimand_label": self.estimand_label or None,
            "real_changes": self.real_changes,
            "unresolvable": self.unresolvable or None,
            "runs_needed_per_variant": self.samples_needed,
            "trend": self.stability.trend.to_dict() if self.stability else None,
            "autocorrelation": self.stability.autocorrelation.to_dict() if self.stability else None,
            "step": self.stability.step.to_dict() if self.stability else None,
            "aa_blocks": self.blocks.to_dict() if self.blocks else None,
            "invocations": self.invocations,
            "boots": self.boots,
            "between_share": self.between_share,
            "between_p": self.between_p,
            "aa_compare": {
                "delta_pct": self.aa_delta_pct,
                "ci_pct": self.aa_ci_pct,
                "significant": self.aa_significant,
                "cannot_judge": self.aa_cannot or None,
            },
            "stable": self.stable,
            "verdict": self.verdict(),
            "notes": list(self.notes),
        }


def _robust_cv(values: list[float]) -> float | None:
    median = statistics.median(values)
    if median == 0:
        return None
    mad = statistics.median(abs(v - median) for v in values)
    return 100.0 * 1.4826 * mad / abs(median)


def detectable_change(
    a: list[float],
    b: list[float],
    *,
    confidence: float,
    power: float = POWER,
    center: str = "auto",
    change: Any = None,
    samples: Any = None,
    length: float = 0.0,
) -> tuple[float | None, dict[str, int | None], Any]:
    """(smallest change in % detected with ``power`` at these n, runs per
    variant needed for 1, 2 and 5 %, the sizing), for the estimand ``abstat
    compare`` would use on these runs (:mod:`abstat.comparison.sizing`, as
    ``abstat plan``).  ``change``: runs of grid values, the change of their spread medians that a real
    change makes (:func:`abstat.comparison.planning_grid.spread_median_change`); the changes are then real
    changes of the values, and both variants' runs are sized at their pooled spread, as plan does; with
    ``samples`` (the runs' samples pooled) and ``length`` (samples a run), by plan's own sizer of run
    medians (:class:`abstat.comparison.planning_nested.RunSizer`: the candidate's run medians reshaped
    as a real change reshapes them), so that noise and plan give one answer.  Otherwise the A/A runs of
    both variants are one pilot, sized as ``abstat plan`` sizes one pilot's values (``plan`` of the
    same values gives the same sizes; attack22 A5: sized on each variant's own runs, 17 runs were
    advised where compare delivered 70% power and ``plan`` of the pooled runs said 20)."""
    import numpy as np

    from abstat.comparison.planning_grid import real_change
    from abstat.comparison.planning_nested import common_spread
    from abstat.comparison.sizing import sizing

    alpha = 1.0 - confidence
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(x.size, y.size) < 2:
        return None, {f"{p:g}%": None for p in TARGETS_PCT}, None
    if change is not None and samples is not None and length > 1:
        return _run_sizing(x, y, samples, length, center, confidence, power)
    if change is not None:
        x, y = common_spread(x, y)
        size = sizing(x, y, center, confidence)
    else:  # A/A: both variants' runs are one pilot, sized as `abstat plan` sizes one pilot's values
        pooled = np.concatenate([x, y])
        size = sizing(pooled, pooled, center, confidence)
    smallest = size.detectable(x.size, y.size, alpha, power)
    if change is not None and smallest is not None:
        smallest = real_change(change, smallest)
    needed = {f"{p:g}%": size.needed(p if change is None else change(p), alpha, power) for p in TARGETS_PCT}
    return smallest, needed, size.at(x.size, y.size)


def _run_sizing(
    x: Any, y: Any, samples: Any, length: float, center: str, confidence: float, power: float
) -> tuple[float | None, dict[str, int | None], Any]:
    """:func:`detectable_change` for runs of ``length`` grid samples, by plan's sizer: the run medians'
    variance is the variants' own, averaged (plan's between-run plus within-run parts at the pilot's length)."""
    import numpy as np

    from abstat.comparison.planning_nested import RunSizer

    alpha = 1.0 - confidence
    spread = (float(np.var(x, ddof=1)) + float(np.var(y, ddof=1))) / 2.0
    sizer = RunSizer(x, y, spread, 0.0, length, center, confidence, samples)
    smallest = sizer.detectable(length, x.size, y.size, alpha, power)
    needed = {f"{p:g}%": sizer.runs(length, p, alpha, power) for p in TARGETS_PCT}
    return smallest, needed, sizer.pilot.at(x.size, y.size)


def analyse_metric(
    metric: str,
    unit: str | None,
    runs: list[RunValue],
    *,
    variants: tuple[str, str],
    confidence: float = 0.95,
    blocks: int | None = None,
    seed: int = 0,
    samples: Any = None,
) -> MetricNoise:
    """The noise report of one metric from its runs in run order (``samples``: the runs' samples pooled,
    for runs of several samples on a grid, whose sizes are then for real changes)."""
    values = [r.value for r in runs]
    by_variant = {name: [r.value for r in runs if r.variant == name] for name in variants}
    notes: list[str] = []
    mean = statistics.fmean(values)
    stddev = statistics.stdev(values) if len(values) > 1 else 0.0
    ns = tuple(len(v) for v in by_variant.values())
    nested = any(r.samples > 1 for r in runs)  # compare's unit is then the run: its centres as runs
    change = _grid_change(samples, nested, notes)
    length = statistics.fmean(r.samples for r in runs) if nested else 0.0
    detectable, needed, size = detectable_change(
        by_variant[variants[0]],
        by_variant[variants[1]],
        confidence=confidence,
        change=change,
        samples=samples,
        length=length,
    )
    stable = stability(values, 1.0 - confidence) if len(values) >= 6 else None
    calls = block_calls(values, confidence, blocks=blocks, seed=seed)
    groups = _by_invocation(runs)
    share, share_p = _between_share(groups, notes)
    aa_delta, aa_ci, aa_significant, aa_cannot = _aa_comparison(by_variant, variants, values, confidence, seed, nested)
    if len(set(values)) == 1:
        notes.append("every run gave the same value: no noise to measure at this resolution")
    estimand, label, reason = (size.estimand, size.label, size.reason) if size is not None else ("", "", "")
    return MetricNoise(
        metric=metric,
        unit=unit,
        runs=dict(zip(variants, ns, strict=False)),
        mean=mean,
        stddev=stddev,
        cv_pct=100.0 * stddev / abs(mean) if mean else None,
        robust_cv_pct=_robust_cv(values),
        detectable_pct=detectable if detectable is None or math.isfinite(detectable) else None,
        samples_needed=needed,
        stability=stable,
        blocks=calls,
        invocations=len(groups),
        boots=len({r.boot for r in runs}),
        between_share=share,
        between_p=share_p,
        aa_delta_pct=aa_delta,
        aa_ci_pct=aa_ci,
        aa_significant=aa_significant,
        aa_cannot=aa_cannot,
        confidence=confidence,
        notes=notes,
        estimand=estimand,
        estimand_label=label,
        unresolvable=reason,
        real_changes=change is not None,
    )


def _grid_change(samples: Any, nested: bool, notes: list[str]) -> Any:
    """For runs of several samples on a grid (``samples`` pooled), the change of the spread run medians
    a real change makes (:func:`abstat.comparison.planning_grid.spread_median_change`), and a note that
    says so; otherwise None."""
    from abstat.comparison.planning_grid import spread_median_change

    change = spread_median_change(samples) if nested and samples is not None else None
    if change is not None:
        notes.append(
            "values on a grid: the changes sized are real changes of the values (a real 1% moves the spread run"
            f" medians by about {change(1.0):.2g}%: a normal latent fitted to the levels)"
        )
    return change


def _by_invocation(runs: list[RunValue]) -> dict[int, list[float]]:
    """The runs' values grouped by invocation, in run order."""
    groups: dict[int, list[float]] = {}
    for run in runs:
        groups.setdefault(run.invocation, []).append(run.value)
    return groups


def _between_share(groups: dict[int, list[float]], notes: list[str]) -> tuple[float | None, float | None]:
    """The share of the variance between invocations and its p-value (None, None with one invocation:
    then a note says how to get several)."""
    if len(groups) <= 1:
        notes.append(
            "one invocation: the between-run share needs runs from several invocations or boots"
            " (run abstat noise again with the same --experiment, after a reboot)"
        )
        return None, None
    import numpy as np

    from abstat.stats.nested import variance_components

    components = variance_components([np.asarray(g, dtype=float) for g in groups.values()])
    if components is None:
        return None, None
    return components.share_between, components.p_value


def _aa_comparison(
    by_variant: dict[str, list[float]],
    variants: tuple[str, str],
    values: list[float],
    confidence: float,
    seed: int,
    nested: bool = False,
) -> tuple[float | None, list[float] | None, bool | None, str]:
    """The A/A comparison of the two variants: change, interval, whether it was called significant (None
    without 3 runs each or without any variation) and, when compare cannot judge, its reason.  ``nested``:
    the runs held several samples each, so compare judges them as runs (as ``abstat compare`` of them)."""
    from abstat.comparison import compare

    if min(len(v) for v in by_variant.values()) < 3 or len(set(values)) <= 1:
        return None, None, None, ""
    a, b = (by_variant[name] for name in variants)
    if nested:
        result = compare([[v] for v in a], [[v] for v in b], confidence=confidence, seed=seed)
    else:
        result = compare(a, b, confidence=confidence, seed=seed)
    if result.verdict == "cannot judge":
        why = next((w.message for w in result.warnings if w.code == "cannot-judge"), "no interval can be given")
        return None, None, None, why
    ci = list(result.ci_pct) if result.ci_pct is not None else None
    return result.delta_pct, ci, bool(result.significant), ""
