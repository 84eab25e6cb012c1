"""A/A false calls of ``abstat compare`` under the old and the counterbalanced interleaved schedule.

Two identical variants, ``n`` runs each in interleaved blocks (no warm-up).  Each run's value is
noise N(100, 1) plus ``delta`` (in noise sds) when the run is the first of its block: a position
effect (a cold cache, a frequency ramp, the run after the other variant's).  The schedule is
abstat.box.runner.schedule's ``build_schedule``: version 1 shuffled each block on its own (so one
variant could lead most blocks by chance), version 2 is counterbalanced (each variant leads half
the blocks).  Both schedules get the same draws: the k-th run in time has the same noise under
both.  A false call is ``abstat.compare`` (its default method) calling the A/A difference
significant at 95%.  The anchor is the old schedule without a position effect, in the same run.

    python benchmarks/schedule_balance.py [--reps 2000] [--seed 2026]

Exit 1 when the counterbalanced schedule's rate exceeds the anchor by more than 2 Monte Carlo
errors (plus one point) at any effect.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

import abstat  # noqa: E402
from abstat.box.runner.schedule import build_schedule  # noqa: E402

NAMES = ["a", "b"]
DELTAS = (0.0, 0.5, 1.0, 2.0)


def values(schedule, noise: np.ndarray, delta: float) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {name: [] for name in NAMES}
    seen: set[int] = set()
    for position, slot in enumerate(schedule):
        first = slot.iteration not in seen
        seen.add(slot.iteration)
        out[slot.variant].append(100.0 + noise[position] + (delta if first else 0.0))
    return {name: np.array(v) for name, v in out.items()}


def false_calls(n: int, reps: int, seed: int) -> dict[tuple[int, float], float]:
    """{(version, delta): share of A/A draws compare calls significant}, every cell on the same draws."""
    rng = np.random.default_rng(seed)
    hits = {(version, delta): 0 for version in (1, 2) for delta in DELTAS}
    for _ in range(reps):
        schedule_seed = int(rng.integers(2**31))
        noise = rng.normal(size=2 * n)
        for version in (1, 2):
            schedule = build_schedule(NAMES, n, seed=schedule_seed, version=version)
            for delta in DELTAS:
                v = values(schedule, noise, delta)
                hits[version, delta] += bool(abstat.compare(v["a"], v["b"]).significant)
    return {key: count / reps for key, count in hits.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--n", type=int, nargs="+", default=[10, 30], help="runs per variant (default 10 30)")
    args = parser.parse_args()
    started = time.process_time()
    failed = False
    print(
        f"A/A, 2 variants interleaved, {args.reps} draws per n; false calls of abstat.compare (default, 95%)"
        " ± one Monte Carlo error; x: ratio to the anchor (old schedule, no effect)"
    )
    for n in args.n:
        rates = false_calls(n, args.reps, args.seed + n)
        anchor = rates[1, 0.0]
        print(f"n = {n}: anchor {anchor:.3f}")
        for delta in DELTAS:
            old, new = rates[1, delta], rates[2, delta]
            se_old, se_new = (np.sqrt(max(r * (1 - r), 1e-4) / args.reps) for r in (old, new))
            print(
                f"  first-in-block effect {delta:.1f} sd: old (each block shuffled) {old:.3f} ± {se_old:.3f}"
                f" ({old / anchor:.2f}x)   counterbalanced {new:.3f} ± {se_new:.3f} ({new / anchor:.2f}x)"
            )
            failed |= new > anchor + 2 * np.hypot(se_new, np.sqrt(anchor * (1 - anchor) / args.reps)) + 0.01
    print(f"{time.process_time() - started:.0f} s of CPU")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
