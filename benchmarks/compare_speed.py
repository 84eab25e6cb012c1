"""Speed and memory of ``abstat.compare`` against scipy, and of the CLI
against ``python -c "import numpy"``, measured in the same run (issue 14).

1. ``abstat.compare(x, y)`` at n = 10^3 .. 10^6 per side, normal,
   log-normal, TSC-quantized (grid 20) and constant data: CPU time (best of
   ``--reps`` calls, ``time.process_time``) and peak traced memory
   (``tracemalloc``; numpy reports its buffers to it), against
   ``scipy.stats.mannwhitneyu`` + ``scipy.stats.ttest_ind`` on the same
   arrays.  Targets (issue 42, from 10^4 per side): <= 1.5x CPU, <= 2x
   memory, growth exponent of abstat's CPU from 10^4 to 10^6 <= 1.1.
2. ``abstat compare a.txt b.txt`` (2 x 100 samples) in a fresh interpreter,
   wall and CPU time (medians of ``--cli-reps`` runs, alternating with the
   anchor), against ``python -c "import
   numpy"``, with abstat's bytecode cached as in an installed package.
   Target: <= 1.5x.  ``--cli-reps 0`` skips it.
3. ``abstat compare a.txt b.txt`` at ``--file-n`` values per side (10^6; 0 skips it), files written by
   ``np.savetxt`` (``%.18e``) and by ``repr``: CPU (user + system, median of ``--file-reps`` runs).
   Target (issue 42): <= 1 s.

The script exits 1 when a ratio misses its target.

    python benchmarks/compare_speed.py                 # the README table
    python benchmarks/compare_speed.py --max-n 100000  # quicker
    python benchmarks/compare_speed.py --min-n 10000 --reps 7  # the targets' sizes only

CPU times are the best of ``--reps`` calls (half as many at 10^6), abstat's and
scipy's calls alternating.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
sys.path.insert(0, SRC)

import abstat  # noqa: E402

CPU_TARGET = 1.5
GROWTH_TARGET = 1.1
TARGET_FROM = 10**4
MEMORY_TARGET = 2.0
CLI_TARGET = 1.5
FILE_TARGET = 1.0  # seconds of CPU for `compare a.txt b.txt` at 10^6 values a side


def data(shape: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if shape == "normal":
        return rng.normal(1000, 10, n), rng.normal(1005, 10, n)
    if shape == "log-normal":
        return rng.lognormal(0, 1, n), rng.lognormal(0.01, 1, n)
    if shape == "constant":
        return np.full(n, 440.0), np.full(n, 420.0)
    return 20.0 * np.round(rng.normal(440, 7, n) / 20), 20.0 * np.round(rng.normal(444, 7, n) / 20)


def scipy_anchor(x: np.ndarray, y: np.ndarray) -> None:
    from scipy import stats

    stats.mannwhitneyu(x, y, alternative="two-sided")
    stats.ttest_ind(x, y, equal_var=False)


def cpu_pair(ours, theirs, reps: int) -> tuple[float, float]:
    """Best CPU time of each of two calls over ``reps`` rounds, the two alternating within a round (so
    that a change in the machine's load falls on both alike)."""
    ours(), theirs()  # warm up: lazy imports
    best = [float("inf"), float("inf")]
    for _ in range(reps):
        for i, fn in enumerate((ours, theirs)):
            start = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - start)
    return best[0], best[1]


def peak(fn) -> int:
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def run_timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(ours: list[str], anchor: list[str], reps: int, env: dict[str, str]) -> tuple[float, ...]:
    """Medians of wall and CPU for both commands, run alternately so that
    the machine's load falls on both alike."""
    runs: dict[str, list[tuple[float, float]]] = {"ours": [], "anchor": []}
    for _ in range(reps):
        runs["anchor"].append(run_timed(anchor, env))
        runs["ours"].append(run_timed(ours, env))
    return tuple(statistics.median(r[i] for r in runs[k]) for k in ("ours", "anchor") for i in (0, 1))


def large_files(n: int, reps: int, rng: np.random.Generator) -> list[str]:
    """``abstat compare a.txt b.txt`` at ``n`` values a side: CPU of the whole command, two file formats."""
    print()
    print(f"| `abstat compare a.txt b.txt`, {n:,} values a side | wall (median) | CPU (median) | target |")
    print("|---|---|---|---|")
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for kind in ("savetxt", "repr"):
            files = []
            for name, values in zip("ab", data("normal", n, rng), strict=True):
                path = os.path.join(tmp, f"{name}.txt")
                if kind == "savetxt":
                    np.savetxt(path, values)
                else:
                    with open(path, "w") as handle:
                        handle.write("\n".join(map(repr, values.tolist())) + "\n")
                files.append(path)
            command = [sys.executable, "-m", "abstat", "compare", *files]
            run_timed(command, env)  # bytecode
            runs = [run_timed(command, env) for _ in range(reps)]
            wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            print(f"| {kind} files | {wall:.2f} s | {cpu:.2f} s | <= {FILE_TARGET:g} s CPU |")
            if cpu > FILE_TARGET:
                failed.append(f"compare FILE FILE ({kind}) at {n:,}")
    return failed


def small_cli(reps: int, rng: np.random.Generator) -> list[str]:
    """``abstat compare a.txt b.txt`` (2 x 100 samples) against ``python -c "import numpy"``."""
    with tempfile.TemporaryDirectory() as tmp:
        # Bytecode cached as for an installed package (pip compiles it);
        # PYTHONDONTWRITEBYTECODE would otherwise recompile every module.
        env = dict(os.environ, PYTHONPATH=SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        files = []
        for name, values in zip("ab", data("normal", 100, rng)):
            path = os.path.join(tmp, f"{name}.txt")
            np.savetxt(path, values)
            files.append(path)
        command = [sys.executable, "-m", "abstat", "compare", *files]
        run_timed(command, env)  # writes the bytecode
        wall_ours, cpu_ours, wall_anchor, cpu_anchor = interleaved(
            command, [sys.executable, "-c", "import numpy"], reps, env
        )
    ratio = wall_ours / wall_anchor
    print()
    print(
        '| command | wall (median) | CPU (median) | anchor `python -c "import numpy"` wall, CPU '
        "| wall ratio | CPU ratio |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| `abstat compare a b`, 2 x 100 samples | {wall_ours * 1e3:.0f} ms | {cpu_ours * 1e3:.0f} ms | "
        f"{wall_anchor * 1e3:.0f} ms, {cpu_anchor * 1e3:.0f} ms | {ratio:.2f} | {cpu_ours / cpu_anchor:.2f} |"
    )
    return ["CLI"] if ratio > CLI_TARGET else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-n", type=int, default=1000)
    parser.add_argument("--max-n", type=int, default=10**6)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cli-reps", type=int, default=15)
    parser.add_argument("--file-n", type=int, default=10**6)
    parser.add_argument("--file-reps", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    failed = []
    print("| data | n per side | abstat.compare CPU | scipy CPU | ratio | abstat memory | scipy memory | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    n = args.min_n
    times: dict[str, dict[int, float]] = {}
    while n <= args.max_n:
        for shape in ("normal", "log-normal", "quantized", "constant"):
            x, y = data(shape, n, rng)
            reps = args.reps if n <= 10**5 else max(1, args.reps // 2)
            ours, theirs = cpu_pair(lambda: abstat.compare(x, y), lambda: scipy_anchor(x, y), reps)
            mem_ours, mem_theirs = peak(lambda: abstat.compare(x, y)), peak(lambda: scipy_anchor(x, y))
            ratio, mem_ratio = ours / theirs, mem_ours / mem_theirs
            times.setdefault(shape, {})[n] = ours
            print(
                f"| {shape} | {n:,} | {ours * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | {ratio:.2f} | "
                f"{mem_ours / 2**20:.1f} MiB | {mem_theirs / 2**20:.1f} MiB | {mem_ratio:.2f} |"
            )
            if n >= TARGET_FROM and (ratio > CPU_TARGET or mem_ratio > MEMORY_TARGET):
                failed.append(f"{shape} n={n}")
        n *= 10
    print()
    print("| data | growth exponent of abstat.compare's CPU, 10^4 to the largest n |")
    print("|---|---|")
    for shape, by_n in times.items():
        sizes = [k for k in by_n if k >= TARGET_FROM]
        if len(sizes) < 2:
            continue
        lo, hi = min(sizes), max(sizes)
        exponent = np.log(by_n[hi] / by_n[lo]) / np.log(hi / lo)
        print(f"| {shape} | {exponent:.2f} |")
        if exponent > GROWTH_TARGET:
            failed.append(f"{shape} growth exponent {exponent:.2f}")
    if args.cli_reps > 0:  # (0 skips it)
        failed += small_cli(args.cli_reps, rng)
    if args.file_n:
        failed += large_files(args.file_n, args.file_reps, rng)
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
