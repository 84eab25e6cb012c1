"""``abstat plan`` on nested pilots (runs of ~49 samples with per-run offsets) against compare's power.

For each shape a pilot of ``--pilot-runs`` runs x 49 samples per side (the same population, per-run
offsets; large, so that the rows measure the sizing and not the pilot's luck) is planned for a change of ``detect`` percent (a change the shape's runs resolve in
~10 runs), and the plan's advice is checked: ``--reps`` experiments of the advised size are drawn
with that true change (the population scaled: on the grid, the latent values before rounding) and
judged by ``abstat.compare``'s default on the runs (the Hodges-Lehmann ratio of the spread run
medians, Brunner-Munzel).  Two advised sizes per shape:

- ``runs at 49``: the runs per variant the plan gives at the pilot's run length (``pairs``'
  ``runs_per_variant``; before this existed, the Kalibera-Jones allocation at cost ratio 49 -
  whose samples per run need not be 49 - is the closest advice, shown instead);
- ``cost 10``: the Kalibera-Jones allocation at a run costing 10 samples (runs x samples per run).

Printed per row: the advice, the achieved power with its Monte Carlo error (target 80% ± 5).

    nice -n 10 python benchmarks/calibration_plan_nested.py --reps 400
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import abstat  # noqa: E402
from abstat.comparison.planning import plan  # noqa: E402

PER_RUN = 49


@dataclass(frozen=True)
class Shape:
    name: str
    detect: float  # percent
    offset: float  # sd of the per-run offset, in the values' unit

    def draw(self, rng: np.random.Generator, runs: int, per_run: int, scale: float = 1.0) -> list[list[float]]:
        offsets = rng.normal(0.0, self.offset, (runs, 1))
        if self.name.startswith("normal"):
            values = (1000.0 + offsets + rng.normal(0.0, 10.0, (runs, per_run))) * scale
        elif self.name.startswith("log-normal"):
            values = (1000.0 + offsets + 30.0 * rng.lognormal(0.0, 1.0, (runs, per_run))) * scale
        elif self.name.startswith("interrupts"):
            base = 1000.0 + offsets + rng.normal(0.0, 10.0, (runs, per_run))
            hit = rng.random((runs, per_run)) < 0.03
            values = base * np.where(hit, rng.uniform(1.3, 1.8, (runs, per_run)), 1.0) * scale
        else:  # grid 20: TSC cycles, 2% interrupts
            latent = (440.0 + offsets + rng.normal(0.0, 10.0, (runs, per_run))) * scale
            latent += (rng.random((runs, per_run)) < 0.02) * rng.uniform(200.0, 800.0, (runs, per_run))
            values = np.round(latent / 20.0) * 20.0
        return [list(map(float, run)) for run in values]


SHAPES = [
    Shape("normal sd 10, offsets sd 4", 0.5, 4.0),
    Shape("normal sd 10, offsets sd 4, few runs", 1.0, 4.0),
    Shape("log-normal 1000+30·LogN(0,1), offsets sd 4", 0.6, 4.0),
    Shape("interrupts 3% x1.3-1.8, offsets sd 4", 0.5, 4.0),
    Shape("grid 20, 2% interrupts, offsets sd 4", 1.2, 4.0),
]


def achieved(shape: Shape, runs: int, per_run: int, reps: int, rng: np.random.Generator) -> tuple[float, float]:
    hits = 0
    for _ in range(reps):
        x = shape.draw(rng, runs, per_run)
        y = shape.draw(rng, runs, per_run, 1.0 + shape.detect / 100.0)
        hits += bool(abstat.compare(x, y).significant)
    rate = hits / reps
    return rate, math.sqrt(max(rate * (1.0 - rate), 1.0 / reps) / reps)


def advice(result, ratio: float) -> tuple[int | None, int]:
    found = [a for a in result.allocations if a.cost_ratio == ratio]
    return (found[0].runs_per_variant, found[0].samples_per_run) if found else (None, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--pilot-runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.reps} experiments per row, pilots of {args.pilot_runs} runs x {PER_RUN} per side, seed {args.seed}")
    print("| shape | change | advice | advised runs x samples | plan's estimand | compare's achieved power |")
    print("|---|---|---|---|---|---|")
    failures = 0
    for shape in SHAPES:
        if args.only and args.only not in shape.name:
            continue
        pilot = {"a": shape.draw(rng, args.pilot_runs, PER_RUN), "b": shape.draw(rng, args.pilot_runs, PER_RUN)}
        rows = []
        for ratio in (49.0, 10.0):
            result = plan(pilot, detect=shape.detect, cost_ratio=ratio)
            at_length = result.pairs[0].get("runs_per_variant")
            if ratio == 49.0 and at_length is not None:
                rows.append(("runs at 49", at_length, PER_RUN, result.estimand_label))
            else:
                runs, per_run = advice(result, ratio)
                rows.append((f"cost {ratio:g}", runs, per_run, result.estimand_label))
        for label, runs, per_run, estimand in rows:
            if runs is None:
                print(f"| {shape.name} | {shape.detect:g}% | {label} | none | {estimand} | - |")
                continue
            rate, se = achieved(shape, runs, per_run, args.reps, rng)
            failures += abs(rate - 0.8) > 0.05 + 2 * se
            print(
                f"| {shape.name} | {shape.detect:g}% | {label} | {runs} x {per_run} | {estimand} | "
                f"{rate:.1%} ± {se:.1%} |",
                flush=True,
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
