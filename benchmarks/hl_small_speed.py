"""CPU of ``hodges_lehmann._small`` (the Hodges-Lehmann estimate and the inverted Brunner-Munzel interval
searched over the gaps between the sorted pairwise differences) against ``scipy.stats.mannwhitneyu`` on the
same pairs in the same run (issue 42).

Shapes: ``ar1`` (N(1000, 10) values, the variances inflated 100x, about as ``serial_factors`` does for most
AR(1) phi 0.6 pairs of 15 values in ``tests/stats/test_dependence.py``: the search walks nearly every gap,
~190 statistics per call before the wave-15 speed work), ``normal``
(untied), ``grid`` (cycle counts on a grid of 20 with 5% interrupts: tied, spread).  The interval's critical
value is fixed at 2.1 (a permutation reference's, as at <= 50 values a side), or Student's t (``t`` rows).
Printed per row: ``_small``'s CPU per call, the anchor's, their ratio, the load average; then the growth
exponent of ``_small``'s CPU over the sizes.

Target (ar1, 15 against 15): <= 5x the anchor (before the wave-15 speed work: 9-10x at load 4.5).  Exit 1 when missed.
``--src DIR`` imports abstat from another tree (e.g. main's ``src``) to measure it the same way.

    python benchmarks/hl_small_speed.py
    python benchmarks/hl_small_speed.py --src /path/to/old/src --pairs 20
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from permutation_speed import cpu_per_call, grid_pair, print_growth  # benchmarks/: the same grid data and CPU clock

TARGET = 5.0
SHAPES = (("ar1", (100.0, 100.0), 2.1), ("normal", (1.0, 1.0), 2.1), ("grid", (1.0, 1.0), 2.1), ("t", (1.0, 1.0), None))


def pair(shape: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape != "grid":
        return rng.normal(1000.0, 10.0, n), rng.normal(1003.0, 10.0, n)
    return grid_pair(n, rng)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,15,30,50", help="n per side (default %(default)s)")
    parser.add_argument("--pairs", type=int, default=40, help="pairs per row (default %(default)s)")
    parser.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.src))
    from scipy import stats

    from abstat.stats import hodges_lehmann as hl
    from abstat.stats.brunner_munzel import spread_ties

    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"abstat from {os.path.dirname(hl.__file__)}; load {os.getloadavg()[0]:.2f}")
    print(f"{'shape':7} {'n':>3} {'_small ms':>10} {'anchor ms':>10} {'ratio':>7} {'load':>6}")
    worst, growth = 0.0, {}
    for shape, inflate, fixed in SHAPES:
        for n in sizes:
            rng = np.random.default_rng(n)
            pairs = [pair(shape, n, rng) for _ in range(args.pairs)]
            spread = [(spread_ties(np.sort(np.log(x))), spread_ties(np.sort(np.log(y)))) for x, y in pairs]
            anchor = cpu_per_call([lambda x=x, y=y: stats.mannwhitneyu(x, y) for x, y in pairs])
            ours = cpu_per_call([lambda x=x, y=y, i=inflate, f=fixed: hl._small(x, y, 0.95, i, f) for x, y in spread])
            load = os.getloadavg()[0]
            print(f"{shape:7} {n:3d} {ours * 1e3:10.3f} {anchor * 1e3:10.3f} {ours / anchor:7.1f} {load:6.2f}")
            growth.setdefault(shape, []).append(ours)
            if shape == "ar1" and n == 15:
                worst = ours / anchor
    print_growth(growth, sizes)
    if 15 in sizes:
        print(f"ar1 15 v 15: {worst:.1f}x the anchor (target <= {TARGET:.0f}x)")
        return 0 if worst <= TARGET else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
