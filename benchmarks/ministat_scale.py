"""``abstat ministat -A`` against Debian's ``ministat`` at several sizes and two data shapes.

Shapes: ``distinct`` (integers from a normal distribution with a 6% spread,
nearly all distinct), ``tsc`` (TSC-like, heavily quantized: a handful of
distinct values, ``20*round(normal(440, 7)/20)``), and decimals as
programs print them: ``time`` (seconds with three decimals, ``1.048``) and
``perf-stat`` (milliseconds with two, ``1234.56``).  For each size and shape
two files are written and both programs run on them in the same script,
interleaved; the script prints the median wall time, the median CPU time
(user + system), the largest max RSS (GNU time's, else ``os.wait4``'s),
their ratios and whether the outputs are byte-identical.  abstat runs as the
installed command does (``python scripts/abstat``), its byte code cached in a
temporary PYTHONPYCACHEPREFIX even when PYTHONDONTWRITEBYTECODE is set (else
every run compiles every module: ~60 ms).  On a shared machine quote the CPU
ratio.

Targets (issue 42): 10^6 and 5*10^6 per file: time <= 0.5x, memory <= 1x;
10^4-10^5: time <= 1x (issue 14's were 4x at 10^5, 1x at 10^6).

    python benchmarks/ministat_scale.py [--sizes 100000,1000000,5000000] [--shapes distinct,tsc,time,perf-stat] [--runs 3]
        [--against TREE]

``--against TREE`` also runs another tree's abstat (``TREE/scripts/abstat`` with ``TREE/src``, e.g. main's
from ``git archive``) interleaved with the others and prints its ratios to Debian's on the line below.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable

TARGETS = {10_000: (1.0, None), 1_000_000: (0.5, 1.0)}


HEADER = (
    "runs: {runs} per program and case, interleaved (median wall time, median CPU time, max of max RSS)\n"
    f"{'n/file':>9} {'shape':<9} {'ministat':>9} {'abstat':>9} {'time':>7} {'target':>6} {'cpu':>6}"
    f" {'ministat':>7} {'abstat':>7}     {'mem':>5} {'target':>6}"
)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _target(size: int) -> tuple[float | None, float | None]:
    fitting = [limit for limit in TARGETS if limit <= size]
    return TARGETS[max(fitting)] if fitting else (None, None)


def write_samples(path: str, count: int, shape: str, seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    with open(path, "w") as handle:
        for start in range(0, count, 1_000_000):
            size = min(1_000_000, count - start)
            lines: Iterable[str]
            if shape == "tsc":
                lines = map(str, (20 * np.rint(rng.normal(440.0 + seed, 7.0, size) / 20)).astype(np.int64).tolist())
            elif shape == "time":
                lines = (f"{value:.3f}" for value in rng.normal(1.05 + 0.01 * seed, 0.05, size).tolist())
            elif shape == "perf-stat":
                lines = (f"{value:.2f}" for value in rng.normal(1234.5 + 10 * seed, 60.0, size).tolist())
            else:
                center = 52000.0 - 200 * seed
                lines = map(str, np.rint(rng.normal(center, center * 0.06, size)).astype(np.int64).tolist())
            handle.write("\n".join(lines))
            handle.write("\n")


TIME = "/usr/bin/time"


def measure(command: list[str], output: str, env: dict[str, str] | None = None) -> tuple[float, float, int, int]:
    """Wall time (s), CPU time (s), max RSS (KiB) and exit status of *command*.

    A child forked from this (large) Python process starts with its parent's
    resident set counted in its peak, so when GNU time is installed the
    command is started through it and its own peak is read back.
    """
    launcher = [TIME, "-f", "%M", "-o", output + ".rss"] if os.access(TIME, os.X_OK) else []
    with open(output, "wb") as sink:
        start = time.perf_counter()
        process = subprocess.Popen([*launcher, *command], stdout=sink, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
    rss = usage.ru_maxrss
    if launcher:
        with open(output + ".rss") as handle:
            rss = int(handle.read().split()[-1])
    return elapsed, usage.ru_utime + usage.ru_stime, rss, os.waitstatus_to_exitcode(status)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _abstat(tree: str, work: str, files: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run *tree*'s abstat as installed, byte code cached."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(work, "pycache", os.path.basename(tree) or "tree"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.path.join(tree, "src")
    return [sys.executable, os.path.join(tree, "scripts", "abstat"), "ministat", "-A", *files], env


def run_case(work: str, reference: str, size: int, shape: str, runs: int, against: str | None = None) -> bool:
    files = [os.path.join(work, f"{shape}-{size}-{side}.txt") for side in ("a", "b")]
    for seed, path in enumerate(files, start=1):
        write_samples(path, size, shape, seed)
    commands = {"ministat": ([reference, "-A", *files], None), "abstat": _abstat(ROOT, work, files)}
    if against:
        commands["against"] = _abstat(os.path.abspath(against), work, files)
    outputs = {name: os.path.join(work, f"{name}.out") for name in commands}
    for command, env in commands.values():  # warm the page cache and byte code
        subprocess.run(command, stdout=subprocess.DEVNULL, check=False, env=env)
    results: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, env) in commands.items():
            results[name].append(measure(command, outputs[name], env))
    for name in commands:
        statuses = {status for _, _, _, status in results[name]}
        if statuses != {0}:
            print(f"{name} failed with exit status {statuses}", file=sys.stderr)
            return False
    ok = _print_row(size, shape, results, outputs, "abstat")
    if against:
        _print_row(size, shape, results, outputs, "against")
    for path in files:
        os.unlink(path)
    return ok


def _print_row(size: int, shape: str, results: dict, outputs: dict[str, str], name: str) -> bool:
    """Print one program's line against Debian's; whether it met the targets with identical output."""
    with open(outputs["ministat"], "rb") as ref, open(outputs[name], "rb") as ours:
        identical = ref.read() == ours.read()
    time_ref = _median([elapsed for elapsed, _, _, _ in results["ministat"]])
    time_ours = _median([elapsed for elapsed, _, _, _ in results[name]])
    cpu_ratio = _median([cpu for _, cpu, _, _ in results[name]]) / max(
        _median([cpu for _, cpu, _, _ in results["ministat"]]), 1e-3
    )
    rss_ref = max(rss for _, _, rss, _ in results["ministat"])
    rss_ours = max(rss for _, _, rss, _ in results[name])
    time_target, memory_target = _target(size)
    time_ratio = time_ours / time_ref
    memory_ratio = rss_ours / rss_ref
    ok = identical and (time_target is None or time_ratio <= time_target)
    ok = ok and (memory_target is None or memory_ratio <= memory_target)
    print(
        f"{size:>9} {shape:<9} {time_ref:7.3f} s {time_ours:7.3f} s {time_ratio:6.2f}x"
        f" {'<=' + format(time_target, '.1f') if time_target else '':>6} {cpu_ratio:5.2f}x"
        f" {rss_ref / 1024:7.1f} {rss_ours / 1024:7.1f} MiB {memory_ratio:5.2f}x"
        f" {'<=' + format(memory_target, '.1f') if memory_target else '':>6}"
        f"  {'identical' if identical else 'OUTPUT DIFFERS'}  {'ok' if ok else 'MISSED'}"
        f"{'  (--against tree)' if name == 'against' else ''}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,5000000", help="samples per file, comma-separated")
    parser.add_argument(
        "--shapes", default="distinct,tsc,time,perf-stat", help="distinct, tsc, time, perf-stat (comma-separated)"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each program per case (default 3)")
    parser.add_argument("--against", help="another tree (with src/ and scripts/) run in the same cases")
    options = parser.parse_args()
    reference = shutil.which("ministat") or ("/usr/bin/ministat" if os.path.exists("/usr/bin/ministat") else None)
    if reference is None:
        print("Debian's ministat is not installed: apt-get install ministat", file=sys.stderr)
        return 2
    sizes = [int(size) for size in options.sizes.split(",")]
    shapes = options.shapes.split(",")
    work = tempfile.mkdtemp(prefix="abstat-ministat-scale-")
    print(HEADER.format(runs=options.runs), f"(load {os.getloadavg()[0]:.1f})")
    try:
        results = [
            run_case(work, reference, size, shape, options.runs, options.against) for size in sizes for shape in shapes
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load at the end: {os.getloadavg()[0]:.1f}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
