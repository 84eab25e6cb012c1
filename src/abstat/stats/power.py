"""Statistical power and sample sizes for two-sample comparisons of means.

Two uses:

* ``abstat audit`` asks, for a printed ministat comparison, what the data
  could have detected (:func:`detectable_difference`) and how many samples
  per side would confirm the claimed change (:func:`samples_per_side`).
* ``abstat plan`` turns pilot data into a sample size -- flat
  (:func:`samples_per_side`) or nested runs x samples, allocated as in
  Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013)
  (:func:`optimal_samples_per_run`, :func:`plan_nested`; the variance
  components come from :func:`abstat.stats.nested.variance_components`).

Power is computed exactly from the noncentral t distribution (two-sided
test), the same model as ``statsmodels.stats.power.TTestIndPower``; with
unequal spreads the Welch standard error and Welch-Satterthwaite degrees of
freedom replace the pooled ones.  scipy is imported lazily.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_SAMPLES = 10_000_000


def _rescaled(delta: float, sd1: float, sd2: float) -> tuple[float, float, float]:
    """The three divided by the largest magnitude when squaring them would
    overflow or underflow (power and sample sizes do not depend on the unit)."""
    scale = max(abs(delta), abs(sd1), abs(sd2))
    if scale == 0.0 or 1e-150 < scale < 1e150 or not math.isfinite(scale):
        return delta, sd1, sd2
    return delta / scale, sd1 / scale, sd2 / scale


def welch_df(var1: float, n1: float, var2: float, n2: float) -> float:
    """Welch-Satterthwaite degrees of freedom (n1 + n2 - 2 when both variances are 0)."""
    a, b = var1 / n1, var2 / n2
    denominator = a * a / (n1 - 1) + b * b / (n2 - 1)
    if denominator == 0.0:
        return n1 + n2 - 2.0
    return (a + b) ** 2 / denominator


def power_from_noncentrality(noncentrality: float, df: float, alpha: float) -> float:
    """Power of a two-sided t test with ``df`` degrees of freedom."""
    from scipy import stats

    crit = stats.t.isf(alpha / 2.0, df)
    nc = abs(noncentrality)
    value = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    if math.isnan(value):
        # scipy's noncentral t gives up far in the tail (huge noncentrality
        # with few degrees of freedom); the normal approximation is exact
        # enough there.
        value = float(stats.norm.sf(crit - nc) + stats.norm.cdf(-crit - nc))
    return value


def power_two_sample(
    delta: float, sd1: float, n1: int, sd2: float, n2: int, *, alpha: float = 0.05
) -> float:
    """Power to detect a true difference of means ``delta`` (two-sided).

    Equal spreads give the classic pooled t power (statsmodels'
    ``TTestIndPower``); unequal spreads use the Welch standard error and
    degrees of freedom.
    """
    if n1 < 2 or n2 < 2:
        raise ValueError("power needs at least 2 samples per side")
    delta, sd1, sd2 = _rescaled(delta, sd1, sd2)
    var1, var2 = sd1 * sd1, sd2 * sd2
    se = math.sqrt(var1 / n1 + var2 / n2)
    if se == 0.0:
        return 1.0 if delta != 0.0 else alpha
    if var1 == var2:
        df = n1 + n2 - 2.0
    else:
        df = welch_df(var1, n1, var2, n2)
    return power_from_noncentrality(delta / se, df, alpha)


def samples_per_side(
    delta: float, sd1: float, sd2: float | None = None, *, alpha: float = 0.05,
    power: float = 0.8, minimum: int = 2, maximum: int = MAX_SAMPLES,
) -> int | None:
    """Smallest equal sample size per side that detects ``delta`` with ``power``.

    ``None`` when even ``maximum`` samples would not do (or ``delta`` is 0).
    """
    sd2 = sd1 if sd2 is None else sd2
    delta, sd1, sd2 = _rescaled(delta, sd1, sd2)
    if delta == 0.0:
        return None
    if sd1 == 0.0 and sd2 == 0.0:
        return minimum

    def enough(n: int) -> bool:
        return power_two_sample(delta, sd1, n, sd2, n, alpha=alpha) >= power

    if enough(minimum):
        return minimum
    # Start next to the normal-approximation answer, then settle exactly.
    from scipy import stats

    z = float(stats.norm.isf(alpha / 2.0) + stats.norm.ppf(power))
    try:
        estimate = z * z * ((sd1 / delta) ** 2 + (sd2 / delta) ** 2)
    except OverflowError:  # a change tiny against the spread
        estimate = math.inf
    guess = maximum if not estimate < maximum else max(minimum + 1, math.ceil(estimate))
    if enough(guess):
        if not enough(guess - 1):
            return guess
        low, high = minimum, guess - 1
    else:
        low, high = guess, guess + 2
    while not enough(high):
        low = high
        high *= 2
        if high > maximum:
            if enough(maximum):
                high = maximum
                break
            return None
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


def detectable_difference(
    sd1: float, n1: int, sd2: float, n2: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest true difference of means detected with ``power`` (absolute units)."""
    from scipy import optimize

    scale = max(abs(sd1), abs(sd2))
    if scale > 0.0 and math.isfinite(scale) and not 1e-150 < scale < 1e150:
        return scale * detectable_difference(sd1 / scale, n1, sd2 / scale, n2, alpha=alpha, power=power)
    se = math.sqrt(sd1 * sd1 / n1 + sd2 * sd2 / n2)
    if se == 0.0:
        return 0.0

    def gap(delta: float) -> float:
        return power_two_sample(delta, sd1, n1, sd2, n2, alpha=alpha) - power

    from scipy import stats

    guess = (stats.norm.isf(alpha / 2.0) + stats.norm.ppf(power)) * se
    low, high = 0.9 * guess, 1.2 * guess
    if gap(low) > 0.0:
        low = 0.0
    while gap(high) < 0.0:
        low, high = high, high * 2.0
    return float(optimize.brentq(gap, low, high, xtol=se * 1e-10, rtol=1e-12))


def detectable_effect_size(n1: int, n2: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest standardized difference (delta / sd) detected with ``power``."""
    return detectable_difference(1.0, n1, 1.0, n2, alpha=alpha, power=power)


# --------------------------------------------------------------------------
# Nested data: runs of samples (Kalibera & Jones 2013)


def optimal_samples_per_run(within: float, between: float, cost_ratio: float) -> int | None:
    """Kalibera & Jones' optimal repetition count at the inner level.

    r = ceil(sqrt(cost_ratio * T1^2 / T2^2)) with ``cost_ratio`` = cost of a
    new run (set-up, boot, build, warm-up) / cost of one more sample in a run.
    ``None`` when T2^2 <= 0 (no run-to-run variance seen: one long run per
    variant is as good as many).
    """
    if between <= 0.0:
        return None
    if within <= 0.0:
        return 1
    return max(1, math.ceil(math.sqrt(cost_ratio * within / between)))


@dataclass(frozen=True)
class NestedPlan:
    """Runs per variant and samples per run for a target change."""

    cost_ratio: float
    samples_per_run: int
    runs_per_variant: int | None
    run_mean_sd: float
    relative_cost: float | None  # runs * (cost_ratio + samples_per_run), in sample costs
    notes: list[str] = field(default_factory=list)


def plan_nested(
    within: float, between: float, delta: float, *, cost_ratio: float, pilot_run_length: int,
    alpha: float = 0.05, power: float = 0.8, minimum_runs: int = 2,
) -> NestedPlan:
    """Allocate runs and samples per run from pilot variance components.

    ``within`` = T1^2 and ``between`` = T2^2 (pooled over the variants).
    Samples per run follow :func:`optimal_samples_per_run`; the runs per
    variant then come from the two-sample t test on run means, whose
    variance is T2^2 + T1^2 / r.
    """
    notes: list[str] = []
    per_run = optimal_samples_per_run(within, between, cost_ratio)
    if per_run is None:
        return _few_long_runs(within, delta, cost_ratio=cost_ratio, pilot_run_length=pilot_run_length,
                              alpha=alpha, power=power)
    run_var = between + within / per_run
    run_sd = math.sqrt(run_var)
    runs = samples_per_side(delta, run_sd, run_sd, alpha=alpha, power=power, minimum=minimum_runs)
    cost = None if runs is None else runs * (cost_ratio + per_run)
    return NestedPlan(
        cost_ratio=cost_ratio, samples_per_run=per_run, runs_per_variant=runs,
        run_mean_sd=run_sd, relative_cost=cost, notes=notes,
    )


FEW_RUNS = 3  # the fewest runs per variant abstat compare judges without a warning
MAX_FEW_RUNS = 60


def _few_long_runs(within: float, delta: float, *, cost_ratio: float, pilot_run_length: int,
                   alpha: float, power: float) -> NestedPlan:
    """No run-to-run variance in the pilot: a run's mean has variance
    ``within / samples_per_run``, so few long runs are cheapest.  For each run
    count from 3 up, the shortest run (at least the pilot's) that reaches the
    power; the cheapest allocation wins."""
    best: NestedPlan | None = None
    for runs in range(FEW_RUNS, MAX_FEW_RUNS + 1):
        lo, hi = max(2, pilot_run_length), MAX_SAMPLES
        if samples_per_side(delta, math.sqrt(within / hi), alpha=alpha, power=power, minimum=runs) != runs:
            continue
        while lo < hi:  # shortest run length at which `runs` runs suffice
            mid = (lo + hi) // 2
            if samples_per_side(delta, math.sqrt(within / mid), alpha=alpha, power=power, minimum=runs) == runs:
                hi = mid
            else:
                lo = mid + 1
        cost = runs * (cost_ratio + lo)
        if best is None or cost < (best.relative_cost or math.inf):
            best = NestedPlan(cost_ratio, lo, runs, math.sqrt(within / lo), cost)
    note = ("the pilot shows no run-to-run variance beyond the samples' own noise, so few long runs are "
            "cheapest: the allocation uses at least 3 runs per variant and runs as long as needed")
    if best is None:
        return NestedPlan(cost_ratio, max(2, pilot_run_length), None, math.sqrt(within), None, [note])
    return NestedPlan(best.cost_ratio, best.samples_per_run, best.runs_per_variant, best.run_mean_sd,
                      best.relative_cost, [note])


# --------------------------------------------------------------------------
# abstat plan: pilot data -> samples (or runs x samples per run) per variant

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
            "name": self.name, "n": self.n, "mean": self.mean, "stddev": self.stddev,
            "runs": self.runs, "current_power": self.current_power,
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


ESTIMAND = "mean_ratio"  # the comparison the sizes are for (docs/json.md vocabulary)
ESTIMAND_NOTE = ("sizes and power are for the ratio of means (Welch's t: abstat compare --center mean); "
                 "the default ratio of medians needs about pi/2 = 1.6 times as many samples on normal data")


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

    def to_dict(self) -> dict[str, object]:
        return {
            "baseline": self.baseline, "detect": self.detect, "detect_pct": self.detect_pct,
            "power": self.power, "confidence": self.confidence, "method": self.method, "estimand": ESTIMAND,
            "variants": [v.to_dict() for v in self.variants],
            "samples_per_variant": self.samples_per_variant, "pairs": self.pairs,
            "variance_components": None if self.within is None else {"within": self.within, "between": self.between},
            "allocations": [a.to_dict() for a in self.allocations], "notes": self.notes,
        }


def _pilot_of(name: str, data: object) -> tuple[VariantPilot, list[list[float]] | None]:
    """(summary, runs or None) of one variant's pilot data."""
    data = getattr(data, "data", data)  # readers.specs.VariantData
    if hasattr(data, "n") and hasattr(data, "mean") and hasattr(data, "stddev"):
        return VariantPilot(name, int(data.n), float(data.mean), float(data.stddev)), None
    values = list(data)  # type: ignore[call-overload]
    runs = None
    if values and hasattr(values[0], "__len__"):  # a sequence of runs
        runs = [list(map(float, run)) for run in values]
        values = [x for run in runs for x in run]
    if len(values) < 2:
        raise ValueError(f"{name}: a pilot needs at least 2 values")
    mean, stddev = _mean_sd(values)
    if runs is not None and len(runs) > 1:
        return VariantPilot(name, len(values), mean, stddev, runs=len(runs)), runs
    return VariantPilot(name, len(values), mean, stddev), None


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
    variants: dict[str, object], *, detect: float, relative: bool = True, power: float = 0.8,
    confidence: float = 95.0, cost_ratio: float | None = None,
) -> Plan:
    """Samples per variant needed to detect a change of ``detect``.

    ``variants``: pilot data by name, the first is the baseline; each is a
    sequence of numbers, a sequence of runs (nested), a Summary
    (``n, mean, stddev``) or a ``readers.specs.VariantData``.  ``detect`` is
    a percentage of the baseline mean (``relative=True``) or an absolute
    change.  ``confidence`` in percent (0.95 is read as 95 %).
    ``cost_ratio``: cost of a new run / cost of one sample in a run (nested
    pilots; without it the plan shows ratios 1, 10 and 100).
    """
    import numpy as np

    from abstat.stats.nested import variance_components

    if not variants:
        raise ValueError("plan needs pilot data for at least one variant")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be between 0 and 1, not {power:g}")
    confidence = confidence * 100.0 if confidence < 1.0 else confidence
    if not 0.0 < confidence < 100.0:
        raise ValueError(f"confidence must be between 0 and 100 %, not {confidence:g}")
    if not detect > 0.0:
        raise ValueError("the change to detect must be positive")
    alpha = 1.0 - confidence / 100.0
    pilots: list[VariantPilot] = []
    nested: dict[str, list[list[float]]] = {}
    for name, data in variants.items():
        pilot, runs = _pilot_of(name, data)
        pilots.append(pilot)
        if runs is not None:
            nested[name] = runs
    base = pilots[0]
    if relative:
        if base.mean == 0.0:
            raise ValueError("a relative change needs a baseline mean other than 0")
        delta, delta_pct = abs(base.mean) * detect / 100.0, detect
    else:
        delta = detect
        delta_pct = detect * 100.0 / abs(base.mean) if base.mean else None
    others = pilots[1:] or [VariantPilot(base.name + " (same spread)", base.n, base.mean, base.stddev)]
    notes: list[str] = []
    if len(pilots) == 1:
        notes.append("one variant given: the other is assumed to have the same spread")
    pairs = []
    for other in others:
        needed = samples_per_side(delta, base.stddev, other.stddev, alpha=alpha, power=power)
        pairs.append({"baseline": base.name, "candidate": other.name, "samples_per_variant": needed})
        if len(pilots) > 1 and base.n >= 2 and other.n >= 2:
            other.current_power = power_two_sample(delta, base.stddev, base.n, other.stddev, other.n, alpha=alpha)
    powers = [o.current_power for o in others if o.current_power is not None]
    base.current_power = min(powers) if powers else None
    counts = [p["samples_per_variant"] for p in pairs]
    flat_needed = None if any(c is None for c in counts) else max(counts)  # type: ignore[type-var]
    result = Plan(
        baseline=base.name, detect=delta, detect_pct=delta_pct, power=power, confidence=confidence,
        method="nested" if nested else "flat", variants=pilots, samples_per_variant=flat_needed,
        pairs=pairs, notes=notes,
    )
    if not nested:
        return result
    components = []
    for name, runs in nested.items():
        vc = variance_components([np.asarray(run, dtype=float) for run in runs])
        if vc is None:
            notes.append(f"{name}: too few runs or samples per run for variance components")
            continue
        components.append(vc)
    if not components:
        result.method = "flat"
        return result
    # Power of the pilot itself, with the run as the unit (run means).
    run_summaries = {}
    for name, runs in nested.items():
        means = [math.fsum(run) / len(run) for run in runs]
        centre = math.fsum(means) / len(means)
        run_summaries[name] = (len(means), math.sqrt(math.fsum((m - centre) ** 2 for m in means) / (len(means) - 1)))
    for pilot in pilots:
        pilot.current_power = None
    if base.name in run_summaries:
        powers = []
        for other in pilots[1:]:
            if other.name in run_summaries:
                (kb, sdb), (kc, sdc) = run_summaries[base.name], run_summaries[other.name]
                other.current_power = power_two_sample(delta, sdb, kb, sdc, kc, alpha=alpha)
                powers.append(other.current_power)
        base.current_power = min(powers) if powers else None
    within = sum(c.within for c in components) / len(components)
    between = sum(c.between for c in components) / len(components)
    result.within, result.between = within, between
    run_lengths = [len(run) for runs in nested.values() for run in runs]
    pilot_length = round(sum(run_lengths) / len(run_lengths))
    notes.append(
        "samples within a run are not independent: the flat count (every sample its own run) understates "
        "what nested data need; use the runs x samples allocation (pilot power is computed on run means)"
    )
    ratios = [(cost_ratio, False)] if cost_ratio is not None else [(r, True) for r in DEFAULT_COST_RATIOS]
    if cost_ratio is None:
        notes.append(
            "run and sample costs not given (--run-cost, --sample-cost): allocations shown for a new run "
            "costing 1, 10 and 100 samples"
        )
    for ratio, assumed in ratios:
        nested_plan = plan_nested(
            within, between, delta, cost_ratio=ratio, pilot_run_length=pilot_length, alpha=alpha, power=power,
        )
        for note in nested_plan.notes:
            if note not in notes:
                notes.append(note)
        runs_needed = nested_plan.runs_per_variant
        result.allocations.append(Allocation(
            cost_ratio=ratio, assumed=assumed, samples_per_run=nested_plan.samples_per_run,
            runs_per_variant=runs_needed,
            samples_per_variant=None if runs_needed is None else runs_needed * nested_plan.samples_per_run,
            relative_cost=nested_plan.relative_cost,
        ))
    return result
