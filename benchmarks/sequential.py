"""``run --until-decided`` measured through the code it runs (``SequentialDesign.decide``) on simulated
experiments: how often an A/A experiment calls a difference, how often it calls equivalence against a fixed
design of the same maximum (its interval at 90% inside +-threshold at ``max_runs``), and how many runs a
3x difference and a real 5% change take; a real 1.5% change within the threshold settles no difference (as
``compare --threshold`` says: no difference proven, or equivalent).

    python benchmarks/sequential.py [--trials 1000] [--max-runs 100] [--threshold 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from abstat.comparison.core import compare  # noqa: E402
from abstat.comparison.sequential import SequentialDesign  # noqa: E402

SHAPES = {  # name -> (draw(rng, n) for the baseline, the candidate's factor)
    "A/A normal 1%": (lambda rng, n: rng.normal(100, 1, n), 1.0),
    "A/A log-normal": (lambda rng, n: 100 * rng.lognormal(0, 0.02, n), 1.0),
    "A/A grid 20 + 3% interrupts": (
        lambda rng, n: (
            np.where(rng.uniform(size=n) < 0.03, rng.uniform(1.3, 1.8, n), 1) * (440 + 20 * rng.integers(-1, 2, n))
        ),
        1.0,
    ),
    "3x difference": (lambda rng, n: rng.normal(100, 5, n), 3.0),
    "+5% normal 2%": (lambda rng, n: rng.normal(100, 2, n), 1.05),
    "+1.5% normal 2% (within 2%)": (lambda rng, n: rng.normal(100, 2, n), 1.015),  # a change that does not matter
}


def one(design: SequentialDesign, draw, factor: float, rng) -> tuple[str, int, bool]:
    """(verdict, runs used, fixed design's equivalence) of one simulated experiment."""
    n = design.max_runs
    base, cand = draw(rng, n), draw(rng, n) * factor
    state = None
    for runs in design.looks():
        state = design.decide({"a": base[:runs], "b": cand[:runs]}, "a", runs, state)
        if state.stop_reason is not None:
            break
    verdict = state.settled["b"].verdict if "b" in state.settled else "undecided"
    fixed = compare(base, cand, confidence=1 - 2 * design.alpha)
    fixed_equivalent = (
        fixed.ci_pct is not None and -design.threshold_pct < fixed.ci_pct[0] and fixed.ci_pct[1] < design.threshold_pct
    )
    return verdict, runs, fixed_equivalent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--max-runs", type=int, default=100)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--threshold", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    design = SequentialDesign(args.min_runs, args.max_runs, args.threshold)
    print(f"looks {design.looks()}; levels " + ", ".join(f"{design.level(n):.2g}" for n in design.looks()))
    print(
        f"{'scenario':<30} {'difference':>10} {'equivalent':>10} {'fixed eq.':>9} {'undecided':>9} "
        f"{'runs med':>8} {'runs p90':>8}"
    )
    started = time.process_time()
    for name, (draw, factor) in SHAPES.items():
        rng = np.random.default_rng(args.seed)
        rows = [one(design, draw, factor, rng) for _ in range(args.trials)]
        verdicts = [r[0] for r in rows]
        runs = np.array([r[1] for r in rows])
        difference = np.mean([v not in ("equivalent", "undecided") for v in verdicts])
        equivalent = np.mean([v == "equivalent" for v in verdicts])
        print(
            f"{name:<30} {difference:>10.3f} {equivalent:>10.3f} {np.mean([r[2] for r in rows]):>9.3f} "
            f"{np.mean([v == 'undecided' for v in verdicts]):>9.3f} {np.median(runs):>8.0f} "
            f"{np.percentile(runs, 90):>8.0f}"
        )
    print(f"{args.trials} trials per row, seed {args.seed}; CPU {time.process_time() - started:.1f} s")


if __name__ == "__main__":
    main()
