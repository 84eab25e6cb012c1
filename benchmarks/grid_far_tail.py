"""The far tail of ``abstat.compare``'s p-value on tied (grid) data with no change: the share of
A/A draws below 0.05, 0.01 and 0.05/32 (Holm's first step over 32 cells), against those nominal
levels.  Both variants are N(440, 7) rounded to a grid (20 cycles by default).

    PYTHONPATH=src python benchmarks/grid_far_tail.py --n 50 --draws 6000 --seed 11
"""

from __future__ import annotations

import argparse

import numpy as np

import abstat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="values per variant")
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--step", type=float, default=20.0, help="grid step")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    ps = np.empty(args.draws)
    for i in range(args.draws):
        a = np.round(rng.normal(440, 7, args.n) / args.step) * args.step
        b = np.round(rng.normal(440, 7, args.n) / args.step) * args.step
        p = abstat.compare(a.tolist(), b.tolist()).p_value
        ps[i] = 1.0 if p is None else p
    for level in (0.05, 0.01, 0.05 / 32):
        share = float(np.mean(ps < level))
        error = (level * (1 - level) / args.draws) ** 0.5
        print(f"n {args.n}, grid {args.step:g}: P(p < {level:.4g}) = {share:.4f} (nominal {level:.4g} ±{error:.4f})")


if __name__ == "__main__":
    main()
