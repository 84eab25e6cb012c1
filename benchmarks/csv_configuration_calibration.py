"""How often ``readers/csvconfig.py`` takes a CSV column of integers for a configuration (attack23 #1).

Both directions, on simulated groups of rows (each group one variant, or one variant of one benchmark):

- measurements that must stay metrics: cycles on a grid of 20 (normal noise of sd 5..40 around a centre
  drawn anywhere in a grid cell, n 5..60 a group; A/A and +1%), and the worst case, timer ticks equally
  likely over k = 2..4 values (the most even counts a measurement gives);
- sweeps that are configurations: k = 2..8 values (1, 2, 4, ...), 2..10 repetitions, in blocks, in turn or
  shuffled, with 0..2 failed repetitions (rows left out anywhere).

Each row prints the share taken for a configuration and the share given the doubt note (``--csv-labels``),
over ``--draws`` draws.  The balance chance itself is checked against scipy.stats.multinomial (exact sums over
every count vector) on small cases first.

    python benchmarks/csv_configuration_calibration.py [--draws 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections import Counter

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from abstat.readers.csvconfig import DOUBT, SURE, balance_chance, column_chance  # noqa: E402


def reference_balance(n: int, k: int, spread: int) -> float:
    """P(most - fewest <= spread), summed over every count vector with scipy's multinomial pmf."""
    law = stats.multinomial(n, [1 / k] * k)
    return sum(
        law.pmf(list(c) + [n - sum(c)])
        for c in itertools.product(range(n + 1), repeat=k - 1)
        if sum(c) <= n and max(*c, n - sum(c)) - min(*c, n - sum(c)) <= spread
    )


def verdict(groups: list[list[int]]) -> str:
    chance = column_chance(groups)
    return "metric" if chance is None or chance > DOUBT else "config" if chance <= SURE else "doubt"


def shares(draw, draws: int) -> str:
    found = Counter(verdict(draw()) for _ in range(draws))
    return f"{found['config'] / draws:7.2%} {found['doubt'] / draws:7.2%}"


def measurements(rng: np.random.Generator, draws: int) -> None:
    print("measurements (must stay metrics): share taken for a configuration, share given the note")
    for sd in (5, 10, 20, 40):
        for n in (5, 10, 20, 30, 60):
            cells = []
            for groups, shift in ((2, 0.0), (2, 0.01), (4, 0.0)):

                def draw(groups=groups, shift=shift, sd=sd, n=n):
                    centre = 1000 + rng.uniform(0, 20)
                    return [
                        [int(v) for v in np.round(rng.normal(centre * (1 + shift * (j % 2)), sd, n) / 20) * 20]
                        for j in range(groups)
                    ]

                cells.append(shares(draw, draws))
            print(f"  grid 20, sd {sd:2d}, n {n:2d}:  A/A {cells[0]}  +1% {cells[1]}  4 groups {cells[2]}")
    for k in (2, 3, 4):
        for n in (6, 10, 20, 40):
            cells = [
                shares(lambda g=g, k=k, n=n: [[int(v) for v in rng.integers(10, 10 + k, n)] for _ in range(g)], draws)
                for g in (2, 4)
            ]
            print(f"  ticks equally likely, k {k}, n {n:2d}:  2 groups {cells[0]}  4 groups {cells[1]}")


def sweeps(rng: np.random.Generator, draws: int) -> None:
    print("sweeps (configurations): share taken for a configuration, share given the note")
    for k in (2, 3, 4, 8):
        values = [2**i for i in range(k)]
        for repetitions in (2, 3, 5, 10):
            cells = []
            for order in ("blocks", "turn", "shuffled"):
                for failed in (0, 1, 2):

                    def draw(order=order, failed=failed, repetitions=repetitions, values=values):
                        groups = []
                        for _ in range(2):
                            if order == "blocks":
                                sequence = [v for v in values for _ in range(repetitions)]
                            elif order == "turn":
                                sequence = [v for _ in range(repetitions) for v in values]
                            else:
                                sequence = [int(v) for v in rng.permutation(np.repeat(values, repetitions))]
                            groups.append(sequence)
                        for _ in range(failed):
                            group = groups[int(rng.integers(2))]
                            del group[int(rng.integers(len(group)))]
                        return groups

                    cells.append(f"{order[0]}{failed} {shares(draw, draws)}")
            print(f"  k {k}, {repetitions:2d} repetitions: " + " | ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    worst = 0.0
    for n, k, spread in itertools.product((4, 7, 12, 20), (2, 3, 4), (0, 1, 2, 3)):
        ours, theirs = balance_chance(n, k, spread), reference_balance(n, k, spread)
        if ours < 1.0:  # 1: beyond twice a count's deviation, no evidence claimed
            worst = max(worst, abs(ours - theirs) / theirs if theirs else ours)
        elif theirs < 0.5:
            print(f"balance_chance({n}, {k}, {spread}) = 1 where scipy gives {theirs:.3g}")
            return 1
    print(f"balance_chance against scipy.stats.multinomial (n 4..20, k 2..4, spread 0..3): worst relative {worst:.1e}")
    rng = np.random.default_rng(args.seed)
    measurements(rng, args.draws)
    sweeps(rng, args.draws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
