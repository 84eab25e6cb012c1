"""The "means differ" note of ``abstat compare`` (issue 34, wave 9): its level and power.

The note appears when the default comparison is not significant but Welch's t
on the means is, at >= 20 values a side and sizes within 1.25x.  Its
false-positive rate is at most Welch's own A/A rate, measured here per shape
and size pair (vectorised, ``scipy.stats.ttest_ind(equal_var=False)`` on raw
values, ``--draws`` each); then ``--compare-draws`` draws of the
interrupt-rate row (2% -> 8% at 50 a side) through ``abstat.compare``: the
verdict, the note, and verdict or note.

    python benchmarks/calibration_means_note.py --draws 4000 --compare-draws 1000
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from calibration_workflows import G20, MIXA, OUT, RATE2, RATE8, SKEW, N  # noqa: E402

import abstat  # noqa: E402

SIZES = ((10, 10), (20, 20), (30, 30), (50, 50), (100, 100), (30, 100), (50, 500), (20, 500))


def welch_levels(draws: int, rng: np.random.Generator) -> None:
    for pop in (N, OUT, SKEW, G20, RATE2, RATE8, MIXA):
        out = []
        for nx, ny in SIZES:
            xs = np.stack([pop.sample(rng, nx) for _ in range(draws)])
            ys = np.stack([pop.sample(rng, ny) for _ in range(draws)])
            p = stats.ttest_ind(xs, ys, axis=1, equal_var=False).pvalue
            out.append(f"{nx}/{ny} {100 * np.mean(p < 0.05):4.1f}%")
        print(f"Welch A/A, {pop.name}: " + "  ".join(out), flush=True)


def note_power(draws: int, rng: np.random.Generator) -> None:
    verdict = note = either = 0
    for i in range(draws):
        c = abstat.compare(RATE2.sample(rng, 50), RATE8.sample(rng, 50), seed=i)
        noted = any(w.code == "means-differ" for w in c.notes)
        verdict, note, either = verdict + c.significant, note + noted, either + (c.significant or noted)

    def pct(k: int) -> str:
        return f"{100 * k / draws:.1f}% ±{100 * (k / draws * (1 - k / draws) / draws) ** 0.5:.1f}"

    print(f"interrupt rate 2% -> 8%, 50/50: verdict {pct(verdict)}, note {pct(note)}, either {pct(either)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--compare-draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    welch_levels(args.draws, rng)
    note_power(args.compare_draws, np.random.default_rng(args.seed + 12))  # its own stream: 29 by default
    return 0


if __name__ == "__main__":
    sys.exit(main())
