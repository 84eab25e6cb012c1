"""Calibration of ``abstat compare``: coverage of the named estimand, false positives, power.

For every row: ``reps`` A/B draws (baseline population X, candidate Y) and
as many A/A draws (X against X, the candidate's size).  For each centre
compared (``auto``, the default; ``median``; ``mean``):

- **coverage**: the share of intervals that contain the true change of the
  estimand the result names (``estimand``; computed from the populations by
  ``calibration_truth.truth``, never from samples; a ``cannot judge``
  counts as a miss);
- **FPR**: the share of A/A draws called significant;
- **power**: the share of A/B draws called significant, beside Welch's t,
  Yuen's 20%-trimmed t and the Brunner-Munzel test (scipy) on the same
  draws; a reference test counts as *valid* in a row when its own A/A rate
  is at most 6% (beyond two Monte Carlo errors it is marked invalid), and
  the gap is the default's power minus the best valid reference's, with the
  Monte Carlo error of that paired difference.  With ``--validity-draws V``
  (default 2000) a reference's A/A rate is measured on V further draws of
  the row (its own generator, so the row's draws are unchanged) instead of
  the row's own: at 300 draws a test whose true rate is 6.7% passes as valid
  half of the time; a second gap is size-adjusted (each reference at the
  p-value threshold where its rate on those draws is at most 5%).

Rows named "balanced ..." (issue 34): independent normal, log-normal and
grid-20-with-2%-interrupts data at 10, 15 and 20 values a side, a null row
and a shift sized for about 45% power each; they draw from generators of
their own, so they leave every other row's draws as they were
(``--only balanced`` runs them alone, on the same draws).

Rows whose candidate has the baseline's centre but another shape ("null"
rows) have no power; their A/B rate is a false-positive rate for every
estimand whose true change is 0 (to within 0.05%).

Targets (the default, ``auto``): FPR <= 6% and coverage >= 94% in every row
with n >= 10 per side, coverage >= 93% at n = 5 and 7; power at most 5
points below the best valid reference.  Every rate is printed with its Monte
Carlo standard error; the script exits 1 when a target is missed by more
than two of them.

    python benchmarks/calibration.py --reps 2000 --markdown   # the tables of docs/statistics.md
    python benchmarks/calibration.py --quick                  # 300 repetitions
    python benchmarks/calibration.py --seed 7 --reps 1000     # fresh draws
    python benchmarks/calibration.py --noise-only --reps 1000 --markdown   # abstat noise's rows only
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from calibration_truth import Component, Population, normal, population, truth  # noqa: E402

import abstat  # noqa: E402

ALPHA = 0.05
FPR_TARGET = 0.06
COVERAGE_TARGET = 0.94
SMALL_COVERAGE_TARGET = 0.93
POWER_GAP = 0.05
ESTIMANDS = ("hl_ratio", "geomean_ratio", "median_ratio", "mean_ratio")
Sampler = Callable[[np.random.Generator, int], object]


@dataclass
class Row:
    name: str
    x: Population | Sampler
    y: Population | Sampler
    nx: int
    ny: int
    centres: tuple[str, ...] = ("auto",)
    null: bool = False  # no change in centre: the A/B rate is a false-positive rate
    truths: dict[str, float] = field(default_factory=dict)  # given, for samplers

    def draw(self, which: str, rng: np.random.Generator, n: int):
        source = self.x if which == "x" else self.y
        return source.sample(rng, n) if isinstance(source, Population) else source(rng, n)

    def true_change(self, estimand: str) -> float:
        if estimand not in self.truths:
            if not (isinstance(self.x, Population) and isinstance(self.y, Population)):
                return math.nan
            self.truths[estimand] = truth(estimand, self.x, self.y)
        return self.truths[estimand]


# ------------------------------------------------------------------------------ rows


def interrupts(share: float, mu: float, sd: float) -> Component:
    """An interrupt during the measurement: the sample is 1.3-1.8 times slower."""
    return Component(share, stats.norm(mu, sd), (1.3, 1.8))


def ar1(phi: float, mu: float = 1000.0, sd: float = 10.0) -> Sampler:
    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        e = rng.normal(0.0, sd * math.sqrt(1 - phi * phi), n + 100)
        x = np.empty(n + 100)
        x[0] = rng.normal(0.0, sd)
        for t in range(1, n + 100):
            x[t] = phi * x[t - 1] + e[t]
        return mu + x[100:]

    return draw


def nested(boots: int, per_boot: int, factor: float = 1.0) -> Sampler:
    def draw(rng: np.random.Generator, n: int) -> list[np.ndarray]:
        return [
            factor * 1000.0 * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.005, per_boot)) for _ in range(boots)
        ]

    return draw


def poisson(lam: float) -> Sampler:
    return lambda rng, n: rng.poisson(lam, n).astype(float)


ALL = ("auto", "median", "mean")
N = population("normal", normal(1000, 10))
LOGN = population("log-normal", Component(1.0, stats.lognorm(1.0, loc=1000, scale=30)))
OUT = population("3% interrupts", normal(1000, 10, 0.97), interrupts(0.03, 1000, 10))
BIM = population("bimodal 80/20", normal(1000, 10, 0.8), normal(1250, 10, 0.2))
MIX50 = population("mixture 50/50", normal(1000, 10, 0.5), normal(1100, 10, 0.5))
MIX55 = population("mixture 55/45", normal(1000, 10, 0.55), normal(1100, 10, 0.45))
MIX4 = population("mixture 50/50, modes 4 sd apart", normal(1000, 10, 0.5), normal(1040, 10, 0.5))
WIDE = population("wide log-normal", Component(1.0, stats.lognorm(1.5, scale=1000)))
BEFORE = population("seed 000 before", normal(440, 6.7, 0.98), interrupts(0.02, 440, 6.7), step=20)
AFTER = population("seed 000 after", normal(370, 13.4, 0.98), interrupts(0.02, 370, 13.4), step=20)
AFTER_SUB = population("seed 000 sub-step", normal(435.6, 13.4, 0.98), interrupts(0.02, 435.6, 13.4), step=20)
G = population("grid 20", normal(440, 7), step=20)

ROWS = [
    Row("normal, +0.5%", N, N.scaled(1.005), 50, 50, ALL),
    Row("log-normal, +1%", LOGN, LOGN.scaled(1.01), 50, 50),
    Row("3% interrupts (x1.3-1.8), +0.5%", OUT, OUT.scaled(1.005), 50, 50, ALL),
    Row("bimodal 80/20, +1%", BIM, BIM.scaled(1.01), 50, 50),
    Row("mixture 50/50, +1%", MIX50, MIX50.scaled(1.01), 50, 50, ALL),
    Row("mixture 55/45, +1%", MIX55, MIX55.scaled(1.01), 50, 50, ALL),
    Row("mixture 50/50, modes 4 sd apart, +1%", MIX4, MIX4.scaled(1.01), 100, 100, ALL),
    Row("wide log-normal (s 1.5), +50%", WIDE, WIDE.scaled(1.5), 50, 50),
    Row(
        "n 10 sd 3% vs n 200 sd 1%, +1%",
        population("sd 3%", normal(1000, 30)),
        population("sd 1%", normal(1010, 10)),
        10,
        200,
        ALL,
    ),
    Row(
        "n 20 sd 5% vs n 100 sd 1% (null)",
        population("sd 5%", normal(1000, 50)),
        population("sd 1%", normal(1000, 10)),
        20,
        100,
        ALL,
        null=True,
    ),
    Row(
        "normal vs t(3), n 50 (null)",
        N,
        population("t3", Component(1.0, stats.t(3, loc=1000, scale=10))),
        50,
        50,
        null=True,
    ),
    Row(
        "AR(1) phi 0.3, n 50, +0.5%",
        ar1(0.3),
        lambda r, n: 1.005 * ar1(0.3)(r, n),
        50,
        50,
        truths={e: 0.5 for e in ESTIMANDS},
    ),
    Row(
        "AR(1) phi 0.3, n 200, +0.25%",
        ar1(0.3),
        lambda r, n: 1.0025 * ar1(0.3)(r, n),
        200,
        200,
        truths={e: 0.25 for e in ESTIMANDS},
    ),
    Row("seed 000: grid 20, after 2x wider, -16%, 2% interrupts", BEFORE, AFTER, 98, 98, ALL),
    Row("seed 000: grid 20, after 2x wider, -1% (sub-step)", BEFORE, AFTER_SUB, 98, 98, ALL),
    Row("grid 20: whole step 440 -> 420, n 10", G, population("420", normal(420, 7), step=20), 10, 10, ALL),
    Row("grid 20: sub-step +1% (3 levels), n 50", G, population("444", normal(444.4, 7), step=20), 50, 50, ALL),
    Row("grid 20: sub-step +1% (3 levels), n 100", G, population("444", normal(444.4, 7), step=20), 100, 100),
    Row(
        "grid 20: sub-step +1% (5 levels), n 50",
        population("440/15", normal(440, 15), step=20),
        population("444/15", normal(444.4, 15), step=20),
        50,
        50,
    ),
    Row(
        "counts with zeros: Poisson(2) vs Poisson(2.2), n 50",
        poisson(2.0),
        poisson(2.2),
        50,
        50,
        ALL,
        truths={"mean_ratio": 10.0, "median_ratio": 0.0},
    ),
    Row("n 5, normal sd 1%, +2%", N, N.scaled(1.02), 5, 5, ALL),
    Row("n 7, normal sd 1%, +2%", N, N.scaled(1.02), 7, 7, ALL),
    Row(
        "n 5, log-normal s 0.3, +10%",
        population("ln03", Component(1.0, stats.lognorm(0.3, scale=1000))),
        population("ln03b", Component(1.0, stats.lognorm(0.3, scale=1100))),
        5,
        5,
    ),
    Row(
        "nested: 8 boots x 30, boot sd 1%, +2%",
        nested(8, 30),
        nested(8, 30, 1.02),
        240,
        240,
        truths={e: 2.0 for e in ESTIMANDS},
    ),
]


def grid_interrupts(change: float = 0.0) -> Population:
    """Grid 20 (a latent N(440, 7)) with 2% interrupts, the latent scaled by ``1 + change``."""
    mu = 440.0 * (1.0 + change)
    return population(f"grid 20 {mu:g}", normal(mu, 7, 0.98), interrupts(0.02, mu, 7), step=20)


# Issue 34: balanced samples of 10-20 values a side (the serial factor's pre-test fires on independent data at
# its nominal rate there), shifts sized for about 45% power.  Each row draws from its own generator
# (seed, 34, index), so these rows leave the draws of ROWS and of the later tables unchanged, and ``--only``
# gives them the draws of a full run.
BALANCED = [
    row
    for n, shifts in ((10, (0.009, 0.027, 0.02)), (15, (0.007, 0.022, 0.015)), (20, (0.006, 0.019, 0.013)))
    for row in (
        Row(f"balanced normal, n {n} (null)", N, N, n, n, null=True),
        Row(f"balanced normal, +{100 * shifts[0]:g}%, n {n}", N, N.scaled(1 + shifts[0]), n, n),
        Row(f"balanced log-normal, n {n} (null)", LOGN, LOGN, n, n, null=True),
        Row(f"balanced log-normal, +{100 * shifts[1]:g}%, n {n}", LOGN, LOGN.scaled(1 + shifts[1]), n, n),
        Row(f"balanced grid 20, 2% interrupts, n {n} (null)", grid_interrupts(), grid_interrupts(), n, n, null=True),
        Row(
            f"balanced grid 20, 2% interrupts, +{100 * shifts[2]:g}%, n {n}",
            grid_interrupts(),
            grid_interrupts(shifts[2]),
            n,
            n,
        ),
    )
]


# ------------------------------------------------------------------------------ running


def rate(hits: float, reps: int) -> tuple[float, float]:
    p = hits / reps
    return p, math.sqrt(max(p * (1 - p), 1.0 / reps) / reps)


def fmt(p: float, se: float) -> str:
    return f"{100 * p:.1f}% ±{100 * se:.1f}"


def pooled(data) -> np.ndarray:
    return np.concatenate(data) if isinstance(data, list) else np.asarray(data, dtype=float)


def references(a, b) -> dict[str, float]:
    """The references' p-values (1 where undefined)."""
    x, y = pooled(a), pooled(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ps = {
            "Welch": stats.ttest_ind(x, y, equal_var=False).pvalue,
            "Yuen": stats.ttest_ind(x, y, equal_var=False, trim=0.2).pvalue,
            "BM": stats.brunnermunzel(x, y).pvalue,
        }
    return {k: float(p) if p == p else 1.0 for k, p in ps.items()}


@dataclass
class Tally:
    reps: int = 0
    cover: int = 0
    fp: int = 0
    power: int = 0
    cannot: int = 0
    estimands: dict[str, int] = field(default_factory=dict)
    hits: list[bool] = field(default_factory=list)  # A/B significance per draw (paired gaps)


def run_row(row: Row, reps: int, rng: np.random.Generator) -> tuple[dict[str, Tally], dict[str, list[list[float]]]]:
    tallies = {c: Tally() for c in row.centres}
    refs: dict[str, list[list[float]]] = {"aa": [], "ab": []}  # p-values
    for _ in range(reps):
        a = row.draw("x", rng, row.nx)
        a2 = row.draw("x", rng, row.ny)
        b = row.draw("y", rng, row.ny)
        refs["aa"].append(list(references(a, a2).values()))
        refs["ab"].append(list(references(a, b).values()))
        for centre in row.centres:
            t = tallies[centre]
            aa = abstat.compare(a, a2, center=centre)
            ab = abstat.compare(a, b, center=centre)
            t.reps += 1
            t.fp += aa.significant
            t.power += ab.significant
            t.hits.append(bool(ab.significant))
            t.estimands[ab.estimand] = t.estimands.get(ab.estimand, 0) + 1
            if ab.verdict == "cannot judge":
                t.cannot += 1
                continue
            true = row.true_change(_truth_key(ab.estimand))
            slack = 1e-9 * (1.0 + abs(true))  # a zero-width interval of exact grid ratios, computed on logarithms
            t.cover += ab.ci_pct[0] - slack <= true <= ab.ci_pct[1] + slack
    return tallies, refs


def _truth_key(estimand: str) -> str:
    return {"median_difference": "median_ratio", "mean_difference": "mean_ratio"}.get(estimand, estimand)


def reference_aa(row: Row, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The references' A/A p-values on ``draws`` further draws of the row (draws x 3)."""
    return np.array(
        [list(references(row.draw("x", rng, row.nx), row.draw("x", rng, row.ny)).values()) for _ in range(draws)]
    )


def _gap(hits: list[bool], ab: np.ndarray, valid: list[bool], reps: int) -> tuple[str, float, float]:
    """The paired power gap to the best valid reference (``ab``: its calls per draw)."""
    names = ("Welch", "Yuen", "BM")
    best = max((i for i in range(3) if valid[i]), key=lambda i: ab[:, i].mean(), default=None)
    if best is None:
        return "no valid reference", 0.0, 0.0
    diff = np.array(hits, dtype=float) - ab[:, best]
    gap, se = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(reps)) if reps > 1 else 0.0
    return f"{100 * gap:+.1f} ±{100 * se:.1f} vs {names[best]}", gap, se


def _auto_failures(
    row: Row, named: str, cov: tuple[float, float], fp: tuple[float, float], pw: tuple[float, float]
) -> list[str]:
    """The default's missed coverage and false-positive targets in the row."""
    failures = []
    small = min(row.nx, row.ny) < 10
    target = SMALL_COVERAGE_TARGET if small else COVERAGE_TARGET
    if cov[0] + 2 * cov[1] < target:
        failures.append(f"coverage {row.name}: {fmt(*cov)}")
    if not small and fp[0] - 2 * fp[1] > FPR_TARGET:
        failures.append(f"false positives {row.name}: {fmt(*fp)}")
    if (
        row.null
        and not small
        and abs(row.true_change(_truth_key(named.split(",")[0]))) < 0.05
        and pw[0] - 2 * pw[1] > FPR_TARGET
    ):
        failures.append(f"false positives (shapes) {row.name}: {fmt(*pw)}")
    return failures


def _levels(
    aa: np.ndarray, reps: int, checked: np.ndarray | None, checks: int
) -> tuple[np.ndarray, list[bool], np.ndarray | None]:
    """The references' A/A rates (on the further draws when given), their
    validity, and their size-adjusted thresholds (None without further draws)."""
    rates, k = ((aa < ALPHA).mean(axis=0), reps) if checked is None else ((checked < ALPHA).mean(axis=0), checks)
    valid = [rates[i] - 2 * math.sqrt(max(rates[i] * (1 - rates[i]), 1 / k) / k) <= FPR_TARGET for i in range(3)]
    levels = (
        None
        if checked is None
        else np.array([min(ALPHA, float(np.sort(checked[:, i])[int(ALPHA * checks)])) for i in range(3)])
    )
    return rates, valid, levels


def row_lines(
    row: Row,
    tallies: dict[str, Tally],
    refs: dict[str, list[list[float]]],
    reps: int,
    checked: np.ndarray | None = None,
    checks: int = 0,
) -> tuple[list[list[str]], list[str]]:
    """The row's cells; ``checked``: the references' A/A p-values on ``checks``
    further draws, which decide validity and give the size-adjusted gap (each
    reference at the threshold where its A/A rate there is at most 5%)."""
    p_ab = np.array(refs["ab"], dtype=float)
    ab = (p_ab < ALPHA).astype(float)
    rates, valid, levels = _levels(np.array(refs["aa"], dtype=float), reps, checked, checks)
    references_cells = [
        fmt(*rate(ab[:, i].sum(), reps))
        + ("" if checked is None else f" (A/A {100 * rates[i]:.1f}%)")
        + ("" if valid[i] else " invalid")
        for i in range(3)
    ]
    lines, failures = [], []
    for centre, t in tallies.items():
        ordered = sorted(t.estimands, key=lambda e: -t.estimands[e])
        named = ", ".join(ordered)
        trues = ", ".join(f"{row.true_change(_truth_key(e)):+.3g}%" for e in ordered)
        cov, fp, pw = rate(t.cover, reps), rate(t.fp, reps), rate(t.power, reps)
        cells = [row.name, f"{row.nx}/{row.ny}", centre, named, trues, fmt(*cov), fmt(*fp)]
        if row.null:
            cells += [f"({fmt(*pw)})", "", "", "", ""] + ([""] if checked is not None else [])
        else:
            text, gap, se = _gap(t.hits, ab, valid, reps)
            cells += [fmt(*pw), *references_cells, text]
            if centre == "auto" and gap + 2 * se < -POWER_GAP:
                failures.append(f"power {row.name}: {text}")
            if levels is not None:
                cells.append(_gap(t.hits, (p_ab < levels).astype(float), [True] * 3, reps)[0])
        cells.append(f"{100 * t.cannot / reps:.1f}%")
        lines.append(cells)
        if centre == "auto":
            failures += _auto_failures(row, named, cov, fp, pw)
    return lines, failures


def equivalence_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    threshold = 1.0
    for center in ALL:
        at_edge = inside = 0
        for _ in range(reps):
            a = rng.normal(1000.0, 10.0, 100)
            at_edge += (
                abstat.compare(a, rng.normal(1000.0, 10.0, 100) * 1.01, center=center, threshold=threshold).verdict
                == "equivalent"
            )
            inside += (
                abstat.compare(a, rng.normal(1000.0, 10.0, 100), center=center, threshold=threshold).verdict
                == "equivalent"
            )
        edge = rate(at_edge, reps)
        rows.append([center, f"{threshold:g}%", fmt(*edge), fmt(*rate(inside, reps))])
        if edge[0] - 2 * edge[1] > FPR_TARGET:
            failures.append(f"equivalence at the threshold {center}: {fmt(*edge)}")
    return rows, failures


NOISE_N = 40  # abstat noise's default runs per variant
NOISE_SHAPES = [("normal", N), ("log-normal", LOGN), ("grid 20 (3 levels)", G), ("3% interrupts", OUT)]
NOISE_TOLERANCE = 0.2


def _shifted(pop: Population, change_pct: float) -> Population:
    """The candidate whose default estimand changes by ``change_pct``: the
    population scaled (every ratio estimand moves by the factor), or on a
    grid the latent values shifted until the Hodges-Lehmann ratio of the
    cell-spread values moves by that much (the grid itself stays)."""
    if not pop.step:
        return pop.scaled(1 + change_pct / 100)
    from scipy import optimize

    def shifted(s: float) -> Population:
        return population(
            "shifted",
            *[
                Component(c.weight, stats.norm(c.dist.mean() * (1 + s), c.dist.std()), c.slowdown)
                for c in pop.components
            ],
            step=pop.step,
        )

    s = optimize.brentq(lambda s: truth("hl_ratio", pop, shifted(s)) - change_pct, 0.0, 0.6, xtol=1e-7)
    return shifted(s)


NOISE_FACTORS = (0.8, 0.9, 1.0, 1.1, 1.2, 1.3)  # multiples of the reported change compare is simulated at


def eighty_percent_point(factors: tuple[float, ...], rates: list[float], reps: int) -> tuple[float, float, str]:
    """The multiple at which the power curve (``rates`` at ``factors``) crosses 80%, interpolated
    linearly (as benchmarks/noise.py), with its Monte Carlo standard error (the binomial error at
    80% over the local slope) and ``<``/``>`` when it lies beyond the factors (clamped there)."""
    ordered = np.maximum.accumulate(rates)  # Monte Carlo noise must not make the curve fall
    if ordered[0] >= 0.8:
        return factors[0], float("nan"), "<"
    if ordered[-1] < 0.8:
        return factors[-1], float("nan"), ">"
    point = float(np.interp(0.8, ordered + np.arange(len(factors)) * 1e-9, factors))
    i = max(1, int(np.searchsorted(ordered, 0.8)))
    slope = max((ordered[i] - ordered[i - 1]) / (factors[i] - factors[i - 1]), 1e-3)
    return point, float(np.sqrt(0.8 * 0.2 / reps) / slope), ""


def noise_rows(reps: int, rng: np.random.Generator, shapes: str = "") -> tuple[list[list[str]], list[str]]:
    """abstat noise's detectable change (80% power) on A/A runs, against the
    change the default compare detects with 80% power in simulation: compare's
    power at fixed multiples of the median reported change (``reps`` draws
    each), its 80% point interpolated between them (a bisection on a flat
    power curve, the grid's, ran away on one unlucky step)."""
    from abstat.noise.analysis import detectable_change

    rows, failures = [], []
    for name, pop in NOISE_SHAPES:
        if shapes and shapes not in name:
            continue
        reported = [
            detectable_change(list(pop.sample(rng, NOISE_N)), list(pop.sample(rng, NOISE_N)), confidence=0.95)[0]
            for _ in range(200)
        ]
        reported = np.array([r for r in reported if r is not None])
        typical = float(np.median(reported))
        rates = []
        for factor in NOISE_FACTORS:
            target = _shifted(pop, factor * typical)
            rates.append(
                sum(
                    bool(abstat.compare(pop.sample(rng, NOISE_N), target.sample(rng, NOISE_N)).significant)
                    for _ in range(reps)
                )
                / reps
            )
        factor, se_factor, beyond = eighty_percent_point(NOISE_FACTORS, rates, reps)
        simulated = factor * typical
        medians = np.median(rng.choice(reported, (400, reported.size)), axis=1)  # the pilots' share of the error
        ratio = 1.0 / factor
        se = ratio * float(np.hypot(se_factor / factor, np.std(medians) / typical))
        within = float(np.mean(np.abs(reported / simulated - 1) <= NOISE_TOLERANCE))
        rows.append(
            [
                name,
                str(NOISE_N),
                f"{typical:.3g}%",
                f"{np.quantile(reported, 0.1):.3g}-{np.quantile(reported, 0.9):.3g}%",
                f"{beyond}{simulated:.3g}%",
                "/".join(f"{r:.0%}" for r in rates),
                f"{ratio:.2f} ± {se:.2f}",
                f"{within:.0%}",
            ]
        )
        if beyond or abs(ratio - 1) > NOISE_TOLERANCE + 2 * se:
            failures.append(
                f"noise detectable change {name}: {typical:.3g}% against {beyond}{simulated:.3g}% simulated"
            )
    return rows, failures


def table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows if i < len(r))) for i, h in enumerate(header)]  # short rows
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in [header, *rows])


HEADER = [
    "row",
    "n",
    "center",
    "estimand",
    "true change",
    "coverage",
    "FPR (A/A)",
    "power",
    "Welch",
    "Yuen 20%",
    "Brunner-Munzel",
    "power gap to the best valid",
    "cannot judge",
]
HEADER_ADJUSTED = [*HEADER[:-1], "gap, size-adjusted", HEADER[-1]]


def _only(row: Row, center: str) -> Row:
    """``row`` with only ``center``'s lines (all when ``center`` is empty); its draws stay the same."""
    return replace(row, centres=tuple(c for c in row.centres if c == center)) if center else row


def compare_rows(
    args: argparse.Namespace, reps: int, rng: np.random.Generator, check_rng: np.random.Generator
) -> tuple[list[list[str]], list[str]]:
    """The compare rows selected by ``--only`` (none with ``--noise-only``) and their missed targets."""
    lines, failures = [], []
    for full in ROWS:
        if args.noise_only or args.only and args.only not in full.name:
            continue
        row = _only(full, args.center)
        tallies, refs = run_row(row, reps, rng)
        checked = None if row.null or not args.validity_draws else reference_aa(row, args.validity_draws, check_rng)
        got, missed = row_lines(row, tallies, refs, reps, checked, args.validity_draws)
        lines += got
        failures += missed
    for k, full in enumerate(BALANCED):  # each on generators of its own (issue 34)
        if args.noise_only or args.only and args.only not in full.name:
            continue
        row = _only(full, args.center)
        tallies, refs = run_row(row, reps, np.random.default_rng([args.seed, 34, k]))
        own = np.random.default_rng([args.seed, 35, k])
        checked = None if row.null or not args.validity_draws else reference_aa(row, args.validity_draws, own)
        got, missed = row_lines(row, tallies, refs, reps, checked, args.validity_draws)
        lines += got
        failures += missed
    return lines, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="300 repetitions")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", default="", help="rows whose name contains this text")
    parser.add_argument(
        "--validity-draws",
        type=int,
        default=2000,
        help="further A/A draws on which the references' validity is measured (0: the row's own)",
    )
    parser.add_argument(
        "--noise-only",
        action="store_true",
        help="only the noise rows (abstat noise's detectable change), --reps draws per multiple",
    )
    parser.add_argument("--noise-shape", default="", help="only the noise rows whose shape contains this text")
    parser.add_argument(
        "--center",
        default="",
        help="only this centre's lines (auto, median, mean): every row's draws are still made, so the lines are "
        "those of a full run with the same seed",
    )
    args = parser.parse_args()
    reps = 300 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    check_rng = np.random.default_rng(args.seed + 1)
    started = time.process_time()
    lines, failures = compare_rows(args, reps, rng, check_rng)
    equiv, f3 = ([], []) if args.only or args.noise_only or args.center else equivalence_rows(reps, rng)
    noise, f4 = (
        ([], [])
        if args.only or args.center
        else noise_rows(reps if args.noise_only else max(200, reps // 2), rng, args.noise_shape)
    )
    failures += f3 + f4
    print(f"{reps} repetitions per row, alpha = {ALPHA}, seed {args.seed}; rates ± one Monte Carlo standard error\n")
    if lines:
        print(table(HEADER_ADJUSTED if args.validity_draws else HEADER, lines, args.markdown))
    if equiv:
        print()
        print(
            table(
                ["center", "threshold", "'equivalent' at a true change of +threshold", "'equivalent' with no change"],
                equiv,
                args.markdown,
            )
        )
    if noise:
        print()
        print(
            table(
                [
                    "shape",
                    "runs per variant",
                    "noise's detectable change (median of 200 A/A draws)",
                    "10-90% of draws",
                    "change the default compare detects 80% of the time (simulated)",
                    "compare's power at " + "/".join(f"{f:g}" for f in NOISE_FACTORS) + "x",
                    "ratio ± MC error",
                    "draws within 20%",
                ],
                noise,
                args.markdown,
            )
        )
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    for failure in failures:
        print(f"MISSED TARGET (beyond 2 Monte Carlo errors): {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
