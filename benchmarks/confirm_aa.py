"""A/A false-call rate of ``abstat history --confirm``'s schedule and test, by simulation.

Two identical revisions measured ``--confirm-runs`` times each in interleaved blocks; each value
is noise (sd 1) plus ``delta`` when the run is the first of its block (a position effect: the
run after the other side's, a warmer cache...).  The engine's own shuffle of each block (the
schedule ``--confirm`` used, schedule version 1) is compared with the counterbalanced schedule
(version 2, :mod:`abstat.box.runner.schedule`) it uses now, on the same noise.  A false call is a 95%
Hodges-Lehmann interval of (new - old) that excludes 0 (two-sided: a change of either sign
"holds").  The anchor is the rate without a position effect (delta 0) in the same run.

    python benchmarks/confirm_aa.py [--reps 2000] [--runs 12]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from abstat.history.bisect.confirm import NAMES  # noqa: E402
from abstat.box.runner.schedule import build_schedule  # noqa: E402
from abstat.stats.shift import hodges_lehmann  # noqa: E402


def false_calls(reps: int, runs: int, delta: float, balanced: bool, seed: int) -> float:
    rng = np.random.default_rng(seed)
    calls = 0
    for rep in range(reps):
        start = int(rng.integers(2**31))
        schedule = build_schedule(list(NAMES), runs, warmup=1, seed=start, version=2 if balanced else 1)
        values: dict[str, list[float]] = {name: [] for name in NAMES}
        seen: set[int] = set()
        for slot in schedule:
            if slot.warmup:
                continue
            first = slot.iteration not in seen
            seen.add(slot.iteration)
            values[slot.variant].append(rng.normal() + (delta if first else 0.0))
        shift = hodges_lehmann(np.array(values[NAMES[0]]), np.array(values[NAMES[1]]), 0.95)
        calls += shift.low > 0 or shift.high < 0
    return calls / reps


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    anchor = false_calls(args.reps, args.runs, 0.0, False, 1)
    print(f"{args.reps} A/A confirmations, {args.runs} runs a side; false calls of the 95% interval")
    print(f"  anchor: no position effect, engine shuffle: {anchor:.3f}")
    worst = 0.0
    for delta in (0.5, 1.0, 2.0):
        shuffled = false_calls(args.reps, args.runs, delta, False, 2)
        balanced = false_calls(args.reps, args.runs, delta, True, 2)
        worst = max(worst, balanced)
        print(
            f"  first-in-block effect {delta:.1f} sd: engine shuffle {shuffled:.3f} ({shuffled / anchor:.2f}x anchor), "
            f"balanced {balanced:.3f} ({balanced / anchor:.2f}x anchor)"
        )
    return 0 if worst <= 0.075 else 1


if __name__ == "__main__":
    sys.exit(main())
