"""``abstat run`` appending to a long-lived experiment against the same run in a fresh store.

A nightly job (``abstat run --experiment nightly``) adds one invocation a
night; its end-of-run report must not get slower as the experiment grows.
The stored experiment is shaped as ``abstat run`` writes it
(``store_shape.py``: ``--invocations`` invocations of 100 runs, five metrics
per run, a ~4.2 KB machine record each).  Interleaved, in fresh
interpreters, the script runs

    abstat run --store COPY --experiment nightly -n 3 -v a=true -v b=true --no-progress
    abstat run --store FRESH --experiment nightly -n 3 -v a=true -v b=true --no-progress

(each time on a new copy of the large store, and a new fresh store) and
prints the medians of CPU (user + system) and wall time and their ratio.
Target (issue 26): at 10^4 invocations <= 1.5x the fresh store's cost.

    python benchmarks/run_append.py [--invocations 10000] [--reps 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from store_shape import RUNS_PER_INVOCATION, cached, workspace  # noqa: E402

TARGET = 1.5


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def copy_store(source: str, target: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.unlink(target + suffix)
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=10_000, help="invocations already stored (default 10000)")
    parser.add_argument("--reps", type=int, default=5, help="timed runs of each (median)")
    parser.add_argument("--keep", help="directory to keep (and reuse) the large store in")
    args = parser.parse_args()
    work, keep, env = workspace("abstat-run-append-", args.keep)
    try:
        large = cached(keep, args.invocations * RUNS_PER_INVOCATION)
        copy, fresh = os.path.join(work, "copy.db"), os.path.join(work, "fresh.db")
        results: dict[str, list[tuple[float, float]]] = {"fresh store": [], "appending": []}
        report = ""
        for rep in range(args.reps + 1):  # the first warms the page cache and bytecode
            copy_store(large, copy)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(fresh + suffix):
                    os.unlink(fresh + suffix)
            for name, store in (("fresh store", fresh), ("appending", copy)):
                argv = [
                    sys.executable,
                    "-m",
                    "abstat",
                    "run",
                    "--store",
                    store,
                    "--experiment",
                    "nightly",
                    "-n",
                    "3",
                    "-v",
                    "a=true",
                    "-v",
                    "b=true",
                    "--no-progress",
                ]
                measured = timed(argv, env)
                if rep:
                    results[name].append(measured)
            if not report:
                report = subprocess.run([*argv[:-1], "-n", "1"], env=env, capture_output=True, text=True).stdout
        print(
            f"experiment of {args.invocations:,} invocations ({args.invocations * RUNS_PER_INVOCATION:,} runs);"
            f" {args.reps} runs of each, interleaved"
        )
        print("| abstat run -n 3 -v a=true -v b=true | CPU | wall |")
        print("|---|---|---|")
        medians = {
            name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
            for name, rs in results.items()
        }
        for name, (cpu, wall) in medians.items():
            print(f"| {name} | {cpu:.3f} s | {wall:.3f} s |")
        ratio = medians["appending"][0] / medians["fresh store"][0]
        wall_ratio = medians["appending"][1] / medians["fresh store"][1]
        print(
            f"ratio appending / fresh: CPU {ratio:.2f}x, wall {wall_ratio:.2f}x (target <= {TARGET}x):"
            f" {'met' if ratio <= TARGET else 'MISSED'}"
        )
        print("the end of the appending run's report:\n" + "\n".join(report.rstrip().splitlines()[-3:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
