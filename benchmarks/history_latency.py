"""Detection latency of ``abstat history``: how many points after a step it first flags it and confirms it.

    python benchmarks/history_latency.py [--series 200] [--seed 1] [--sd 3]

Each series: 50 revisions of N(100, 1), then a step of ``--sd`` noise SDs at revision 50, then
revisions arriving one at a time.  After each new revision ``detect`` runs on the history so far;
the step is *flagged* at the first count of points after it at which a change point within
+-``MARGIN`` of 50 is reported (provisional or not), and *confirmed* at the first count at which
it is reported and no longer provisional (the settled count: ``2 * min_segment``, at least 10).
Printed: the share of series flagged within 6 points (chromeperf's 6) and confirmed within 12
(Perfherder's 12), and the median and 90th percentile of each latency.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

MARGIN = 2
BEFORE = 50
MOST = 30


def latencies(values: np.ndarray) -> tuple[int | None, int | None]:
    from abstat.history.changepoints import detect

    flagged = confirmed = None
    for after in range(1, MOST + 1):
        found = [c for c in detect(values[: BEFORE + after]).change_points if abs(c.index - BEFORE) <= MARGIN]
        if found and flagged is None:
            flagged = after
        if found and not found[0].provisional:
            confirmed = after
            break
    return flagged, confirmed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sd", type=float, default=3.0, help="the step in noise SDs (default 3)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    flags, confirms = [], []
    for _ in range(args.series):
        values = rng.normal(100.0, 1.0, BEFORE + MOST)
        values[BEFORE:] += args.sd * rng.choice((-1.0, 1.0))
        f, c = latencies(values)
        flags.append(f if f is not None else np.inf)
        confirms.append(c if c is not None else np.inf)
    flags_a, confirms_a = np.asarray(flags), np.asarray(confirms)
    print(f"{args.series} series, a {args.sd:g} SD step after {BEFORE} revisions of N(100, 1), seed {args.seed}")
    print(
        f"flagged within 6 points: {np.mean(flags_a <= 6):.1%}; median {np.median(flags_a):g}, "
        f"90th percentile {np.quantile(flags_a, 0.9):g}"
    )
    print(
        f"confirmed within 12 points: {np.mean(confirms_a <= 12):.1%}; median {np.median(confirms_a):g}, "
        f"90th percentile {np.quantile(confirms_a, 0.9):g}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
