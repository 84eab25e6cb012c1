"""A/A campaign of a CI gate: how often does `--fail-on slower` fail when nothing changed?

Each simulated CI job has its own level (job-to-job sd 3%, as a loaded shared runner gives)
and 10 runs within it (within-job sd 0.5%).  The baseline holds 5 jobs of the base commit
(a saved baseline of several jobs), the candidate 1 job of the same commit.  The grouped
analysis (each job a run group, the runs' medians the independent unit, as abstat compares
runs) is gated against the within-job analysis (every run an independent sample: the 5 jobs' runs
pooled, and the last baseline job against the candidate's, which is what a tool that tests
within one job does).  A second campaign with the candidate 10% slower
gives the power of each at the same threshold.

    python benchmarks/ci_gate_aa.py [--jobs 100] [--seed 1] [--threshold 2]
"""

from __future__ import annotations

import argparse
import random

from abstat.comparison import compare
from abstat.report.gate import evaluate


def _job(rng: random.Random, level: float, between: float, within: float, runs: int) -> list[float]:
    offset = 1 + rng.gauss(0, between)
    return [level * offset * (1 + rng.gauss(0, within)) for _ in range(runs)]


def campaign(
    jobs: int,
    seed: int,
    threshold: float,
    slowdown: float,
    between: float = 0.03,
    within: float = 0.005,
    baseline_jobs: int = 5,
    runs: int = 10,
) -> tuple[float, float, float]:
    rng = random.Random(seed)
    grouped_fail = flat_fail = single_fail = 0
    for _ in range(jobs):
        base = [_job(rng, 100.0, between, within, runs) for _ in range(baseline_jobs)]
        cand = [_job(rng, 100.0 * (1 + slowdown), between, within, runs)]
        grouped = compare(base, cand)  # each job a run group
        flat = compare([v for job in base for v in job], cand[0])
        single = compare(base[-1], cand[0])  # the last baseline job against the candidate's, run by run
        grouped_fail += evaluate([grouped], "slower", threshold).exit_status
        flat_fail += evaluate([flat], "slower", threshold).exit_status
        single_fail += evaluate([single], "slower", threshold).exit_status
    return grouped_fail / jobs, flat_fail / jobs, single_fail / jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=2.0)
    args = parser.parse_args()
    print(
        f"{args.jobs} jobs per campaign; job-to-job sd 3%, within-job sd 0.5%; baseline 5 jobs x 10 runs, "
        f"candidate 1 job x 10 runs; --fail-on slower --threshold {args.threshold:g}"
    )
    print(f"{'campaign':<22} {'grouped (jobs)':>15} {'runs pooled':>12} {'one job vs one job':>19}")
    for label, slowdown in (("A/A (false gates)", 0.0), ("10% slower (power)", 0.10)):
        grouped, flat, single = campaign(args.jobs, args.seed, args.threshold, slowdown)
        print(f"{label:<22} {grouped:>15.1%} {flat:>12.1%} {single:>19.1%}")


if __name__ == "__main__":
    main()
