"""Speed of one ``abstat.compare`` (100 vs 100 samples) against scipy anchors.

Imports happen before timing; each call is timed many times and the median
is reported, together with the ratio to ``scipy.stats.ttest_ind`` and
``scipy.stats.mannwhitneyu`` on the same data in the same run.

    python benchmarks/compare_speed.py [--n 100] [--reps 300]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


def timed(fn, reps: int) -> float:
    fn()  # warm up (lazy imports, caches)
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args(argv)

    import numpy as np
    from scipy import stats

    import abstat

    rng = np.random.default_rng(0)
    shapes = {
        "normal": (rng.normal(1000, 10, args.n), rng.normal(990, 10, args.n)),
        "tsc-quantized": (np.round(rng.normal(440, 7, args.n) / 20) * 20, np.round(rng.normal(430, 7, args.n) / 20) * 20),
        "outliers": (rng.normal(1000, 10, args.n) * np.where(rng.random(args.n) < 0.03, 1.5, 1.0),
                     rng.normal(995, 10, args.n)),
    }
    nested = ([rng.normal(1000, 5, 30) for _ in range(8)], [rng.normal(990, 5, 30) for _ in range(8)])
    print(f"{'data':<15}{'abstat.compare':>16}{'ttest_ind':>12}{'mannwhitneyu':>14}{'ratio/t':>9}{'ratio/MW':>10}")
    for name, (x, y) in shapes.items():
        xs, ys = list(x), list(y)
        ours = timed(lambda: abstat.compare(xs, ys), args.reps)
        t = timed(lambda: stats.ttest_ind(x, y), args.reps)
        mw = timed(lambda: stats.mannwhitneyu(x, y), args.reps)
        print(f"{name:<15}{ours * 1e3:>13.2f} ms{t * 1e3:>9.3f} ms{mw * 1e3:>11.3f} ms{ours / t:>9.1f}{ours / mw:>10.1f}")
    ours = timed(lambda: abstat.compare(*nested), args.reps)
    flat = [np.concatenate(nested[0]), np.concatenate(nested[1])]
    t = timed(lambda: stats.ttest_ind(*flat), args.reps)
    mw = timed(lambda: stats.mannwhitneyu(*flat), args.reps)
    print(f"{'nested 8x30':<15}{ours * 1e3:>13.2f} ms{t * 1e3:>9.3f} ms{mw * 1e3:>11.3f} ms{ours / t:>9.1f}{ours / mw:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
