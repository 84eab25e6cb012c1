"""Bisection under noise: abstat's probabilistic bisection against the usual rules.

    python benchmarks/bisection.py [--trials 100] [--seed 1] [--markdown]

(Not benchmarks/bisect.py: a file of that name would shadow the standard
library's bisect module, which `random` imports, for every script run from
this directory.)

Histories of N = 100 and 1000 commits with one change of d = 0.5, 1 and 2
noise standard deviations at a uniformly drawn commit.  Noise shapes:
normal; quantized TSC cycles (level 440 cycles, SD 2 cycles, integers);
outliers (normal plus 5% of runs 5-20 SD slow, one-sided).

Methods, each given the good and bad ends:
- abstat: abstat.bisect.search (confidence 0.95, budget 2000 runs);
- welch-n10, welch-n30: plain bisection, n runs per commit (and of the good
  end), bad when Welch's t-test against the good end gives p < 0.05;
- pinpoint: plain bisection, p = min(KS, Mann-Whitney) of the commit
  against the good end, <= 0.01 different (bad), >= 0.10 same (good),
  otherwise both get twice the attempts (10, 20, ... up to 160; still
  unknown at 160 counts as same);
- asv: one run per commit (asv find): bad when closer to the bad end's run.

Printed: accuracy (named commit is the changed one) and benchmark runs
spent (mean, 95th percentile), references included.  ``--coverage`` prints
instead how often abstat's 95% interval of the change's size (Hodges-Lehmann,
bad minus good references) holds the true shift.
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

SHAPES = ("normal", "quantized", "outliers")


class History:
    def __init__(self, n: int, d: float, shape: str, rng: np.random.Generator) -> None:
        self.n, self.d, self.shape, self.rng = n, d, shape, rng
        self.culprit = int(rng.integers(1, n + 1))
        self.runs = 0

    def measure(self, commit: int, count: int = 1) -> np.ndarray:
        self.runs += count
        bad = commit >= self.culprit
        if self.shape == "quantized":
            return np.round(440.0 + 2.0 * (self.rng.normal(0, 1, count) + (self.d if bad else 0)))
        values = self.rng.normal(0, 1, count) + (self.d if bad else 0.0)
        if self.shape == "outliers":
            hit = self.rng.random(count) < 0.05
            values = np.where(hit, values + self.rng.uniform(5, 20, count), values)
        return 100.0 + values


def plain_bisect(history: History, is_bad) -> int:
    low, high = 0, history.n
    while high - low > 1:
        mid = (low + high) // 2
        if is_bad(mid):
            high = mid
        else:
            low = mid
    return high


def run_welch(history: History, n: int) -> int:
    from scipy.stats import ttest_ind

    good = history.measure(0, n)
    history.measure(history.n, n)  # the bad end is measured too (to confirm there is a change)
    return plain_bisect(history, lambda c: float(ttest_ind(history.measure(c, n), good, equal_var=False).pvalue) < 0.05)


def run_pinpoint(history: History) -> int:
    from scipy.stats import ks_2samp, mannwhitneyu

    good = list(history.measure(0, 10))
    history.measure(history.n, 10)

    def is_bad(commit: int) -> bool:
        nonlocal good
        values = list(history.measure(commit, 10))
        while True:
            p = min(float(ks_2samp(values, good).pvalue),
                    float(mannwhitneyu(values, good, alternative="two-sided").pvalue))
            if p <= 0.01:
                return True
            if p >= 0.10 or len(values) >= 160:
                return False
            values += list(history.measure(commit, len(values)))
            if len(good) < len(values):
                good += list(history.measure(0, len(values) - len(good)))

    return plain_bisect(history, is_bad)


def run_asv(history: History) -> int:
    good = float(history.measure(0)[0])
    bad = float(history.measure(history.n)[0])
    return plain_bisect(history, lambda c: abs(float(history.measure(c)[0]) - bad) < abs(good - bad) / 2)


COVERED: list[bool] = []  # whether abstat's interval of the change held the true shift


def run_abstat(history: History) -> int | None:
    from abstat.bisect.search import Search, simulate

    search = Search(history.n, confidence=0.95, budget=2000)
    outcome = simulate(search, lambda c: float(history.measure(c)[0]))
    if outcome.shift_low is not None and outcome.shift_high is not None:
        true_shift = history.d * (2.0 if history.shape == "quantized" else 1.0)
        COVERED.append(outcome.shift_low <= true_shift <= outcome.shift_high)
    return outcome.culprit


METHODS = {
    "abstat": run_abstat,
    "welch-n10": lambda h: run_welch(h, 10),
    "welch-n30": lambda h: run_welch(h, 30),
    "pinpoint": run_pinpoint,
    "asv": run_asv,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--effects", default="0.5,1,2")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--coverage", action="store_true",
                        help="only abstat: coverage of its 95%% interval of the change's size, per shape")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.coverage:
        for n in [int(x) for x in args.sizes.split(",")]:
            for d in [float(x) for x in args.effects.split(",")]:
                for shape in SHAPES:
                    rng = np.random.default_rng([args.seed, n, int(d * 10), SHAPES.index(shape), 99])
                    COVERED.clear()
                    for _ in range(args.trials):
                        run_abstat(History(n, d, shape, rng))
                    print(f"N={n} d={d:g} {shape}: interval of the change covers the true shift in "
                          f"{sum(COVERED)}/{len(COVERED)} = {sum(COVERED) / max(1, len(COVERED)):.3f}", flush=True)
        return 0
    header = ["N", "d", "noise", *[f"{m} acc / runs (p95)" for m in METHODS]]
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        for d in [float(x) for x in args.effects.split(",")]:
            for shape in SHAPES:
                cells = []
                for index, (name, method) in enumerate(METHODS.items()):
                    rng = np.random.default_rng([args.seed, n, int(d * 10), SHAPES.index(shape), index])
                    correct, spent = 0, []
                    for _ in range(args.trials):
                        history = History(n, d, shape, rng)
                        correct += method(history) == history.culprit
                        spent.append(history.runs)
                    cells.append(f"{correct / args.trials:.2f} / {np.mean(spent):.0f} ({np.percentile(spent, 95):.0f})")
                rows.append([str(n), f"{d:g}", shape, *cells])
                if not args.markdown:
                    print("  ".join(rows[-1]), flush=True)
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    print(f"\n{args.trials} trials per cell, seed {args.seed}; accuracy / mean runs (95th percentile)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
