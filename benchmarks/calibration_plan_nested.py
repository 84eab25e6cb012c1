"""``abstat plan`` on nested pilots (runs of ~49 samples with per-run offsets) against compare's power.

For each shape a pilot of ``--pilot-runs`` runs x 49 samples per side (the same population, per-run
offsets; large, so that the rows measure the sizing and not the pilot's luck) is sized two ways:

- ``before``: the model plan used until issue 34, Welch's t on the run means with the ANOVA variance
  components (``between + within / r`` per run mean: :func:`abstat.stats.power.detectable_difference`);
- ``now``: plan's sizing of compare's comparison of the run medians
  (:class:`abstat.comparison.planning_nested.RunSizer`).

At each design (``k`` runs x ``r`` samples per run per side) the change each model calls detectable
with 80% power is taken as the true change (the population scaled: on the grid, the latent values
before rounding), and ``--reps`` experiments of that design are judged by ``abstat.compare``'s default
on the runs (the Hodges-Lehmann ratio of the spread run medians, Brunner-Munzel): the achieved power,
target 80% ± 5 (as benchmarks/calibration_plan.py does for flat data; a change rather than a count of
runs, so that the whole runs of an advice do not blur the comparison).  Designs: 5, 10 and 20 runs of
49 samples, and 10 runs of 10 samples (an allocation at a cheap run).  Each shape's pilot and each
row's experiments have generators of their own (seeded by ``--seed``, the shape and the design; both
models' experiments draw the same values), so that a row reads the same under ``--only`` and
``--designs`` and two versions of the code are compared on the same draws.

    python benchmarks/calibration_plan_nested.py --reps 600 --now-only
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
from abstat.comparison.planning_nested import RunSizer, median_components  # noqa: E402
from abstat.stats.nested import run_centres, variance_components  # noqa: E402
from abstat.stats.power import detectable_difference  # noqa: E402

PER_RUN = 49
ALPHA, POWER = 0.05, 0.8
DESIGNS = ((5, 49), (10, 49), (20, 49), (10, 10))


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
    Shape("log-normal 1000+30·LogN(0,1), offsets sd 4", 0.6, 4.0),
    Shape("interrupts 3% x1.3-1.8, offsets sd 4", 0.5, 4.0),
    Shape("grid 20, 2% interrupts, offsets sd 4", 1.2, 4.0),
]


def achieved(shape: Shape, pct: float, runs: int, per_run: int, reps: int, rng) -> tuple[float, float]:
    hits = 0
    for _ in range(reps):
        x = shape.draw(rng, runs, per_run)
        y = shape.draw(rng, runs, per_run, 1.0 + pct / 100.0)
        hits += bool(abstat.compare(x, y).significant)
    rate = hits / reps
    return rate, math.sqrt(max(rate * (1.0 - rate), 1.0 / reps) / reps)


def before_pct(pilot: dict[str, list[list[float]]], runs: int, per_run: int) -> float:
    """The change the run-means model (plan before issue 34) detects with 80% power at this design."""
    arrays = {k: [np.asarray(r) for r in v] for k, v in pilot.items()}
    parts = [variance_components(a) for a in arrays.values()]
    between = sum(p.between for p in parts) / len(parts)
    within = sum(p.within for p in parts) / len(parts)
    sd = math.sqrt(between + within / per_run)
    mean = float(np.mean([np.mean(r) for r in arrays["a"]]))
    return 100.0 * detectable_difference(sd, runs, sd, runs, alpha=ALPHA, power=POWER) / mean


def now_pct(pilot: dict[str, list[list[float]]], runs: int, per_run: int) -> float | None:
    """The change plan's sizing of the run medians detects with 80% power at this design."""
    arrays = {k: [np.asarray(r) for r in v] for k, v in pilot.items()}
    parts = [median_components(a) for a in arrays.values()]
    between, within, length = (sum(p[i] for p in parts) / len(parts) for i in range(3))
    pooled = np.concatenate([np.concatenate(a) for a in arrays.values()])
    cx, cy = (run_centres(a, "median") for a in arrays.values())
    sizer = RunSizer(cx, cy, between, within, length, "auto", 0.95, pooled)
    return sizer.detectable(per_run, runs, runs, ALPHA, POWER)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--pilot-runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("--only", default="")
    parser.add_argument("--designs", default="", help="runs x samples to run, e.g. 5x49,10x10 (default: all)")
    parser.add_argument("--now-only", action="store_true", help="skip the experiments at the before model's change")
    args = parser.parse_args()
    print(f"{args.reps} experiments per row, pilots of {args.pilot_runs} runs x {PER_RUN} per side, seed {args.seed}")
    print("| shape | runs x samples | before: change, compare's power | now: change, compare's power |")
    print("|---|---|---|---|")
    failures = 0
    designs = [d for d in DESIGNS if not args.designs or f"{d[0]}x{d[1]}" in args.designs.split(",")]
    for index, shape in enumerate(SHAPES):
        if args.only and args.only not in shape.name:
            continue
        rng = np.random.default_rng([args.seed, index])  # each row's draws its own: code versions compared alike
        pilot = {"a": shape.draw(rng, args.pilot_runs, PER_RUN), "b": shape.draw(rng, args.pilot_runs, PER_RUN)}
        for runs, per_run in designs:
            cells = []
            for model in (before_pct, now_pct):
                rng = np.random.default_rng([args.seed, index, runs, per_run])  # the same draws for both models
                if args.now_only and model is before_pct:
                    cells.append("not run")
                    continue
                pct = model(pilot, runs, per_run)
                if pct is None:
                    cells.append("none")
                    continue
                rate, se = achieved(shape, pct, runs, per_run, args.reps, rng)
                cells.append(f"{pct:.3g}%, {rate:.1%} ± {se:.1%}")
                failures += model is now_pct and abs(rate - POWER) > 0.05 + 2 * se
            print(f"| {shape.name} | {runs} x {per_run} | {cells[0]} | {cells[1]} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
