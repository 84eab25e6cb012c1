"""``abstat noise`` checked by simulation (issue 16).

1. Detectable change: for stable noise (normal, skewed log-normal, 3 levels
   of a 20-tick grid, 3% interrupts: calibration.py's populations) the
   median change that ``abstat noise`` reports as detectable at n runs per
   variant with 80 % power is compared with a simulation of
   ``abstat.compare`` itself: the change at which compare calls a
   difference in 80 % of trials (interpolated between 0.8x and 1.2x the
   reported change; on the grid the latent values move and the grid stays).
   Target: reported/simulated within 0.8-1.2.
2. Instability: series of 2n runs in run order with a slow drift, a
   mid-run step or AR(1) autocorrelation, and stable ones (normal, skewed,
   TSC-like quantized): the share of trials where the verdict is UNSTABLE.
   Targets: >= 90 % with drift or a step, <= 10 % when stable.
3. One end-to-end ``abstat noise`` run of a simulated command (prints a
   value from a seeded normal), through the real runner and store.

The analysis is the same code the command runs (``abstat.noise.analyse_metric``).

    python benchmarks/noise.py [--n 40] [--trials 100] [--power-trials 200] [--pilots 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from abstat.comparison import compare
from abstat.noise import RunValue, analyse_metric

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibration import NOISE_SHAPES, _shifted  # noqa: E402  (the populations of the README's noise table)

SIGMA = 0.02  # 2 % run-to-run noise around 1.0


def _stable(rng: np.random.Generator, size: int, shape: str) -> np.ndarray:
    if shape == "lognormal":
        return rng.lognormal(0.0, 0.15, size) * 0.1 + 0.9  # skewed, sd about 1.5 %
    if shape == "quantized":
        return (20 * np.rint(rng.normal(440, 7, size) / 20)) / 440.0  # a handful of TSC-like values
    return rng.normal(1.0, SIGMA, size)


SCENARIOS = {
    "stable normal": lambda rng, size: _stable(rng, size, "normal"),
    "stable log-normal": lambda rng, size: _stable(rng, size, "lognormal"),
    "stable quantized": lambda rng, size: _stable(rng, size, "quantized"),
    "drift 2 sd over the runs": lambda rng, size: rng.normal(1.0, SIGMA, size) + np.linspace(0, 2 * SIGMA, size),
    "step 1 sd mid-run": lambda rng, size: (
        rng.normal(1.0, SIGMA, size) + SIGMA * (np.arange(size) >= rng.integers(2 * size // 5, 3 * size // 5 + 1))
    ),
    "AR(1) phi 0.6": lambda rng, size: _ar1(rng, size, 0.6),
    "drift 1 sd over the runs": lambda rng, size: rng.normal(1.0, SIGMA, size) + np.linspace(0, SIGMA, size),
    "step 1 sd at a quarter": lambda rng, size: rng.normal(1.0, SIGMA, size) + SIGMA * (np.arange(size) >= size // 4),
}
EXPECT_UNSTABLE = {"drift 2 sd over the runs", "step 1 sd mid-run", "AR(1) phi 0.6"}
REPORT_ONLY = {"drift 1 sd over the runs", "step 1 sd at a quarter"}  # shown for scale, no target


def _ar1(rng: np.random.Generator, size: int, phi: float) -> np.ndarray:
    noise = rng.normal(0.0, SIGMA * np.sqrt(1 - phi * phi), size)
    out = np.empty(size)
    out[0] = rng.normal(0.0, SIGMA)
    for i in range(1, size):
        out[i] = phi * out[i - 1] + noise[i]
    return 1.0 + out


def _runs(series: np.ndarray) -> list[RunValue]:
    return [RunValue("ab"[i % 2], 1, "boot", float(v)) for i, v in enumerate(series)]


def detectable_check(name: str, pop: object, n: int, pilots: int, trials: int, rng: np.random.Generator) -> float:
    """reported / simulated: the median detectable change ``abstat noise`` reports on ``pilots`` A/A
    pilots of n runs per variant, over the change at which ``compare`` calls a difference in 80% of
    ``trials`` (interpolated between 0.8x and 1.2x the reported change).  A change on a grid moves the
    latent values and keeps the grid (calibration.py's ``_shifted``), as a real one does."""
    from abstat.noise.analysis import detectable_change

    reported = float(
        np.median(
            [
                detectable_change(list(pop.sample(rng, n)), list(pop.sample(rng, n)), confidence=0.95)[0]
                for _ in range(pilots)
            ]
        )
    )
    factors = (0.8, 0.9, 1.0, 1.1, 1.2)
    rates = []
    for factor in factors:
        target = _shifted(pop, factor * reported)
        rates.append(
            sum(bool(compare(pop.sample(rng, n), target.sample(rng, n)).significant) for _ in range(trials)) / trials
        )
    ordered = np.maximum.accumulate(rates)  # Monte Carlo noise must not make the curve fall
    if ordered[0] >= 0.8:
        simulated = factors[0]
    elif ordered[-1] <= 0.8:
        simulated = factors[-1]
    else:
        simulated = float(np.interp(0.8, ordered + np.arange(len(factors)) * 1e-9, factors))
    ratio = 1.0 / simulated
    print(
        f"  {name:<20} reported {reported:5.3f}% (median of {pilots} pilots)  compare's power at"
        f" {'/'.join(f'{f:g}' for f in factors)}x: {'/'.join(f'{r:.0%}' for r in rates)}"
        f"  -> reported/simulated {ratio:.2f}  {'ok' if 0.8 <= ratio <= 1.2 else 'MISSED'}"
    )
    return ratio


def instability_rates(n: int, trials: int, seed: int) -> dict[str, float]:
    rates = {}
    for index, (name, make) in enumerate(SCENARIOS.items()):
        rng = np.random.default_rng(seed + index)
        unstable = 0
        for _ in range(trials):
            result = analyse_metric("x", None, _runs(make(rng, 2 * n)), variants=("a", "b"))
            unstable += result.stable is False
        rates[name] = unstable / trials
        if name in REPORT_ONLY:
            target = "(no target)"
        elif name in EXPECT_UNSTABLE:
            target = "target >= 90% " + ("ok" if rates[name] >= 0.9 else "MISSED")
        else:
            target = "target <= 10% " + ("ok" if rates[name] <= 0.1 else "MISSED")
        print(f"  {name:<26} UNSTABLE in {rates[name]:5.0%} of {trials} trials  {target}")
    return rates


BENCH = """import os, random, sys
state = os.environ["NOISE_STATE"]
count = int(open(state).read() or 0) if os.path.exists(state) else 0
open(state, "w").write(str(count + 1))
print("value", random.Random(count).gauss(100.0, 2.0))
"""


def end_to_end(n: int) -> None:
    work = tempfile.mkdtemp(prefix="abstat-noise-")
    script = os.path.join(work, "bench.py")
    with open(script, "w") as handle:
        handle.write(BENCH)
    env = dict(os.environ, NOISE_STATE=os.path.join(work, "count"))
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "noise",
            "-n",
            str(n),
            "--seed",
            "1",
            "--no-progress",
            "--store",
            os.path.join(work, "abstat.db"),
            "--metric",
            r"value=value ([0-9.]+)",
            "--report",
            "value",
            "--format",
            "json",
            "--",
            sys.executable,
            script,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if done.returncode != 0:
        print(f"  abstat noise failed: {done.stderr.strip()}")
        return
    metric = json.loads(done.stdout)["metrics"][0]
    print(
        f"  abstat noise -n {n} on a command printing N(100, 2): spread {metric['cv_pct']:.2f}%,"
        f" detectable {metric['detectable_change_pct']:.2f}% (expected about"
        f" {2.0 * 2.8 * (2 / n) ** 0.5:.2f}%), stable: {metric['stable']}"
        f" ({time.perf_counter() - started:.1f} s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="runs per variant (default 40)")
    parser.add_argument("--trials", type=int, default=100, help="trials per instability scenario (default 100)")
    parser.add_argument("--power-trials", type=int, default=200, help="compare calls per shift (default 200)")
    parser.add_argument("--pilots", type=int, default=100, help="A/A pilots per shape (default 100)")
    parser.add_argument("--seed", type=int, default=2026)
    options = parser.parse_args()
    print(
        f"1. detectable change at n = {options.n} per variant vs a simulation of abstat compare"
        f" ({options.power_trials} trials per shift); target: reported/simulated 0.8-1.2"
    )
    rng = np.random.default_rng(options.seed)
    checks = [
        detectable_check(name, pop, options.n, options.pilots, options.power_trials, rng) for name, pop in NOISE_SHAPES
    ]
    print(f"2. instability verdicts, 2 x {options.n} runs in run order, sd {SIGMA:.0%}")
    rates = instability_rates(options.n, options.trials, options.seed)
    print("3. end to end")
    end_to_end(options.n)
    ok = all(0.8 <= ratio <= 1.2 for ratio in checks)
    ok = ok and all(rates[name] >= 0.9 for name in EXPECT_UNSTABLE)
    ok = ok and all(rate <= 0.1 for name, rate in rates.items() if name not in EXPECT_UNSTABLE | REPORT_ONLY)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
