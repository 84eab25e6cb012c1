"""CPU of ``abstat.compare`` at small n, where the default comparison's test and interval take their
reference from the permutation distribution (:mod:`abstat.stats.permutation`), against
``scipy.stats.mannwhitneyu`` + ``scipy.stats.ttest_ind`` on the same pairs in the same run (issue 42).

For each shape (``grid``: cycle counts on a grid of 20 with ties and 5% interrupts; ``normal``: untied) and
n per side (``--sizes``), ``--pairs`` different pairs are compared twice: with the default seed (0: a
suite's or a report's comparisons of equal sizes share the drawn arrangements) and with a different seed
per pair (every call draws its own).  Printed per row: abstat's CPU per comparison, the anchor's, their
ratio, the load average; then the growth exponent of abstat's CPU over the sizes.

Target (grid, 40 against 40, default seed): <= 20x the anchor (before the wave-15 speed work: 55x at
load 8, 105 ms per comparison).  Exit 1 when missed.  ``--src DIR`` imports abstat from another tree (e.g. an older
checkout's ``src``) to measure it the same way.

    python benchmarks/permutation_speed.py
    python benchmarks/permutation_speed.py --src /path/to/old/src --pairs 10
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

TARGET = 20.0


def grid_pair(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """TSC-like values on a grid of 20 around 450 and 455 cycles, 5% of them interrupted (+2000)."""
    x, y = (20.0 * np.round(rng.normal(c, 15.0, n) / 20.0) for c in (450.0, 455.0))
    return x + 2000.0 * (rng.random(n) < 0.05), y + 2000.0 * (rng.random(n) < 0.05)


def pair(shape: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(1000.0, 10.0, n), rng.normal(1005.0, 10.0, n)
    return grid_pair(n, rng)


def cpu_per_call(calls: list) -> float:
    start = time.process_time()
    for call in calls:
        call()
    return (time.process_time() - start) / len(calls)


def print_growth(growth: dict[str, list[float]], sizes: list[int]) -> None:
    """Each row's growth exponent of CPU per call from the first size to the last."""
    for name, times in growth.items():
        exponent = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
        print(f"growth exponent {name}, n {sizes[0]} to {sizes[-1]}: {exponent:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,20,40,50", help="n per side (default %(default)s)")
    parser.add_argument("--pairs", type=int, default=30, help="pairs per row (default %(default)s)")
    parser.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.src))
    import abstat
    from scipy import stats

    warnings.simplefilter("ignore")
    abstat.compare([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])  # imports
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"abstat from {os.path.dirname(abstat.__file__)}; load {os.getloadavg()[0]:.2f}")
    print(f"{'shape':7} {'n':>3} {'seed':8} {'abstat ms':>10} {'anchor ms':>10} {'ratio':>7} {'load':>6}")
    worst, growth = 0.0, {}
    for shape in ("grid", "normal"):
        for n in sizes:
            rng = np.random.default_rng(n)
            pairs = [pair(shape, n, rng) for _ in range(args.pairs)]
            anchor = cpu_per_call(
                [lambda x=x, y=y: (stats.mannwhitneyu(x, y), stats.ttest_ind(x, y)) for x, y in pairs]
            )
            for label, seeds in (("default", [0] * len(pairs)), ("per pair", list(range(1, len(pairs) + 1)))):
                ours = cpu_per_call(
                    [lambda x=x, y=y, s=s: abstat.compare(x, y, seed=s) for (x, y), s in zip(pairs, seeds, strict=True)]
                )
                print(
                    f"{shape:7} {n:3d} {label:8} {ours * 1e3:10.2f} {anchor * 1e3:10.3f} "
                    f"{ours / anchor:7.1f} {os.getloadavg()[0]:6.2f}"
                )
                growth.setdefault((shape, label), []).append(ours)
                if shape == "grid" and n == 40 and label == "default":
                    worst = ours / anchor
    print_growth({f"{shape} {label}": times for (shape, label), times in growth.items()}, sizes)
    if 40 in sizes:
        print(f"grid 40 v 40, default seed: {worst:.1f}x the anchor (target <= {TARGET:.0f}x)")
        return 0 if worst <= TARGET else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
