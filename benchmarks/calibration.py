"""Calibration of ``abstat compare``: coverage, false-positive rate, power.

Three tables, every rate with its Monte Carlo standard error
``sqrt(p (1 - p) / reps)``:

1. **Coverage and power.**  The candidate is the baseline's distribution
   scaled by ``1 + shift`` (every estimand's true ratio is then exactly
   ``1 + shift``).  For each estimand (``--center median``: ratio of medians;
   ``--center mean``: ratio of means) the share of intervals that contain the
   true change (a "cannot judge" counts as a miss), the false-positive rate
   on A/A draws (shift 0), and the power on A/B draws, beside scipy's Welch t
   and Mann-Whitney tests on the same draws.
2. **False positives when shapes differ.**  Equal centres for every estimand
   (symmetric distributions) but unequal spreads, unequal n, or heavy tails on
   one side only.
3. **Equivalence.**  How often ``--threshold T`` calls the variants
   ``equivalent`` when the true change is exactly T (an error: at most 2.5%
   for the interval-inclusion rule at 95%) and when there is no change
   (the power of the equivalence verdict).

Targets: false-positive rate <= 6% and coverage >= 94% in every row.  The
script exits 1 when a row misses its target by more than two Monte Carlo
standard errors (so that ``--quick`` does not fail on noise).

    python benchmarks/calibration.py --reps 2000 --markdown   # the tables in docs/statistics.md
    python benchmarks/calibration.py --quick                  # 300 repetitions
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import abstat  # noqa: E402

ALPHA = 0.05
FPR_TARGET = 0.06
COVERAGE_TARGET = 0.94
Draw = Callable[[np.random.Generator, int], np.ndarray]


def normal(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.normal(1000.0, 10.0, n)


def lognormal(rng: np.random.Generator, n: int) -> np.ndarray:
    return 1000.0 + 30.0 * rng.lognormal(0.0, 1.0, n)


def wide_lognormal(rng: np.random.Generator, n: int) -> np.ndarray:
    return 1000.0 * rng.lognormal(0.0, 1.5, n)


def quantized(rng: np.random.Generator, n: int) -> np.ndarray:
    return 20.0 * np.round(rng.normal(440.0, 7.0, n) / 20.0)


def outliers(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.normal(1000.0, 10.0, n)
    hit = rng.random(n) < 0.03
    return np.where(hit, x * rng.uniform(1.3, 1.8, n), x)


def bimodal(rng: np.random.Generator, n: int) -> np.ndarray:
    slow = rng.random(n) < 0.2
    return np.where(slow, rng.normal(1250.0, 10.0, n), rng.normal(1000.0, 10.0, n))


def nested(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    boots = 8
    return [1000.0 * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.005, n // boots)) for _ in range(boots)]


@dataclass
class Scenario:
    name: str
    draw: Callable
    n: int
    shift: float
    nested: bool = False


COVERAGE = [
    Scenario("normal", normal, 50, 0.005),
    Scenario("log-normal", lognormal, 50, 0.01),
    Scenario("quantized (grid 20, scaled)", quantized, 50, 0.01),
    Scenario("3% outliers", outliers, 50, 0.005),
    Scenario("bimodal 80/20", bimodal, 50, 0.01),
    Scenario("nested 8 x 30", nested, 240, 0.02, nested=True),
    Scenario("n = 5 per side", normal, 5, 0.02),
    Scenario("wide log-normal", wide_lognormal, 50, 0.5),
]


def scaled(data, factor: float):
    return [run * factor for run in data] if isinstance(data, list) else data * factor


def pooled(data) -> np.ndarray:
    return np.concatenate(data) if isinstance(data, list) else data


def rate(hits: int, reps: int) -> tuple[float, float]:
    p = hits / reps
    return p, math.sqrt(max(p * (1 - p), 1.0 / reps) / reps)


def fmt(p: float, se: float) -> str:
    return f"{100 * p:.1f}% ±{100 * se:.1f}"


def coverage_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    for sc in COVERAGE:
        factor = 1.0 + sc.shift
        true_pct = 100.0 * sc.shift
        counts = {c: {"cover": 0, "fp": 0, "power": 0, "cannot": 0} for c in ("median", "mean")}
        welch = mw = 0
        for _ in range(reps):
            a0, a1, b = sc.draw(rng, sc.n), sc.draw(rng, sc.n), sc.draw(rng, sc.n)
            b = scaled(b, factor)
            for center in ("median", "mean"):
                aa = abstat.compare(a0, a1, center=center)
                ab = abstat.compare(a0, b, center=center)
                k = counts[center]
                k["fp"] += aa.significant
                k["power"] += ab.significant
                k["cannot"] += ab.verdict == "cannot judge"
                k["cover"] += ab.verdict != "cannot judge" and ab.ci_pct[0] <= true_pct <= ab.ci_pct[1]
            x, y = pooled(a0), pooled(b)
            welch += stats.ttest_ind(x, y, equal_var=False).pvalue < ALPHA
            mw += stats.mannwhitneyu(x, y, alternative="two-sided").pvalue < ALPHA
        for center, label in (("median", "ratio of medians"), ("mean", "ratio of means")):
            k = counts[center]
            cov, fp = rate(k["cover"], reps), rate(k["fp"], reps)
            estimand = label if not sc.nested else f"geometric means of run {center}s"
            rows.append([sc.name, f"{100 * sc.shift:g}%", estimand, fmt(*cov), fmt(*fp), fmt(*rate(k["power"], reps)),
                         f"{100 * k['cannot'] / reps:.1f}%",
                         fmt(*rate(welch, reps)) if center == "median" else "",
                         fmt(*rate(mw, reps)) if center == "median" else ""])
            if cov[0] + 2 * cov[1] < COVERAGE_TARGET:
                failures.append(f"coverage {sc.name} {center}: {fmt(*cov)}")
            if fp[0] - 2 * fp[1] > FPR_TARGET:
                failures.append(f"false positives {sc.name} {center}: {fmt(*fp)}")
    return rows, failures


def heavy_tailed(rng: np.random.Generator, n: int, share: float) -> np.ndarray:
    """Normal with a symmetric contamination of ``share`` from a 5x wider normal."""
    x = rng.normal(1000.0, 10.0, n)
    wide = rng.random(n) < share
    return np.where(wide, rng.normal(1000.0, 50.0, n), x)


SHAPES: list[tuple[str, Callable, Callable]] = [
    ("n 20 sd 5% vs n 100 sd 1%", lambda r: r.normal(1000, 50, 20), lambda r: r.normal(1000, 10, 100)),
    ("n 10 sd 3% vs n 100 sd 1%", lambda r: r.normal(1000, 30, 10), lambda r: r.normal(1000, 10, 100)),
    ("n 100 sd 1% vs n 10 sd 3%", lambda r: r.normal(1000, 10, 100), lambda r: r.normal(1000, 30, 10)),
    ("normal vs 20% wide tails, n 30", lambda r: r.normal(1000, 10, 30), lambda r: heavy_tailed(r, 30, 0.2)),
    ("normal vs 10% wide tails, n 100", lambda r: r.normal(1000, 10, 100), lambda r: heavy_tailed(r, 100, 0.1)),
    ("normal vs t(3), n 50", lambda r: r.normal(1000, 10, 50), lambda r: 1000 + 10 * r.standard_t(3, 50)),
]


def shape_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    for name, draw_x, draw_y in SHAPES:
        hits = {"median": 0, "mean": 0}
        welch = mw = 0
        for _ in range(reps):
            x, y = draw_x(rng), draw_y(rng)
            for center in hits:
                hits[center] += abstat.compare(x, y, center=center).significant
            welch += stats.ttest_ind(x, y, equal_var=False).pvalue < ALPHA
            mw += stats.mannwhitneyu(x, y, alternative="two-sided").pvalue < ALPHA
        med, mean = rate(hits["median"], reps), rate(hits["mean"], reps)
        rows.append([name, fmt(*med), fmt(*mean), fmt(*rate(welch, reps)), fmt(*rate(mw, reps))])
        for center, r in (("median", med), ("mean", mean)):
            if r[0] - 2 * r[1] > FPR_TARGET:
                failures.append(f"false positives {name} {center}: {fmt(*r)}")
    return rows, failures


def equivalence_rows(reps: int, rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    threshold = 1.0
    for center in ("median", "mean"):
        at_edge = inside = 0
        for _ in range(reps):
            a = normal(rng, 100)
            at_edge += abstat.compare(a, normal(rng, 100) * 1.01, center=center,
                                      threshold=threshold).verdict == "equivalent"
            inside += abstat.compare(a, normal(rng, 100), center=center, threshold=threshold).verdict == "equivalent"
        edge = rate(at_edge, reps)
        rows.append([center, f"{threshold:g}%", fmt(*edge), fmt(*rate(inside, reps))])
        if edge[0] - 2 * edge[1] > FPR_TARGET:
            failures.append(f"equivalence at the threshold {center}: {fmt(*edge)}")
    return rows, failures


def table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in [header, *rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="300 repetitions")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    reps = 300 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    cov, f1 = coverage_rows(reps, rng)
    shapes, f2 = shape_rows(reps, rng)
    equiv, f3 = equivalence_rows(reps, rng)
    print(f"{reps} repetitions per row, alpha = {ALPHA}; rates ± one Monte Carlo standard error\n")
    print(table(["scenario", "shift", "estimand", "coverage", "FPR (A/A)", "power", "cannot judge",
                 "power Welch", "power Mann-Whitney"], cov, args.markdown))
    print()
    print(table(["shapes (equal centres)", "FPR ratio of medians", "FPR ratio of means", "FPR Welch",
                 "FPR Mann-Whitney"], shapes, args.markdown))
    print()
    print(table(["center", "threshold", "'equivalent' at a true change of +threshold",
                 "'equivalent' with no change"], equiv, args.markdown))
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    failures = f1 + f2 + f3
    for failure in failures:
        print(f"MISSED TARGET (beyond 2 Monte Carlo errors): {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
