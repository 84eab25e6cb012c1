"""CPU of the Hodges-Lehmann comparison of 5 values against N (``hodges_lehmann.hodges_lehmann`` on
logarithms, as ``abstat compare`` runs it), against sorting the 5 N pairwise differences with numpy in the
same run (attack17 #3: the interval walk crossed the gaps one at a time, 83 s of CPU at N = 30,000, and above
200,000 pairs the interval came out open).

Shapes: ``apart`` (5 integers 1218..2675 against N uniform in 1000..1010: every baseline value above every
candidate, the whole range of differences accepted), ``aa`` (5 against N of N(1000, 8) rounded to 1e-4:
no change), ``levels`` (5 against N integers 1000..1010: tied, spread).  Printed per row: CPU per call, the
anchor's, their ratio, whether both ends are finite; then the growth exponent of the ratio over the sizes.

Target: the ratio grows no faster than N^0.5 from the first size to the last (before: the walk's O(N^2)),
and every ``apart`` interval is finite.  Exit 1 when missed.  ``--src DIR`` imports abstat from another
tree (e.g. main's ``src``) to measure it the same way (use small ``--sizes`` there).

    python benchmarks/hl_small_side.py
    python benchmarks/hl_small_side.py --src /work/main/src --sizes 400,1200,4000
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

SHAPES = ("apart", "aa", "levels")


def samples(shape: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "apart":
        return rng.integers(1218, 2676, 5).astype(float), rng.uniform(1000.0, 1010.0, n)
    if shape == "aa":
        return np.round(rng.normal(1000.0, 8.0, 5), 4), np.round(rng.normal(1000.0, 8.0, n), 4)
    return rng.integers(1000, 1011, 5).astype(float), rng.integers(1000, 1011, n).astype(float)


def cpu(call, repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        call()
    return (time.process_time() - start) / repeat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="400,1200,4000,12000,40000,120000,400000", help="N (default %(default)s)")
    parser.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.src))
    from abstat.stats import hodges_lehmann as hl

    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"abstat from {os.path.dirname(hl.__file__)}; load {os.getloadavg()[0]:.2f}")
    print(f"{'shape':7} {'N':>7} {'hl ms':>9} {'sort ms':>9} {'ratio':>7} {'finite':>6}")
    ok = True
    for shape in SHAPES:
        ratios = []
        for n in sizes:
            x, y = samples(shape, n, np.random.default_rng(n))
            lx, ly = np.log(x), np.log(y)
            repeat = max(1, 40_000 // n)
            result = hl.hodges_lehmann(lx, ly, 0.95)
            took = cpu(lambda lx=lx, ly=ly: hl.hodges_lehmann(lx, ly, 0.95), repeat)
            anchor = cpu(lambda lx=lx, ly=ly: np.sort(np.subtract.outer(ly, lx).ravel()), 5 * repeat)
            finite = math.isfinite(result.low) and math.isfinite(result.high)
            ok &= finite or shape != "apart"
            ratios.append(took / anchor)
            print(f"{shape:7} {n:>7} {took * 1e3:>9.2f} {anchor * 1e3:>9.3f} {took / anchor:>7.1f} {finite!s:>6}")
        exponent = math.log(ratios[-1] / ratios[0]) / math.log(sizes[-1] / sizes[0])
        ok &= exponent <= 0.5
        print(f"growth exponent of the ratio, {shape}, N {sizes[0]} to {sizes[-1]}: {exponent:.2f}")
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
