"""``abstat plan``: pilot data -> samples (or runs x samples per run) per variant.

Flat pilots are sized for the estimand ``abstat compare`` would use on data
like the pilot's (:mod:`abstat.comparison.sizing`: the default Hodges-Lehmann
ratio, geometric means below 10 values, ``--center median`` or ``mean``);
summary statistics (``n:mean:stddev``) only allow the ratio of means
(:mod:`abstat.stats.power`, Welch's t).  Nested pilots get Kalibera & Jones'
runs x samples allocation from the variance components of
:func:`abstat.stats.nested.variance_components`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from abstat.comparison.analyses import negative_baseline
from abstat.comparison.planning_model import (
    DEFAULT_COST_RATIOS,
    NESTED_NOTE,
    Allocation,
    Plan,
    VariantPilot,
    change_to_detect,
)
from abstat.errors import named
from abstat.stats.power import plan_nested, power_two_sample, samples_per_side


def _pilot_of(name: str, data: object, outliers: str = "none") -> tuple[VariantPilot, list[list[float]] | None, Any]:
    """(summary, runs or None, the flat values as a numpy array or None for
    summary statistics) of one variant's pilot data, after dropping outliers
    by ``outliers`` (per run, as ``abstat compare`` does)."""
    import numpy as np

    from abstat.stats.outliers import keep_mask

    data = getattr(data, "data", data)  # readers.specs.VariantData
    if hasattr(data, "n") and hasattr(data, "mean") and hasattr(data, "stddev"):
        return VariantPilot(name, int(data.n), float(data.mean), float(data.stddev)), None, None
    values = list(data)  # type: ignore[call-overload]
    runs = None
    if values and hasattr(values[0], "__len__"):  # a sequence of runs
        runs = [list(map(float, run)) for run in values]
    else:
        runs = [list(map(float, values))]
    arrays = [np.asarray(run, dtype=float) for run in runs]
    arrays = [a[keep_mask(a, outliers)] for a in arrays]
    runs = [a.tolist() for a in arrays if a.size]
    flat = np.concatenate(arrays) if arrays else np.empty(0)
    if flat.size < 2:
        raise ValueError(
            f"{name}: a pilot needs at least 2 values" + (" after dropping outliers" if outliers != "none" else "")
        )
    mean, stddev = _mean_sd(flat.tolist())
    if len(runs) > 1:
        return VariantPilot(name, int(flat.size), mean, stddev, runs=len(runs)), runs, flat
    return VariantPilot(name, int(flat.size), mean, stddev), None, flat


def _mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and standard deviation without overflow: computed on the values
    divided by a power of two near the largest magnitude (exact), so values
    near 1e308 do not sum to infinity."""
    import numpy as np

    array = np.asarray(values, dtype=float)
    top = float(np.max(np.abs(array)))
    factor = math.ldexp(1.0, -math.frexp(top)[1]) if top > 1e300 else 1.0
    scaled = array * factor
    return float(np.mean(scaled)) / factor, float(np.std(scaled, ddof=1)) / factor


def plan(
    variants: Mapping[str, object],
    *,
    detect: float,
    relative: bool = True,
    power: float = 0.8,
    confidence: float = 95.0,
    cost_ratio: float | None = None,
    center: str = "auto",
    outliers: str = "none",
) -> Plan:
    """Samples per variant needed to detect a change of ``detect``.

    ``variants``: pilot data by name, the first is the baseline; each is a
    sequence of numbers, a sequence of runs (nested), a Summary
    (``n, mean, stddev``) or a ``readers.specs.VariantData``.  ``detect`` is
    a percentage of the baseline mean (``relative=True``) or an absolute
    change.  ``confidence`` in percent (0.95 is read as 95 %).
    ``cost_ratio``: cost of a new run / cost of one sample in a run (nested
    pilots; without it the plan shows ratios 1, 10 and 100).  ``center`` and
    ``outliers``: as for ``abstat compare``; the sizes are for the estimand it
    would use (a relative ``detect`` is a change of that estimand, an
    absolute one is taken relative to the baseline's centre of it).
    """
    confidence = _checked_settings(variants, detect, power, confidence)
    from abstat.comparison.planning_nested import common_units

    variants, mismatch = common_units(variants)
    from abstat.comparison.planning_scale import scaled_pilots, unscale

    variants, detect, factor = scaled_pilots(variants, detect, relative)  # values near 1e±300 at ordinary sizes
    result = _plan(variants, detect, relative, power, confidence, cost_ratio, center, outliers)
    unscale(result, factor)
    result.notes.extend(mismatch)
    return result


def _plan(
    variants: Mapping[str, object],
    detect: float,
    relative: bool,
    power: float,
    confidence: float,
    cost_ratio: float | None,
    center: str,
    outliers: str,
) -> Plan:
    pilots, nested, flats = _pilots(variants, outliers)
    if not nested and all(f is not None for f in flats):
        return _flat_plan(pilots, flats, detect, relative, power, confidence, center)
    if center != "mean" and len(nested) == len(pilots):  # compare compares the run medians
        from abstat.comparison.planning_nested import median_plan

        medians = median_plan(pilots, nested, flats, detect, relative, power, confidence, cost_ratio, center)
        if medians.method == "nested":
            return medians
    alpha = 1.0 - confidence / 100.0
    delta, delta_pct = _mean_delta(pilots[0], detect, relative)
    pairs, notes = _mean_pairs(pilots, delta, alpha, power)
    result = Plan(
        baseline=pilots[0].name,
        detect=delta,
        detect_pct=delta_pct,
        power=power,
        confidence=confidence,
        method="nested" if nested else "flat",
        variants=pilots,
        samples_per_variant=_largest(pairs),
        pairs=pairs,
        notes=notes,
        estimand="mean_ratio",
        center="mean",  # nested: sized on the run means, as abstat compare --center mean compares them
        estimand_label="ratio of means" + (" of the run means" if nested else ""),
    )
    if nested:  # summary statistics n:mean:stddev allow only the ratio of means, as in abstat compare
        _add_nested(result, nested, alpha, cost_ratio)
    return result


def _checked_settings(variants: Mapping[str, object], detect: float, power: float, confidence: float) -> float:
    """The confidence in percent, after checking the plan's settings."""
    if not variants:
        raise ValueError("plan needs pilot data for at least one variant")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be between 0 and 1, not {power:g}")
    confidence = confidence * 100.0 if confidence < 1.0 else confidence
    if not 0.0 < confidence < 100.0:
        raise ValueError(f"confidence must be between 0 and 100 %, not {confidence:g}")
    if not detect > 0.0:
        raise ValueError("the change to detect must be positive")
    return confidence


def _pilots(
    variants: Mapping[str, object], outliers: str
) -> tuple[list[VariantPilot], dict[str, list[list[float]]], list[Any]]:
    """Each variant's pilot summary, the runs of the nested ones, and the flat values (None for summaries)."""
    pilots: list[VariantPilot] = []
    nested: dict[str, list[list[float]]] = {}
    flats: list[Any] = []
    for name, data in variants.items():
        pilot, runs, flat = _pilot_of(name, data, outliers)
        pilots.append(pilot)
        flats.append(flat)
        if runs is not None:
            nested[name] = runs
    return pilots, nested, flats


def _mean_delta(base: VariantPilot, detect: float, relative: bool) -> tuple[float, float | None]:
    """The absolute change to detect and it in percent of the baseline mean."""
    if base.mean <= 0.0:  # as compare says it: it judges no change against a mean at or below 0
        raise ValueError(negative_baseline("mean", base.mean))
    if relative:
        return base.mean * detect / 100.0, detect
    return detect, detect * 100.0 / base.mean


def _mean_pairs(
    pilots: list[VariantPilot], delta: float, alpha: float, power: float
) -> tuple[list[dict[str, object]], list[str]]:
    """Welch's samples per variant for the baseline and each candidate (the pilot's power set on the pilots)."""
    base = pilots[0]
    others = pilots[1:] or [VariantPilot(base.name + " (same spread)", base.n, base.mean, base.stddev)]
    notes: list[str] = []
    if len(pilots) == 1:
        notes.append("one variant given: the other is assumed to have the same spread")
    pairs: list[dict[str, object]] = []
    for other in others:
        needed = samples_per_side(delta, base.stddev, other.stddev, alpha=alpha, power=power)
        pairs.append({"baseline": base.name, "candidate": other.name, "samples_per_variant": needed})
        if len(pilots) > 1 and base.n >= 2 and other.n >= 2:
            other.current_power = power_two_sample(delta, base.stddev, base.n, other.stddev, other.n, alpha=alpha)
    base.current_power = _lowest([o.current_power for o in others])
    return pairs, notes


def _lowest(powers: list[float | None]) -> float | None:
    known = [p for p in powers if p is not None]
    return min(known) if known else None


def _largest(pairs: list[dict[str, object]]) -> int | None:
    """The most samples any pair needs (None if one cannot be sized)."""
    counts = [p["samples_per_variant"] for p in pairs]
    return None if any(c is None for c in counts) else max(cast(int, c) for c in counts)


def _add_nested(result: Plan, nested: dict[str, list[list[float]]], alpha: float, cost_ratio: float | None) -> None:
    """Kalibera & Jones' runs x samples allocations (and the pilots' power on run means) into ``result``."""
    import numpy as np

    from abstat.stats.nested import variance_components

    notes = result.notes
    notes.append(NESTED_NOTE)
    components = []
    for name, runs in nested.items():
        vc = variance_components([np.asarray(run, dtype=float) for run in runs])
        if vc is None:
            notes.append(f"{name}: too few runs or samples per run for variance components")
            continue
        components.append(vc)
    if not components:
        result.method = "flat"
        return
    _run_mean_powers(result.variants, nested, result.detect, alpha)
    result.within = sum(c.within for c in components) / len(components)
    result.between = sum(c.between for c in components) / len(components)
    notes.append(
        "samples within a run are not independent: the flat count (every sample its own run) understates "
        "what nested data need; use the runs x samples allocation (pilot power is computed on run means)"
    )
    if cost_ratio is None:
        notes.append(
            named(
                "run and sample costs not given ({run_cost}, {sample_cost}): allocations shown for a new run "
                "costing 1, 10 and 100 samples",
                "run_cost",
                "sample_cost",
            )
        )
    run_lengths = [len(run) for runs in nested.values() for run in runs]
    ratios = [(cost_ratio, False)] if cost_ratio is not None else [(r, True) for r in DEFAULT_COST_RATIOS]
    for ratio, assumed in ratios:
        result.allocations.append(
            _allocation(result, ratio, assumed, round(sum(run_lengths) / len(run_lengths)), alpha)
        )


def _run_mean_powers(
    pilots: list[VariantPilot], nested: dict[str, list[list[float]]], delta: float, alpha: float
) -> None:
    """The power of the pilot itself, with the run as the unit (run means)."""
    run_summaries = {}
    for name, runs in nested.items():
        means = [math.fsum(run) / len(run) for run in runs]
        centre = math.fsum(means) / len(means)
        run_summaries[name] = (len(means), math.sqrt(math.fsum((m - centre) ** 2 for m in means) / (len(means) - 1)))
    for pilot in pilots:
        pilot.current_power = None
    base = pilots[0]
    if base.name not in run_summaries:
        return
    powers: list[float | None] = []
    for other in pilots[1:]:
        if other.name in run_summaries:
            (kb, sdb), (kc, sdc) = run_summaries[base.name], run_summaries[other.name]
            other.current_power = power_two_sample(delta, sdb, kb, sdc, kc, alpha=alpha)
            powers.append(other.current_power)
    base.current_power = _lowest(powers)


def _allocation(result: Plan, ratio: float, assumed: bool, pilot_length: int, alpha: float) -> Allocation:
    """One runs x samples allocation at cost ratio ``ratio`` (its notes join the plan's)."""
    assert result.within is not None and result.between is not None
    nested_plan = plan_nested(
        result.within,
        result.between,
        result.detect,
        cost_ratio=ratio,
        pilot_run_length=pilot_length,
        alpha=alpha,
        power=result.power,
    )
    for note in nested_plan.notes:
        if note not in result.notes:
            result.notes.append(note)
    runs_needed = nested_plan.runs_per_variant
    return Allocation(
        cost_ratio=ratio,
        assumed=assumed,
        samples_per_run=nested_plan.samples_per_run,
        runs_per_variant=runs_needed,
        samples_per_variant=None if runs_needed is None else runs_needed * nested_plan.samples_per_run,
        relative_cost=nested_plan.relative_cost,
    )


def _flat_plan(
    pilots: list[VariantPilot],
    flats: list[Any],
    detect: float,
    relative: bool,
    power: float,
    confidence: float,
    center: str,
) -> Plan:
    """Independent samples: sized for the comparison ``compare`` would make
    (:func:`abstat.comparison.sizing.sizing`) of the baseline with each candidate."""
    alpha = 1.0 - confidence / 100.0
    from abstat.comparison.estimands import centre_of

    detect_pct, delta = change_to_detect(centre_of([flats[0]], center, [[f] for f in flats[1:]])[0], detect, relative)
    notes: list[str] = []
    others = list(zip(pilots[1:], flats[1:], strict=True))
    if not others:
        notes.append("one variant given: the other is assumed to be like it")
        base = pilots[0]
        others = [(VariantPilot(base.name + " (the same)", base.n, base.mean, base.stddev), flats[0])]
    pairs, sizes = _sized_pairs(pilots, flats[0], others, center, confidence, detect_pct, alpha, power, notes)
    flat_needed = _largest(pairs)
    chosen = sizes[0].at(flat_needed or 10**7, flat_needed or 10**7)
    estimands = {p["estimand"] for p in pairs}
    if len(estimands) > 1:
        notes.append(
            "the comparisons need different sizes and so different estimands: "
            + ", ".join(f"{p['candidate']}: {p['estimand']}" for p in pairs)
        )
    return Plan(
        baseline=pilots[0].name,
        detect=delta,
        detect_pct=detect_pct,
        power=power,
        confidence=confidence,
        method="flat",
        variants=pilots,
        samples_per_variant=flat_needed,
        pairs=pairs,
        notes=notes,
        estimand=chosen.estimand,
        estimand_label=chosen.label,
        center=center,
    )


def _sized_pairs(
    pilots: list[VariantPilot],
    x: Any,
    others: list[tuple[VariantPilot, Any]],
    center: str,
    confidence: float,
    detect_pct: float,
    alpha: float,
    power: float,
    notes: list[str],
) -> tuple[list[dict[str, object]], list[Any]]:
    """The samples each comparison of the baseline with a candidate needs, and their sizings (the pilots'
    power set on the pilots; why a comparison cannot be sized joins ``notes``)."""
    from abstat.comparison.sizing import sizing

    base = pilots[0]
    pairs: list[dict[str, object]] = []
    sizes = []
    for other, y in others:
        size = sizing(x, y, center, confidence / 100.0)
        sizes.append(size)
        needed = size.needed(detect_pct, alpha, power)
        at_needed = size.at(needed or 10**7, needed or 10**7)
        pairs.append(
            {
                "baseline": base.name,
                "candidate": other.name,
                "samples_per_variant": needed,
                "estimand": at_needed.estimand,
            }
        )
        if len(pilots) > 1:
            p = size.power(detect_pct, x.size, y.size, alpha)
            other.current_power = None if p != p else p
        reason = at_needed.reason or size.reason
        if needed is None and reason and reason not in notes:
            notes.append(reason)
    powers = [o.current_power for o, _ in others]
    base.current_power = _lowest(powers) if len(pilots) > 1 else None
    return pairs, sizes
