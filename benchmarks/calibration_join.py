"""The partner test of the small-sample join, by vectorised simulation (issue 34, wave 7).

With at most ``JOIN_MAX`` (4) values on a side ``abstat compare`` calls a
change only when its studentized permutation Brunner-Munzel test and a
partner test on the logarithms both do (``abstat.comparison.estimands``).
This script compares partners on the same draws: the permutation test alone
(``abstat.stats.permutation_power.rejects``, compare's own reference), joined
with Welch's t (scipy), joined with Yuen's 10%-trimmed t (compare's partner,
``trimmed_rejects``), and the two t tests alone.  Rows: A/A, the 3x-wider
small side (same median) and +1% on N(1000, 10) at m against 30 and 500;
+1% with 3% interrupts (x U(1.3, 1.8)) with the few values as the candidate
(500/m: a few new runs against a big stored baseline) and as the baseline
(m/500); skewed 1000 + 30 LogN(0, 1).  Rates in percent of ``--draws`` draws
(Monte Carlo error at most 50/sqrt(draws) points).

    python benchmarks/calibration_join.py --draws 2000 --sizes 3,4,5 --markdown
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from calibration_workflows import OUT, SKEW, WIDE, N  # noqa: E402

from abstat.stats.permutation_power import rejects, statistic_and_sum, trimmed_rejects  # noqa: E402

ALPHA = 0.05
COLUMNS = ["permutation alone", "joined with Welch", "joined with Yuen 10% (compare)", "Welch alone", "Yuen 10% alone"]


def rows(m: int) -> list[tuple[str, object, object, int, int]]:
    """(name, baseline, candidate, n baseline, n candidate)."""
    out = []
    for big in (30, 500):
        out += [
            (f"normal A/A, {big} vs {m}", N, N, big, m),
            (f"normal, small side 3x as wide, {big} vs {m}", N, WIDE, big, m),
            (f"normal +1%, {big} vs {m}", N, N.scaled(1.01), big, m),
        ]
    return out + [
        (f"interrupts A/A, 500 vs {m}", OUT, OUT, 500, m),
        (f"interrupts +1%, 500 vs {m}", OUT, OUT.scaled(1.01), 500, m),
        (f"interrupts A/A, {m} vs 500", OUT, OUT, m, 500),
        (f"interrupts +1%, {m} vs 500", OUT, OUT.scaled(1.01), m, 500),
        (f"skewed A/A, 500 vs {m}", SKEW, SKEW, 500, m),
        (f"skewed +1%, 500 vs {m}", SKEW, SKEW.scaled(1.01), 500, m),
    ]


def rates(px, py, nx: int, ny: int, draws: int, rng: np.random.Generator) -> list[float]:
    xs = np.log(np.stack([px.sample(rng, nx) for _ in range(draws)]))
    ys = np.log(np.stack([py.sample(rng, ny) for _ in range(draws)]))
    t, u = statistic_and_sum(xs, ys)
    perm = rejects(t, nx, ny, ALPHA, u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        welch = stats.ttest_ind(ys, xs, axis=1, equal_var=False).pvalue < ALPHA
    yuen = trimmed_rejects(xs, ys, ALPHA)
    return [100.0 * float(np.mean(v)) for v in (perm, perm & welch, perm & yuen, welch, yuen)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--sizes", default="3,4,5")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    lines = []
    for m in (int(v) for v in args.sizes.split(",")):
        for name, px, py, nx, ny in rows(m):
            lines.append([name, *(f"{v:.1f}%" for v in rates(px, py, nx, ny, args.draws, rng))])
            print("  ".join(lines[-1]), file=sys.stderr, flush=True)
    header = ["row", *COLUMNS]
    print(f"{args.draws} draws per row, alpha {ALPHA}, seed {args.seed}\n")
    if args.markdown:
        print(
            "\n".join(
                ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                + ["| " + " | ".join(r) + " |" for r in lines]
            )
        )
    else:
        print("\n".join("  ".join(r) for r in [header, *lines]))
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
