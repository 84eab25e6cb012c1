"""Statistical power and sample sizes for two-sample comparisons of means.

Two uses:

* ``abstat audit`` asks, for a printed ministat comparison, what the data
  could have detected (:func:`detectable_difference`) and how many samples
  per side would confirm the claimed change (:func:`samples_per_side`).
* ``abstat plan`` (:mod:`abstat.comparison.planning`) turns pilot data into a
  sample size -- flat (:func:`samples_per_side`) or nested runs x samples,
  allocated as in Kalibera & Jones, "Rigorous Benchmarking in Reasonable
  Time" (ISMM 2013) (:func:`optimal_samples_per_run`, :func:`plan_nested`).

Power is computed exactly from the noncentral t distribution (two-sided
test), the same model as ``statsmodels.stats.power.TTestIndPower``; with
unequal spreads the Welch standard error and Welch-Satterthwaite degrees of
freedom replace the pooled ones.  The distribution functions are those of
:mod:`abstat.stats.distributions` (no scipy: ``plan`` and ``audit`` start as
fast as ``compare``).
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
    from abstat.stats.distributions import nctdtr, stdtrit

    crit = stdtrit(df, 1.0 - alpha / 2.0)
    nc = abs(noncentrality)
    return (1.0 - nctdtr(df, nc, crit)) + nctdtr(df, nc, -crit)


def power_two_sample(delta: float, sd1: float, n1: int, sd2: float, n2: int, *, alpha: float = 0.05) -> float:
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
    delta: float,
    sd1: float,
    sd2: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    minimum: int = 2,
    maximum: int = MAX_SAMPLES,
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
    from abstat.stats.distributions import ndtri

    z = ndtri(1.0 - alpha / 2.0) + ndtri(power)
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
    from abstat.stats.distributions import brentq, ndtri

    scale = max(abs(sd1), abs(sd2))
    if scale > 0.0 and math.isfinite(scale) and not 1e-150 < scale < 1e150:
        return scale * detectable_difference(sd1 / scale, n1, sd2 / scale, n2, alpha=alpha, power=power)
    se = math.sqrt(sd1 * sd1 / n1 + sd2 * sd2 / n2)
    if se == 0.0:
        return 0.0

    def gap(delta: float) -> float:
        return power_two_sample(delta, sd1, n1, sd2, n2, alpha=alpha) - power

    guess = (ndtri(1.0 - alpha / 2.0) + ndtri(power)) * se
    low, high = 0.9 * guess, 1.2 * guess
    if gap(low) > 0.0:
        low = 0.0
    while gap(high) < 0.0:
        low, high = high, high * 2.0
    return float(brentq(gap, low, high, xtol=se * 1e-10, rtol=1e-12))


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
    within: float,
    between: float,
    delta: float,
    *,
    cost_ratio: float,
    pilot_run_length: int,
    alpha: float = 0.05,
    power: float = 0.8,
    minimum_runs: int = 2,
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
        return _few_long_runs(
            within, delta, cost_ratio=cost_ratio, pilot_run_length=pilot_run_length, alpha=alpha, power=power
        )
    run_var = between + within / per_run
    run_sd = math.sqrt(run_var)
    runs = samples_per_side(delta, run_sd, run_sd, alpha=alpha, power=power, minimum=minimum_runs)
    cost = None if runs is None else runs * (cost_ratio + per_run)
    return NestedPlan(
        cost_ratio=cost_ratio,
        samples_per_run=per_run,
        runs_per_variant=runs,
        run_mean_sd=run_sd,
        relative_cost=cost,
        notes=notes,
    )


FEW_RUNS = 3  # the fewest runs per variant abstat compare judges without a warning
MAX_FEW_RUNS = 60


def _few_long_runs(
    within: float, delta: float, *, cost_ratio: float, pilot_run_length: int, alpha: float, power: float
) -> NestedPlan:
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
    note = (
        "the pilot shows no run-to-run variance beyond the samples' own noise, so few long runs are "
        "cheapest: the allocation uses at least 3 runs per variant and runs as long as needed"
    )
    if best is None:
        return NestedPlan(cost_ratio, max(2, pilot_run_length), None, math.sqrt(within), None, [note])
    return NestedPlan(
        best.cost_ratio, best.samples_per_run, best.runs_per_variant, best.run_mean_sd, best.relative_cost, [note]
    )
