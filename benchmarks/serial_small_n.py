"""The serial-correlation rule at small n (issue 34): a candidate against the committed rule on the same draws.

The candidate sets ``dependence.SMALL_PRETEST_Z, FULL_RAISE_Z`` (below 20 values a side: the pre-test's z and
the z from which the whole raise applies) to :data:`NEW`; "former" in the output is the committed rule.
Cells: AR(1) A/A draws (false positives) and +1% draws
(coverage) at phi 0.2-0.6 and n 10-50 a side, as ``calibration_workflows.py`` draws them; independent
normal N(1000, 10) and grid data (N(440, 7) rounded to multiples of 20) at n 10, 15, 20, 50 a side: false
positives and power for a shift, beside Welch's t and a permutation test of means (200 draws) on the same
draws (both valid on independent data).  A draw whose factors the two rules agree on is compared once (the
comparison is the same function of the same factors).  Rates ± two Monte Carlo errors; the paired
difference (new - former) ± two errors of the paired differences.

    python benchmarks/serial_small_n.py --reps 1000              # all cells
    python benchmarks/serial_small_n.py --reps 1000 --only normal,grid
    python benchmarks/serial_small_n.py --holm-tables 400   # Holm at n 10: the cells whose factors differ

Holm on an all-null 8 x 4 table rejects iff its smallest p-value is below 0.05/32, so only the cells whose
factors differ between the rules can change a family's verdict; ``--holm-tables`` counts them and their p-values
below 0.05/32 under each rule (independent N(1000, 10) cells of 10 values, ``default_rng(3410)``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from calibration_workflows import AR1, permutation_means  # noqa: E402

import abstat  # noqa: E402
from abstat.stats import dependence  # noqa: E402

NEW = (1.0, 1.6)  # the candidate (SMALL_PRETEST_Z, FULL_RAISE_Z) measured in session 11, not adopted
OLD = (dependence.SMALL_PRETEST_Z, dependence.FULL_RAISE_Z)  # the rule as committed (z 1.28, the whole raise)


class Independent:
    def __init__(self, name: str, step: float | None, mean: float, sd: float, factor: float = 1.0) -> None:
        self.name, self.step, self.mean, self.sd, self.factor = name, step, mean, sd, factor

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        v = rng.normal(self.mean, self.sd, n) * self.factor
        return self.step * np.round(v / self.step) if self.step else v


def cells() -> list[tuple[str, object, object, int, float]]:
    """(name, baseline, candidate, n a side, true change %: None for power cells)."""
    out = []
    for phi, n in ((0.2, 15), (0.3, 15), (0.6, 10), (0.6, 12), (0.6, 15), (0.6, 20), (0.3, 50)):
        out.append((f"AR(1) phi {phi}, n {n}", AR1(phi), AR1(phi, 1.01), n, 1.0))
    for n, shift in ((10, 0.009), (15, 0.007), (20, 0.006), (50, 0.004)):
        out.append((f"normal, +{100 * shift:.1f}%, n {n}", Independent("normal", None, 1000, 10), None, n, shift))
    for n, shift in ((10, 0.025), (15, 0.02), (20, 0.017), (50, 0.012)):
        out.append((f"grid 20, +{100 * shift:.1f}%, n {n}", Independent("grid", 20, 440, 7), None, n, shift))
    return out


def rule(which: tuple[float, float]) -> None:
    dependence.SMALL_PRETEST_Z, dependence.FULL_RAISE_Z = which


def both(x: np.ndarray, y: np.ndarray, seed: int) -> tuple[abstat.Comparison, abstat.Comparison]:
    """compare(x, y) under the candidate and the committed rule."""
    rule(OLD)
    old_factors = dependence.serial_factors(x, y)[:2]
    old = abstat.compare(x, y, seed=seed)
    rule(NEW)
    if dependence.serial_factors(x, y)[:2] == old_factors:
        return old, old
    return abstat.compare(x, y, seed=seed), old


def fmt(hits: np.ndarray) -> str:
    p = hits.mean()
    return f"{100 * p:.1f}% ±{200 * hits.std(ddof=1) / np.sqrt(hits.size):.1f}"


def run(cell: tuple, reps: int, rng: np.random.Generator) -> list[str]:
    name, px, py, n, true = cell
    fp = np.zeros((reps, 2))
    hit = np.zeros((reps, 2))  # covered (dependent cells) or called (power cells)
    refs = np.zeros((reps, 2))
    for i in range(reps):
        a, a2 = px.sample(rng, n), px.sample(rng, n)
        if py is None:
            b = Independent(px.name, px.step, px.mean, px.sd, 1.0 + true).sample(rng, n)
        else:
            b = py.sample(rng, n)
        fp[i] = [r.significant for r in both(a, a2, i)]
        results = both(a, b, i)
        if py is None:
            hit[i] = [r.significant for r in results]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                refs[i] = [stats.ttest_ind(a, b, equal_var=False).pvalue < 0.05, permutation_means(a, b, rng) < 0.05]
        else:
            hit[i] = [r.ci_pct is not None and r.ci_pct[0] - 1e-9 <= true <= r.ci_pct[1] + 1e-9 for r in results]
    what = "power" if py is None else "coverage"
    extra = f"; Welch {fmt(refs[:, 0])}, permutation {fmt(refs[:, 1])}" if py is None else ""
    return [
        name,
        f"FPR {fmt(fp[:, 0])} (former {fmt(fp[:, 1])}, paired {fmt(fp[:, 0] - fp[:, 1])})",
        f"{what} {fmt(hit[:, 0])} (former {fmt(hit[:, 1])}, paired {fmt(hit[:, 0] - hit[:, 1])}){extra}",
    ]


def holm_cells(tables: int) -> str:
    rng = np.random.default_rng(3410)
    differ, below = 0, np.zeros(2, dtype=int)
    for c in range(tables * 32):
        x, y = rng.normal(1000, 10, 10), rng.normal(1000, 10, 10)
        new, old = both(x, y, c)
        if new is not old:
            differ += 1
            below += [new.p_value < 0.05 / 32, old.p_value < 0.05 / 32]
    return f"{tables * 32} cells, factors differ in {differ}: p < 0.05/32 in {below[0]} (new), {below[1]} (former)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--only", default="", help="cells whose name contains one of these (comma-separated) texts")
    parser.add_argument("--holm-tables", type=int, default=0, help="only the Holm check on this many tables")
    args = parser.parse_args()
    started = time.process_time()
    if args.holm_tables:
        print(holm_cells(args.holm_tables))
        return 0
    for k, cell in enumerate(cells()):
        if args.only and not any(part in cell[0] for part in args.only.split(",")):
            continue
        print(" | ".join(run(cell, args.reps, np.random.default_rng([args.seed, k]))), flush=True)
    print(f"{args.reps} draws per cell, seed {args.seed}; {time.process_time() - started:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
