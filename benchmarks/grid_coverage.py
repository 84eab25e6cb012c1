"""Coverage of the default's interval on the calibration's grid rows, measured precisely (issue 34, wave 18).

``calibration.py`` runs each row at 150-400 draws (a Monte Carlo error of 1.1-2.3 points on a 95% coverage,
beside A/A draws and three reference tests); this script draws only the A/B samples of the shifted grid rows
(``--only`` selects by name, as there), runs ``abstat.compare`` on each and splits the misses:

- ``cannot judge`` (both variants constant: no interval, counted as a miss, as ``calibration.py`` does);
- the interval entirely above the true change, or entirely below it.

The true change is ``calibration_truth.truth('hl_ratio', ...)`` and an interval's end counts as reaching it
within ``calibration.py``'s slack (``1e-9 (1 + |true|)``): on the whole-step row both are the exact ratio
420/440, and an interval ending there ends on a difference of logarithms of grid values, one rounding away
from ``log(420/440)``; an exact comparison calls 6.5 of 100 such draws misses (97.5% -> 91.0%, wave 18).
``--limit`` also prints the estimate on 10^6 draws a side against the truth (is the named estimand what the
interval estimates?).  Rates with two Monte Carlo errors.

    python benchmarks/grid_coverage.py --reps 10000 --seed 2
    python benchmarks/grid_coverage.py --only "whole step" --reps 2000 --limit
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from calibration import BALANCED, ROWS, Row  # noqa: E402

import abstat  # noqa: E402
from abstat.stats.hodges_lehmann import hodges_lehmann  # noqa: E402


def grid_rows(only: str) -> list[Row]:
    """The shifted rows on grid 20 with small samples (the balanced ones and the whole step)."""
    rows = [r for r in BALANCED if r.name.startswith("balanced grid") and not r.null]
    rows += [r for r in ROWS if r.name.startswith("grid 20: whole step")]
    return [r for r in rows if only in r.name]


def tally(row: Row, reps: int, rng: np.random.Generator) -> dict[str, int]:
    true = row.true_change("hl_ratio")
    slack = 1e-9 * (1.0 + abs(true))
    out = {"covered": 0, "cannot judge": 0, "above": 0, "below": 0, "significant": 0}
    for _ in range(reps):
        a, b = row.draw("x", rng, row.nx), row.draw("y", rng, row.ny)
        ab = abstat.compare(a, b)
        out["significant"] += ab.significant
        if ab.ci_pct is None:
            out["cannot judge"] += 1
        elif ab.ci_pct[0] - slack > true:
            out["above"] += 1
        elif ab.ci_pct[1] + slack < true:
            out["below"] += 1
        else:
            out["covered"] += 1
    return out


def pct(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.2f}% ±{200 * math.sqrt(max(p * (1 - p), 1 / reps) / reps):.2f}"


def limit(row: Row, rng: np.random.Generator, n: int = 10**6) -> float:
    """The estimate (percent) on ``n`` draws a side: the estimator's value at large samples."""
    a, b = row.draw("x", rng, n), row.draw("y", rng, n)
    return 100 * math.expm1(hodges_lehmann(np.log(a), np.log(b), 0.95, permute=False).estimate)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--only", default="", help="rows whose name contains this text")
    parser.add_argument("--limit", action="store_true", help="the estimate on 10^6 draws a side, too")
    args = parser.parse_args()
    started = time.process_time()
    print(f"{args.reps} draws per row, seed {args.seed}; rates ± two Monte Carlo errors")
    for k, row in enumerate(grid_rows(args.only)):
        t = tally(row, args.reps, np.random.default_rng([args.seed, 34, 77]))
        judged = args.reps - t["cannot judge"]
        print(
            f"{row.name} (true {row.true_change('hl_ratio'):+.4f}%): coverage {pct(t['covered'], args.reps)}; "
            f"cannot judge {pct(t['cannot judge'], args.reps)}; interval above the truth "
            f"{pct(t['above'], args.reps)}, below {pct(t['below'], args.reps)}; coverage of the judged "
            f"{pct(t['covered'], judged) if judged else '-'}; significant {pct(t['significant'], args.reps)}"
        )
        if args.limit:
            print(f"  estimate at 10^6 a side: {limit(row, np.random.default_rng([args.seed, 34, 78, k])):+.4f}%")
    print(f"{time.process_time() - started:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
