"""A stored baseline of several invocations (boots) against one new invocation of process runs.

The store's run groups are the replicated unit of each set (:mod:`abstat.store.run_groups`): a set of
several invocations has one group per invocation, a set of one invocation whose runs hold several
samples one group per process run.  Compared as they are (before), the baseline's boots meet the
candidate's runs: the candidate's runs all share one boot's offset, which the comparison reads as a
change.  Now both sides are put at one unit (:func:`abstat.store.run_groups.common_unit`: the
one-invocation side compared as that one invocation, its boot-to-boot spread borrowed from the
baseline's boots).

Each draw: ``K`` baseline boots x 5 process runs x 49 samples and 1 candidate boot x 5 runs x 49, a
per-boot offset (sd ``--boot``), a per-run offset (sd ``--run``, smaller), samples sd 10 around 440
(``grid``: on a 20-cycle grid with 3% interrupts of +200..800 cycles, the users' TSC data; ``normal``:
untouched).  A/A: the rate called significant at 5% (target <= 6%); with ``--change``, the power at
that relative change of the candidate's boot.  The groups go to ``abstat.compare`` as the store path
hands them (:func:`abstat.report.analysis.common_unit_data` does the same for compare and report).

    nice -n 10 python benchmarks/mixed_unit_calibration.py --reps 1000
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import abstat  # noqa: E402
from abstat.store.run_groups import common_unit  # noqa: E402

RUNS, PER_RUN = 5, 49


def boot(rng: np.random.Generator, shape: str, sd_boot: float, sd_run: float, scale: float = 1.0) -> list[list[float]]:
    """One boot's process runs (lists of samples)."""
    centre = 440.0 + rng.normal(0.0, sd_boot) + rng.normal(0.0, sd_run, (RUNS, 1))
    values = (centre + rng.normal(0.0, 10.0, (RUNS, PER_RUN))) * scale
    if shape == "grid":
        values += (rng.random((RUNS, PER_RUN)) < 0.03) * rng.uniform(200.0, 800.0, (RUNS, PER_RUN))
        values = np.round(values / 20.0) * 20.0
    return [list(map(float, run)) for run in values]


def one_draw(rng, shape: str, boots: int, sd_boot: float, sd_run: float, scale: float) -> tuple[bool, bool]:
    """(before significant, now significant) on one draw."""
    base = [boot(rng, shape, sd_boot, sd_run) for _ in range(boots)]
    new = boot(rng, shape, sd_boot, sd_run, scale)
    x = [[v for run in b for v in run] for b in base]  # the store's groups: one per invocation
    before = abstat.compare(x, new).significant  # boots against runs
    groups, _ = common_unit([("base", x, list(range(boots))), ("new", new, [boots] * RUNS)])
    y = groups[1][0] if len(groups[1]) == 1 else groups[1]
    now = abstat.compare(groups[0], y).significant
    return bool(before), bool(now)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--boot", type=float, default=15.0)
    parser.add_argument("--run", type=float, default=5.0)
    parser.add_argument("--change", type=float, default=0.0, help="percent; 0: A/A")
    parser.add_argument("--seed", type=int, default=20261205)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    what = "A/A false positives" if not args.change else f"power at {args.change:+g}%"
    print(
        f"{args.reps} draws per row; boot offsets sd {args.boot:g}, run offsets sd {args.run:g}, "
        f"{RUNS} runs x {PER_RUN} samples per boot; {what}"
    )
    print("| data | baseline boots vs 1 new boot | before (boots vs runs) | now (one unit: boots) |")
    print("|---|---|---|---|")
    failures = 0
    for shape in ("grid", "normal"):
        for boots in (3, 5, 10, 20):
            hits = np.array(
                [one_draw(rng, shape, boots, args.boot, args.run, 1 + args.change / 100) for _ in range(args.reps)]
            )
            rates = hits.mean(axis=0)
            se = [math.sqrt(max(r * (1 - r), 1 / args.reps) / args.reps) for r in rates]
            print(
                f"| {shape} | {boots} vs 1 | {rates[0]:.1%} ± {se[0]:.1%} | {rates[1]:.1%} ± {se[1]:.1%} |", flush=True
            )
            failures += not args.change and rates[1] > 0.06 + 2 * se[1]
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
