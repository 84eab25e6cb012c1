"""The default comparison at 10-50 values a side, with and without the rank-sum weighting, on the same draws.

Issue 34 (session 21): untied samples' drawn permutation reference is weighted to the exact law of the rank
sum (``abstat.stats.permutation_strata``).  Each cell's draws are compared twice by ``abstat.compare``: as
committed, and with the weighting off (``STRATA_MAX = 0``: the plain draws of seed 0, the rule before), beside
Welch's t and ``scipy.stats.permutation_test`` of the difference of means (999 resamples) on the same draws.
Cells: independent N(1000, 10) (+0.9/+0.7/+0.6% at n 10/15/20, as ``calibration.py``'s "balanced" rows),
1000 + 30 LogN(0, 1) +2.7% and grid 20 with 2% interrupts +2% at n 10 (no scipy permutation test there), and
AR(1) A/A draws (false positives) and +1% draws (coverage).  Rates ± one Monte Carlo error; the paired
difference (weighted - former) ± one error of the paired differences.

    python benchmarks/small_n_power.py --reps 1000
    python benchmarks/small_n_power.py --reps 1000 --only "normal"
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from calibration import LOGN, N, ar1, grid_interrupts  # noqa: E402

import abstat  # noqa: E402
from abstat.stats import permutation, permutation_strata  # noqa: E402

WEIGHTED = permutation_strata.STRATA_MAX


def cells() -> list[tuple[str, object, object, int, float]]:
    """(name, baseline, candidate, n a side, true change in % for coverage, NaN for none)."""
    out: list[tuple[str, object, object, int, float]] = []
    for n, shift in ((10, 0.009), (15, 0.007), (20, 0.006)):
        out.append((f"normal +{100 * shift:g}% n {n}", N, N.scaled(1 + shift), n, 100 * shift))
    out.append(("log-normal +2.7% n 10", LOGN, LOGN.scaled(1.027), 10, math.nan))
    out.append(("grid 20 +2% n 10", grid_interrupts(), grid_interrupts(0.02), 10, math.nan))
    for phi, n in ((0.6, 15), (0.3, 15), (0.6, 10), (0.3, 50), (0.6, 50)):
        out.append((f"AR(1) phi {phi} n {n}", ar1(phi), ar1(phi, 1010.0), n, 1.0))
    return out


def draw(source: object, rng: np.random.Generator, n: int) -> np.ndarray:
    return source.sample(rng, n) if hasattr(source, "sample") else source(rng, n)  # type: ignore[attr-defined]


def rule(weighted: bool) -> None:
    permutation_strata.STRATA_MAX = WEIGHTED if weighted else 0
    permutation._untied_critical.cache_clear()


def references(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, perm: bool) -> list[bool]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        welch = stats.ttest_ind(a, b, equal_var=False).pvalue
        p = math.nan
        if perm:
            p = stats.permutation_test(
                (a, b),
                lambda u, v, axis: np.mean(v, axis=axis) - np.mean(u, axis=axis),
                n_resamples=999,
                vectorized=True,
                random_state=rng,
            ).pvalue
    return [bool(welch < 0.05), bool(p < 0.05)]


def run(k: int, cell: tuple, reps: int, seed: int) -> str:
    name, px, py, n, true = cell
    rng, resamples = np.random.default_rng([seed, k]), np.random.default_rng([seed, k, 1])
    pairs = [(draw(px, rng, n), draw(px, rng, n), draw(py, rng, n)) for _ in range(reps)]
    got = np.zeros((2, reps, 3), dtype=bool)  # (former, weighted) x draw x (A/A call, A/B call, covered)
    for w in (0, 1):
        rule(bool(w))
        for i, (a, a2, b) in enumerate(pairs):
            ab = abstat.compare(a, b)
            got[w, i] = (
                abstat.compare(a, a2).significant,
                ab.significant,
                ab.ci_pct is not None and (true == true and ab.ci_pct[0] - 1e-9 <= true <= ab.ci_pct[1] + 1e-9),
            )
    rule(True)
    dependent = name.startswith("AR")
    parts = [f"{name:22s}"]
    for j, what in enumerate(("FPR", "power", "coverage")):
        if (what == "power" and dependent) or (what == "coverage" and true != true):
            continue
        d = got[1, :, j].astype(float) - got[0, :, j]
        parts.append(f"{what} {fmt(got[1, :, j])} (former {fmt(got[0, :, j])}, paired {fmt(d, signed=True)})")
    if not dependent:
        refs = np.array([references(a, b, resamples, name.startswith("normal")) for a, _, b in pairs])
        parts.append(f"Welch {fmt(refs[:, 0])}" + (f", permutation {fmt(refs[:, 1])}" if refs[:, 1].any() else ""))
        best = int(np.argmax(refs.mean(axis=0)))
        parts.append(
            f"gap {fmt(got[1, :, 1].astype(float) - refs[:, best], signed=True)} (former "
            f"{fmt(got[0, :, 1].astype(float) - refs[:, best], signed=True)})"
        )
    return " | ".join(parts)


def fmt(hits: np.ndarray, signed: bool = False) -> str:
    v = np.asarray(hits, dtype=float)
    return f"{100 * v.mean():{'+' if signed else ''}.1f}% ±{100 * v.std(ddof=1) / math.sqrt(v.size):.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=3421)
    parser.add_argument("--only", default="", help="cells whose name contains one of these (comma-separated)")
    args = parser.parse_args()
    started = time.process_time()
    for k, cell in enumerate(cells()):
        if not args.only or any(part in cell[0] for part in args.only.split(",")):
            print(run(k, cell, args.reps, args.seed), flush=True)
    print(f"{args.reps} draws per cell, seed {args.seed}; {time.process_time() - started:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
