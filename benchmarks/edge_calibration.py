"""Edge-case calibration of ``abstat compare`` and ``abstat plan``.

``benchmarks/calibration.py`` covers the common shapes (normal, log-normal,
quantized on a scaled grid, outliers, bimodal, nested, n = 5, unequal
spreads).  This script covers what it does not, and reports for every row
the **coverage of the stated estimand**: the share of 95% intervals that
contain the true value of the quantity the result names in its
``estimand`` field (a ``cannot judge`` counts as a miss and is also shown on
its own), beside the share of significant results.  Where the estimand
depends on the draw (a geometric mean when every run centre happens to be
positive) and that one has no population value, the draw is left out of the
coverage and counted under "other estimand".  True values are exact
(scaled distributions, discrete distributions) or computed from the
population distribution by root finding, never from the simulated samples.

1. **Coverage** on: tiny n (3 vs 3, 4 vs 4, 3 vs 30), unequal n with the
   larger spread on the smaller side, one-sided heavy tails (Pareto
   alpha 1.5-3, exponential, a 1% far tail), zeros and near-zero counts,
   mixed-sign data, values on 3-5 grid levels with ties across both samples.
2. **Plan**: the sample size ``abstat plan`` advises for a 1% change at 80%
   power, then the power ``abstat compare`` reaches with it, simulated.
3. **Consistency**: over every draw, no significant verdict whose interval
   holds 0, and no interval that excludes 0 without significance.

Every rate is printed with its Monte Carlo standard error
``sqrt(p (1 - p) / reps)``.  Targets: coverage >= 94% among the draws
that are judged ("cannot judge" is the honest answer when, say, the
baseline median may be 0, and its share is shown), plan power within 3 points of
the stated power.  Exit status 1 when a row misses a target by more than two
Monte Carlo errors.

    python benchmarks/edge_calibration.py                 # 1000 repetitions, ~1-2 min
    python benchmarks/edge_calibration.py --reps 2000 --markdown
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

sys.path.insert(0, os.path.dirname(__file__))

import abstat  # noqa: E402
from calibration import table  # noqa: E402  (benchmarks/calibration.py)
from calibration_truth import Component, population, truth as population_truth  # noqa: E402
from abstat.readers.summary import Summary  # noqa: E402
from abstat.comparison.planning import plan  # noqa: E402
from abstat.stats.power import plan_nested  # noqa: E402

COVERAGE_TARGET = 0.94
WELCH_LIMIT = (
    "Welch's t itself: scipy.stats.ttest_ind(equal_var=False) accepts the true difference as rarely "
    "(measured: 92.6% for both on one set of 2000 draws); abstat warns at 3 vs many"
)
POWER_TOLERANCE = 0.03
Draw = Callable[[np.random.Generator], np.ndarray]


@dataclass
class Case:
    """One scenario: how to draw baseline and candidate, and the true value
    (in percent) of each estimand the comparison may name."""

    group: str
    name: str
    draw_x: Draw
    draw_y: Draw
    truth: dict[str, float]  # estimand -> true change in percent
    expect_cannot: set[str] = field(default_factory=set)  # centres that should say "cannot judge"
    limits: dict[str, str] = field(default_factory=dict)  # centre -> why its target is not checked


# ---------------------------------------------------------------------------
# Population quantities (exact or by root finding on the distribution).


def continuous_median(cdf: Callable[[float], float], low: float, high: float) -> float:
    return float(optimize.brentq(lambda q: cdf(q) - 0.5, low, high, xtol=1e-12, rtol=1e-14))


def discrete_median(values: np.ndarray, probabilities: np.ndarray) -> float:
    """The population median of a discrete distribution (the midpoint when
    the CDF is exactly 1/2 at a support point, as the sample median tends to)."""
    cdf = np.cumsum(probabilities)
    i = int(np.searchsorted(cdf, 0.5))
    if abs(cdf[i] - 0.5) < 1e-12:
        return float((values[i] + values[i + 1]) / 2.0)
    return float(values[i])


def grid_levels(mean: float, sd: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and probabilities of ``step * round(N(mean, sd) / step)``."""
    k = np.arange(math.floor((mean - 10 * sd) / step), math.ceil((mean + 10 * sd) / step) + 1)
    values = k * step
    upper = stats.norm.cdf((values + step / 2 - mean) / sd)
    lower = stats.norm.cdf((values - step / 2 - mean) / sd)
    return values.astype(float), upper - lower


def poisson_median(lam: float) -> float:
    values = np.arange(0, int(lam * 10 + 50))
    return discrete_median(values.astype(float), stats.poisson.pmf(values, lam))


def pct(ratio: float) -> float:
    return 100.0 * (ratio - 1.0)


def scaled_case(
    group: str, name: str, draw: Callable[[np.random.Generator, int], np.ndarray], nx: int, ny: int, shift: float
) -> Case:
    """Candidate = baseline distribution x (1 + shift): every ratio estimand
    is exactly 1 + shift, and a difference of medians relative to the
    baseline median is exactly ``shift``."""
    true = 100.0 * shift
    return Case(
        group,
        name,
        lambda r: draw(r, nx),
        lambda r: draw(r, ny) * (1.0 + shift),
        {"median_ratio": true, "median_difference": true, "mean_ratio": true, "hl_ratio": true, "geomean_ratio": true},
    )


def default_truths(x, y) -> dict[str, float]:
    """The true changes of the default's estimands between two populations
    (``calibration_truth``: quadrature and root finding on the populations)."""
    return {e: population_truth(e, x, y) for e in ("hl_ratio", "geomean_ratio")}


def normal_pop(mean: float, sd: float, step: float | None = None):
    return population(f"N({mean:g}, {sd:g})", Component(1.0, stats.norm(mean, sd)), step=step)


def normal(mean: float, sd: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda r, n: r.normal(mean, sd, n)


def pareto(alpha: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda r, n: 1000.0 * (1.0 + r.pareto(alpha, n))  # classical Pareto, minimum 1000


def far_tail(r: np.random.Generator, n: int) -> np.ndarray:
    """99% N(1000, 10), 1% ten times slower."""
    x = r.normal(1000.0, 10.0, n)
    return np.where(r.random(n) < 0.01, 10.0 * x, x)


def zero_inflated(r: np.random.Generator, n: int) -> np.ndarray:
    """40% zeros, else exponential with mean 100 (e.g. time spent waiting)."""
    return np.where(r.random(n) < 0.4, 0.0, r.exponential(100.0, n))


def cases() -> list[Case]:
    found: list[Case] = []
    # Tiny n: a real 2% change, normal data, sd 1%.
    for nx, ny in ((3, 3), (4, 4), (3, 30)):
        found.append(scaled_case("tiny n", f"normal sd 1%, {nx} vs {ny}, +2%", normal(1000, 10), nx, ny, 0.02))
    found[-1].limits["mean"] = WELCH_LIMIT
    found.append(
        scaled_case(
            "tiny n", "log-normal s 0.3, 4 vs 4, +10%", lambda r, n: 1000.0 * r.lognormal(0, 0.3, n), 4, 4, 0.10
        )
    )
    # Unequal n, the larger spread on the smaller side.
    for (nx, sx), (ny, sy) in (((5, 50), (50, 10)), ((50, 10), (5, 50)), ((3, 30), (30, 10)), ((8, 100), (100, 10))):
        found.append(
            Case(
                "unequal n, spread",
                f"n {nx} sd {sx / 10:g}% vs n {ny} sd {sy / 10:g}%, +1%",
                lambda r, nx=nx, sx=sx: r.normal(1000, sx, nx),
                lambda r, ny=ny, sy=sy: r.normal(1010, sy, ny),
                {"median_ratio": 1.0, "mean_ratio": 1.0, **default_truths(normal_pop(1000, sx), normal_pop(1010, sy))},
            )
        )
        if (nx, sx) == (5, 50):
            found[-1].limits["median"] = (
                "Bonett-Price with 5 values holding 5x the spread: 92-93.5% (93.5% ±0.6 at 2000 repetitions), "
                "above the 92% defect line; the t quantile used below 5 values, extended to 5-9, would halve "
                "the power of 5 vs 5 (measured: 18% -> 10% for +1% at sd 1%)"
            )
    # One-sided heavy tails, candidate scaled.
    for alpha in (1.5, 2.0, 3.0):
        found.append(scaled_case("heavy tails", f"Pareto alpha {alpha:g}, n 50, +10%", pareto(alpha), 50, 50, 0.10))
    found.append(
        scaled_case(
            "heavy tails",
            "1000 + 50 Exp(1), n 30, +1%",
            lambda r, n: 1000.0 + 50.0 * r.exponential(1.0, n),
            30,
            30,
            0.01,
        )
    )
    found.append(scaled_case("heavy tails", "1% ten-fold tail, n 100, +1%", far_tail, 100, 100, 0.01))
    # Shapes differ: the candidate alone gains the tail.
    m_tail = continuous_median(
        lambda q: 0.99 * stats.norm.cdf(q, 1000, 10) + 0.01 * stats.norm.cdf(q, 10000, 100), 900, 1100
    )
    tail = population("tail", Component(0.99, stats.norm(1000, 10)), Component(0.01, stats.norm(10000, 100)))
    found.append(
        Case(
            "heavy tails",
            "normal vs +1% ten-fold tail, n 100",
            lambda r: r.normal(1000, 10, 100),
            lambda r: far_tail(r, 100),
            {
                "median_ratio": pct(m_tail / 1000.0),
                "mean_ratio": pct(0.99 + 0.01 * 10.0),
                **default_truths(normal_pop(1000, 10), tail),
            },
            limits={
                "mean": "a 1% tail gives no tail value at all in 37% of samples of 100 (Poisson(1)): "
                "no method sees a tail the data do not hold; the medians are unaffected"
            },
        )
    )
    # Same mean, the candidate skewed (exponential tail): the medians differ.
    m_exp = 1000.0 - 30.0 + 30.0 * math.log(2.0)
    skew = population("skewed", Component(1.0, stats.expon(loc=970.0, scale=30.0)))
    found.append(
        Case(
            "heavy tails",
            "normal vs skewed (same mean), n 50",
            lambda r: r.normal(1000, 30, 50),
            lambda r: 970.0 + r.exponential(30.0, 50),
            {"median_ratio": pct(m_exp / 1000.0), "mean_ratio": 0.0, **default_truths(normal_pop(1000, 30), skew)},
        )
    )
    # Zeros and small counts.
    for lam_x, lam_y in ((4.0, 4.0), (4.0, 4.4), (4.0, 6.0)):
        found.append(
            Case(
                "zeros, counts",
                f"Poisson({lam_x:g}) vs Poisson({lam_y:g}), n 50",
                lambda r, lam=lam_x: r.poisson(lam, 50).astype(float),
                lambda r, lam=lam_y: r.poisson(lam, 50).astype(float),
                {
                    "median_difference": pct(poisson_median(lam_y) / poisson_median(lam_x)),
                    "median_ratio": pct(poisson_median(lam_y) / poisson_median(lam_x)),
                    "mean_ratio": pct(lam_y / lam_x),
                },
            )
        )
    found.append(
        Case(
            "zeros, counts",
            "Poisson(0.5) vs Poisson(0.6) (median 0), n 50",
            lambda r: r.poisson(0.5, 50).astype(float),
            lambda r: r.poisson(0.6, 50).astype(float),
            {"mean_ratio": 20.0},
            expect_cannot={"median"},
        )
    )
    found.append(scaled_case("zeros, counts", "40% zeros + Exp, n 50, +10%", zero_inflated, 50, 50, 0.10))
    found[-1].limits["median"] = (
        "the median (18) has a standard error near 80% of itself: mostly 'cannot judge' "
        "(an unbounded Fieller set, which holds the truth); the draws that are judged are "
        "those whose baseline median came out high, a selected subset"
    )
    # Mixed sign (differences, deltas): the difference of medians relative to
    # the baseline median; Fieller's ratio of means.
    for mx, my in ((5.0, 5.5), (1.0, 1.5), (0.5, 0.75)):
        found.append(
            Case(
                "mixed sign",
                f"N({mx:g}, 1) vs N({my:g}, 1), n 50",
                lambda r, m=mx: r.normal(m, 1.0, 50),
                lambda r, m=my: r.normal(m, 1.0, 50),
                {
                    "median_difference": pct(my / mx),
                    "median_ratio": pct(my / mx),
                    "mean_ratio": pct(my / mx),
                    **(
                        {"hl_ratio": population_truth("hl_ratio", normal_pop(mx, 1), normal_pop(my, 1))}
                        if mx >= 5
                        else {}
                    ),
                },
            )
        )

    # Nested runs with mixed-sign run centres: difference of the means of the
    # run centres relative to the baseline's.
    def runs(r: np.random.Generator, centre: float) -> list[np.ndarray]:
        return [r.normal(centre + r.normal(0, 1.0), 0.5, 20) for _ in range(12)]

    found.append(
        Case(
            "mixed sign",
            "12 runs x 20, run offsets N(0, 1), centre 1 vs 1.5",
            lambda r: runs(r, 1.0),
            lambda r: runs(r, 1.5),
            {"mean_difference": 50.0},
        )
    )
    # Heavy quantization: a 20-cycle grid, both variants on the same grid.
    for mean_y in (440.0, 446.0, 452.0):
        found.append(grid_case(f"grid 20, N(440, 7) vs N({mean_y:g}, 7) (3 levels), n 50", 440.0, mean_y, 7.0, 50))
    found.append(grid_case("grid 20, N(440, 15) vs N(450, 15) (5 levels), n 50", 440.0, 450.0, 15.0, 50))
    found.append(grid_case("grid 20, N(450, 7) vs N(450, 7) (median on a boundary), n 50", 450.0, 450.0, 7.0, 50))
    found.append(grid_case("grid 20, N(440, 7) vs N(452, 7), n 10", 440.0, 452.0, 7.0, 10))
    return found


def grid_case(name: str, mean_x: float, mean_y: float, sd: float, n: int) -> Case:
    vx, px = grid_levels(mean_x, sd, 20.0)
    vy, py = grid_levels(mean_y, sd, 20.0)
    median_ratio = discrete_median(vy, py) / discrete_median(vx, px)
    mean_ratio = float(np.dot(vy, py) / np.dot(vx, px))
    return Case(
        "quantized, ties",
        name,
        lambda r: 20.0 * np.round(r.normal(mean_x, sd, n) / 20.0),
        lambda r: 20.0 * np.round(r.normal(mean_y, sd, n) / 20.0),
        {
            "median_ratio": pct(median_ratio),
            "mean_ratio": pct(mean_ratio),
            **default_truths(normal_pop(mean_x, sd, 20.0), normal_pop(mean_y, sd, 20.0)),
        },
    )


# ---------------------------------------------------------------------------


def rate(hits: int, reps: int) -> tuple[float, float]:
    if reps <= 0:
        return math.nan, math.nan
    p = hits / reps
    return p, math.sqrt(max(p * (1 - p), 1.0 / reps) / reps)


def fmt(p: float, se: float) -> str:
    if math.isnan(p):
        return "-"
    return f"{100 * p:.1f}% ±{100 * se:.1f}"


@dataclass
class Tally:
    reps: int = 0
    cover: int = 0
    significant: int = 0
    cannot: int = 0
    inconsistent: int = 0  # verdict and interval disagree
    estimands: dict[str, int] = field(default_factory=dict)
    truth_missing: int = 0


def consistent(result: abstat.Comparison) -> bool:
    """A significant result's interval excludes 0 and a non-significant one's
    holds it (interval and p-value come from one statistic)."""
    if result.verdict == "cannot judge" or result.ci_pct is None:
        return True
    lo, hi = result.ci_pct
    if math.isnan(lo) or math.isnan(hi):
        return True
    holds_zero = lo <= 0.0 <= hi
    if result.significant and holds_zero and not (lo == hi == 0.0):
        return False
    if not result.significant and not holds_zero:
        return False
    if result.verdict in ("faster", "slower") and not result.significant:
        return False
    return True


def coverage_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str], int, list[str]]:
    rows, failures, inconsistent = [], [], 0
    limits: list[str] = []
    for case in cases():
        tallies = {"auto": Tally(), "median": Tally(), "mean": Tally()}
        for _ in range(reps):
            x, y = case.draw_x(rng), case.draw_y(rng)
            for center, tally in tallies.items():
                result = abstat.compare(x, y, center=center)
                tally.reps += 1
                tally.estimands[result.estimand] = tally.estimands.get(result.estimand, 0) + 1
                tally.significant += result.significant
                if not consistent(result):
                    tally.inconsistent += 1
                if result.verdict == "cannot judge":
                    tally.cannot += 1
                    continue
                truth = case.truth.get(result.estimand)
                if truth is None:  # e.g. every run centre happened to be > 0: a geometric mean
                    tally.truth_missing += 1
                    continue
                lo, hi = result.ci_pct
                tally.cover += bool(lo - 1e-9 * abs(lo) <= truth <= hi + 1e-9 * abs(hi))
        for center, tally in tallies.items():
            estimand = max(
                (e for e in tally.estimands if e in case.truth),
                key=tally.estimands.get,
                default=max(tally.estimands, key=tally.estimands.get),
            )
            names = "/".join(sorted(tally.estimands)) if len(tally.estimands) > 1 else estimand
            truth = case.truth.get(estimand, math.nan)
            judged = reps - tally.truth_missing  # draws whose estimand has a true value
            cov = rate(tally.cover, judged)
            given = rate(tally.cover, judged - tally.cannot)
            expected = center in case.expect_cannot
            limit = case.limits.get(center)
            if limit and limit not in limits:
                limits.append(limit)
            mark = f" [{limits.index(limit) + 1}]" if limit else ""
            rows.append(
                [
                    case.group,
                    case.name,
                    center,
                    names,
                    f"{truth:+.2f}%",
                    fmt(*cov),
                    fmt(*given) + mark,
                    fmt(*rate(tally.significant, reps)),
                    f"{100 * tally.cannot / reps:.1f}%" + (" (expected)" if expected else ""),
                    f"{100 * tally.truth_missing / reps:.1f}%",
                ]
            )
            inconsistent += tally.inconsistent
            if not expected and not limit and not given[0] + 2 * given[1] >= COVERAGE_TARGET:
                failures.append(f"coverage when judged {case.name} {center}: {fmt(*given)}")
    return rows, failures, inconsistent, limits


# ---------------------------------------------------------------------------
# Does the advised n reach the stated power?


def plan_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    detect, target = 1.0, 0.8
    flat = [
        ("normal sd 1%", 1000.0, 10.0, 10.0),
        ("normal sd 1% vs sd 2%", 1000.0, 10.0, 20.0),
        ("normal sd 3%", 1000.0, 30.0, 30.0),
    ]
    for name, mx, sx, sy in flat:
        advice = plan({"a": Summary(1000, mx, sx), "b": Summary(1000, mx, sy)}, detect=detect, power=target)
        n = advice.samples_per_variant
        assert n is not None
        for center, size in (("mean", n), ("median", math.ceil(n * math.pi / 2))):
            hits = 0
            for _ in range(reps):
                x = rng.normal(mx, sx, size)
                y = rng.normal(mx * (1 + detect / 100), sy, size)
                hits += abstat.compare(x, y, center=center).significant
            got = rate(hits, reps)
            label = f"{size}" if center == "mean" else f"{size} (n x pi/2, as plan's note says)"
            rows.append([f"flat, {name}, detect {detect:g}%", label, center, f"{100 * target:.0f}%", fmt(*got)])
            if abs(got[0] - target) > POWER_TOLERANCE + 2 * got[1]:
                failures.append(f"plan power {name} {center}: {fmt(*got)} for {100 * target:.0f}%")
    # The advice from a small pilot: the spread is estimated, so the power
    # reached on average falls short of the stated one (n varies per pilot).
    for pilot_n in (10, 30):
        hits, sizes = 0, []
        for _ in range(reps):
            pilot = {"a": list(rng.normal(1000, 10, pilot_n)), "b": list(rng.normal(1000, 10, pilot_n))}
            size = plan(pilot, detect=detect, power=target).samples_per_variant
            assert size is not None
            sizes.append(size)
            hits += abstat.compare(rng.normal(1000, 10, size), rng.normal(1010, 10, size), center="mean").significant
        got = rate(hits, reps)
        low, mid, high = np.percentile(sizes, [10, 50, 90])
        rows.append(
            [
                f"flat, pilot of {pilot_n} per variant from N(1000, 10), detect 1%",
                f"median {mid:.0f} (10-90%: {low:.0f}-{high:.0f})",
                "mean",
                f"{100 * target:.0f}%",
                fmt(*got),
            ]
        )
    # Nested: runs x samples per run from the true variance components.
    within, between = 10.0**2, 10.0**2  # sd 1% in a run, 1% between runs (on 1000)
    for cost_ratio in (10.0, 100.0):
        allocation = plan_nested(within, between, 10.0, cost_ratio=cost_ratio, pilot_run_length=20, power=target)
        k, per_run = allocation.runs_per_variant, allocation.samples_per_run
        assert k is not None
        hits = 0
        for _ in range(reps):
            x = [1000.0 + rng.normal(0, 10) + rng.normal(0, 10, per_run) for _ in range(k)]
            y = [1010.0 + rng.normal(0, 10) + rng.normal(0, 10, per_run) for _ in range(k)]
            hits += abstat.compare(x, y, center="mean").significant
        got = rate(hits, reps)
        rows.append(
            [
                f"nested, within 1% between 1%, cost ratio {cost_ratio:g}, detect 1%",
                f"{k} runs x {per_run}",
                "mean (runs)",
                f"{100 * target:.0f}%",
                fmt(*got),
            ]
        )
        if abs(got[0] - target) > POWER_TOLERANCE + 2 * got[1]:
            failures.append(f"plan power nested cost {cost_ratio:g}: {fmt(*got)}")
    return rows, failures


AUDIT_SAMPLE = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "audit", "xen-hypercall-ministat.txt")


def audit_rows() -> tuple[list[list[str]], list[str]]:
    """``abstat audit``'s Welch re-judgement of the published claims in
    tests/data/audit/xen-hypercall-ministat.txt against statsmodels (data
    synthesised with exactly the printed n, mean and standard deviation)."""
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    from abstat.audit import audit_file

    def exact(n: int, mean: float, sd: float) -> np.ndarray:
        z = np.linspace(-1.0, 1.0, n)
        return mean + sd * (z - z.mean()) / z.std(ddof=1)

    rows, failures = [], []
    for block in audit_file(AUDIT_SAMPLE).to_dict()["blocks"]:
        sets = {d["name"]: d for d in block.get("datasets", [])}
        for comparison in block.get("comparisons", []):
            b, c = sets[comparison["baseline"]], sets[comparison["candidate"]]
            welch = comparison["judgement"]["welch"]
            cm = CompareMeans(
                DescrStatsW(exact(c["n"], c["avg"], c["stddev"])), DescrStatsW(exact(b["n"], b["avg"], b["stddev"]))
            )
            low, high = cm.tconfint_diff(alpha=0.05, usevar="unequal")
            p = cm.ttest_ind(usevar="unequal")[1]
            ok = (
                math.isclose(welch["ci"][0], low, rel_tol=1e-6)
                and math.isclose(welch["ci"][1], high, rel_tol=1e-6)
                and math.isclose(welch["p"], p, rel_tol=1e-6, abs_tol=1e-300)
            )
            rows.append(
                [
                    comparison["candidate"],
                    f"{welch['ci'][0]:.4g} .. {welch['ci'][1]:.4g}",
                    f"{welch['p']:.3g}",
                    f"{low:.4g} .. {high:.4g}",
                    f"{p:.3g}",
                    "yes" if ok else "NO",
                ]
            )
            if not ok:
                failures.append(f"audit Welch disagrees with statsmodels: {comparison['candidate']}")
    return rows, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", choices=("coverage", "plan", "audit"), help="run one table")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    failures: list[str] = []
    print(f"{args.reps} repetitions per row, 95% intervals; rates ± one Monte Carlo standard error\n")
    if args.only in (None, "coverage"):
        cov, f1, inconsistent, limits = coverage_rows(args.reps, rng)
        print(
            table(
                [
                    "group",
                    "scenario",
                    "center",
                    "estimand",
                    "true change",
                    "coverage",
                    "coverage when judged",
                    "significant",
                    "cannot judge",
                    "other estimand",
                ],
                cov,
                args.markdown,
            )
        )
        print("\nKnown limits (target not checked):")
        for number, limit in enumerate(limits, start=1):
            print(f"[{number}] {limit}")
        print(f"\nverdicts contradicting their interval: {inconsistent}\n")
        failures += f1 + ([f"{inconsistent} verdicts contradict their interval"] if inconsistent else [])
    if args.only in (None, "plan"):
        plan_reps = max(500, args.reps // 2)
        rows, f2 = plan_rows(plan_reps, rng)
        print(f"plan: advised n, then the power abstat compare reaches with it ({plan_reps} repetitions)\n")
        print(
            table(
                ["pilot", "advised n per variant", "compare --center", "stated power", "simulated power"],
                rows,
                args.markdown,
            )
        )
        failures += f2
    if args.only in (None, "audit"):
        rows, f3 = audit_rows()
        print("\naudit: Welch's re-judgement of published ministat claims against statsmodels\n")
        print(
            table(
                ["claim (candidate)", "abstat audit Welch 95% interval", "p", "statsmodels interval", "p", "agree"],
                rows,
                args.markdown,
            )
        )
        failures += f3
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    for failure in failures:
        print(f"MISSED TARGET (beyond 2 Monte Carlo errors): {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
