"""Calibration battery for ``abstat compare``: false-positive rate and power.

For each scenario (simulated data shaped like the seeds) the script draws
``--reps`` A/A pairs (both variants from the same distribution) and as many
A/B pairs (the candidate multiplied by ``1 + shift``) and counts how often
each test declares a difference at alpha = 0.05:

- ``abstat``:      ``abstat.compare`` with its defaults (median centre,
                   adaptive estimator; runs as the unit for nested data)
- ``pooled t``:    ministat's Student's t with pooled variance
- ``Welch``:       Welch's unequal-variances t
- ``Mann-Whitney``: Wilcoxon-Mann-Whitney, two-sided (scipy defaults)

All four see the same draws; for nested data the three classic tests get
the pooled samples, as ministat users would feed them.  Each rate is printed
with its Monte Carlo standard error sqrt(p (1 - p) / reps).

    python benchmarks/calibration.py            # 2000 repetitions (~1.5 min, 1 core)
    python benchmarks/calibration.py --reps 4000 --markdown   # the table in docs/statistics.md (~3 min)
    python benchmarks/calibration.py --quick    # 400 repetitions
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


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    shift: float  # relative change of the candidate in the A/B case
    draw: Callable[[np.random.Generator, float], np.ndarray]  # factor -> samples
    nested: bool = False
    draw_b: Callable[[np.random.Generator], np.ndarray] | None = None  # A/B candidate, if not a scaling
    change: str | None = None  # how the A/B candidate differs, if not a scaling


def _normal(n: int) -> Callable[[np.random.Generator, float], np.ndarray]:
    return lambda rng, f: rng.normal(1000.0, 10.0, n) * f


def _lognormal(rng: np.random.Generator, f: float, n: int = 50) -> np.ndarray:
    # build-time-like: a floor plus a right-skewed part
    return (1000.0 + 30.0 * rng.lognormal(0.0, 1.0, n)) * f


def _tsc(rng: np.random.Generator, f: float, n: int = 50) -> np.ndarray:
    # TSC cycles: true cost ~ N(440, 7) read in steps of 20 cycles (ties)
    return np.round(rng.normal(440.0, 7.0, n) * f / 20.0) * 20.0


def _outliers(rng: np.random.Generator, f: float, n: int = 50) -> np.ndarray:
    # interrupts: 3% of the samples 1.3-1.8x slower
    a = rng.normal(1000.0, 10.0, n)
    hit = rng.random(n) < 0.03
    a[hit] *= rng.uniform(1.3, 1.8, int(hit.sum()))
    return a * f


def _bimodal(rng: np.random.Generator, f: float, n: int = 50) -> np.ndarray:
    # like the Coffee Lake pv64 seed: a main mode and 20% in a slow mode +25%
    slow = rng.random(n) < 0.2
    return np.where(slow, rng.normal(1250.0, 10.0, n), rng.normal(1000.0, 10.0, n)) * f


def _fewer_slow(rng: np.random.Generator, n: int = 50) -> np.ndarray:
    # the bimodal shape, but the slow mode taken by 5% instead of 20%
    slow = rng.random(n) < 0.05
    return np.where(slow, rng.normal(1250.0, 10.0, n), rng.normal(1000.0, 10.0, n))


def _nested(rng: np.random.Generator, f: float, boots: int = 8, per_boot: int = 30) -> list[np.ndarray]:
    # each boot has its own offset (sd 1%), samples inside a boot sd 0.5%
    offsets = rng.normal(0.0, 0.01, boots)
    return [rng.normal(1000.0 * (1.0 + o), 5.0, per_boot) * f for o in offsets]


SCENARIOS = [
    Scenario("normal", "N(1000, 10), n=50 per variant", 0.005, _normal(50)),
    Scenario("normal-small", "N(1000, 10), n=10 per variant", 0.012, _normal(10)),
    Scenario("lognormal", "1000 + 30 LogN(0, 1), n=50 (right skew)", 0.01, _lognormal),
    Scenario("tsc-quantized", "N(440, 7) in steps of 20 cycles, n=50 (ties)", 0.01, _tsc),
    Scenario("outliers", "N(1000, 10) + 3% at 1.3-1.8x, n=50", 0.005, _outliers),
    Scenario("bimodal", "80% N(1000, 10) + 20% N(1250, 10), n=50", 0.006, _bimodal),
    Scenario("mode-share", "bimodal; A/B: slow mode 20% -> 5%, modes unmoved", 0.0, _bimodal,
             draw_b=_fewer_slow, change="share 20%->5%"),
    Scenario("nested", "8 boots x 30, boot offset sd 1%, within sd 0.5%", 0.02, _nested, nested=True),
]


def rejections(scenario: Scenario, factor: float | None, reps: int, seed: int) -> dict[str, int]:
    """Rejection counts; ``factor`` None draws the candidate with ``draw_b``."""
    rng = np.random.default_rng(seed)
    counts = {"abstat": 0, "pooled t": 0, "Welch": 0, "Mann-Whitney": 0, "covered": 0, "flagged": 0}
    truth = 100.0 * (factor - 1.0) if factor is not None else math.nan
    xs, ys = [], []
    for _ in range(reps):
        x = scenario.draw(rng, 1.0)
        y = scenario.draw_b(rng) if (scenario.draw_b and factor is None) else scenario.draw(rng, factor or 1.0)
        result = abstat.compare(x, y, confidence=1.0 - ALPHA)
        counts["abstat"] += bool(result.p_value < ALPHA)
        counts["covered"] += bool(result.ci_pct[0] <= truth <= result.ci_pct[1])
        shares = any(w.code == "far-out-share" for w in result.warnings)
        counts["flagged"] += bool(result.p_value < ALPHA or shares)
        if scenario.nested:
            x, y = np.concatenate(x), np.concatenate(y)
        xs.append(x)
        ys.append(y)
    X, Y = np.array(xs), np.array(ys)
    counts["pooled t"] = int(np.sum(stats.ttest_ind(X, Y, axis=1).pvalue < ALPHA))
    counts["Welch"] = int(np.sum(stats.ttest_ind(X, Y, axis=1, equal_var=False).pvalue < ALPHA))
    counts["Mann-Whitney"] = int(np.sum(stats.mannwhitneyu(X, Y, axis=1).pvalue < ALPHA))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="repetitions per scenario and case")
    parser.add_argument("--quick", action="store_true", help="400 repetitions")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--only", help="comma-separated scenario names")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    reps = 400 if args.quick else args.reps
    chosen = SCENARIOS
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [s for s in SCENARIOS if s.name in wanted]
    tests = ["abstat", "pooled t", "Welch", "Mann-Whitney"]
    rows = []
    start = time.perf_counter()
    for sc in chosen:
        i = SCENARIOS.index(sc)  # the same draws whether run alone or with the others
        aa = rejections(sc, 1.0, reps, args.seed + 2 * i)
        ab = rejections(sc, None if sc.draw_b else 1.0 + sc.shift, reps, args.seed + 2 * i + 1)
        rows.append((sc, aa, ab))
        if not args.markdown:
            print(f"# {sc.name} done ({time.perf_counter() - start:.0f}s)", file=sys.stderr)
    mcse = lambda p: math.sqrt(max(p * (1 - p), 0.0) / reps)  # noqa: E731
    print(f"repetitions per cell: {reps}; alpha = {ALPHA}; Monte Carlo SE of a 5% rate: {mcse(0.05):.2%}")
    if args.markdown:
        print()
        print("| scenario | shift | " + " | ".join(f"FPR {t}" for t in tests) + " | "
              + " | ".join(f"power {t}" for t in tests) + " | abstat CI coverage (A/A, A/B) |")
        print("|" + "---|" * (3 + 2 * len(tests)))
        for sc, aa, ab in rows:
            fpr = [f"{aa[t] / reps:.1%}" for t in tests]
            pw = [f"{ab[t] / reps:.1%}" for t in tests]
            cov = f"{aa['covered'] / reps:.1%}, " + ("n/a" if sc.draw_b else f"{ab['covered'] / reps:.1%}")
            print(f"| {sc.name} | {sc.change or format(sc.shift, '.1%')} | " + " | ".join(fpr) + " | " + " | ".join(pw) + f" | {cov} |")
        print()
    else:
        print(f"{'scenario':<15}{'shift':>6}  {'test':<13}{'FPR':>14}{'power':>16}")
        for sc, aa, ab in rows:
            for t in tests:
                fp, pw = aa[t] / reps, ab[t] / reps
                print(f"{sc.name:<15}{sc.change or format(sc.shift, '.1%'):>6}  {t:<13}{fp:>7.1%} ±{mcse(fp):.1%}{pw:>9.1%} ±{mcse(pw):.1%}")
            print(f"{sc.name:<15}{'':>6}  {'abstat CI covers the true change':<34}"
                  f"A/A {aa['covered'] / reps:.1%}, A/B " + ("n/a" if sc.draw_b else f"{ab['covered'] / reps:.1%}"))
    verdicts = []
    for sc, aa, ab in rows:
        fpr = aa["abstat"] / reps
        ok_fpr = fpr <= 0.06
        best = max(ab[t] for t in tests[1:]) / reps
        power = ab["abstat"] / reps
        ok_power = sc.nested or sc.draw_b is not None or power >= best - 2 * mcse(best)
        verdicts.append(ok_fpr and ok_power)
        if sc.draw_b is not None:
            print(f"{sc.name:<15} abstat significant or far-out-share warning: A/A {aa['flagged'] / reps:.1%}, "
                  f"A/B {ab['flagged'] / reps:.1%}")
        print(
            f"{sc.name:<15} abstat FPR {fpr:.1%} {'<=' if ok_fpr else '>'} 6%;"
            + ("" if sc.nested else f" {'detection' if sc.draw_b else 'power'} {power:.1%} vs best classic {best:.1%}: {'ok' if ok_power else 'BELOW'}")
        )
    print(f"elapsed {time.perf_counter() - start:.0f}s")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
