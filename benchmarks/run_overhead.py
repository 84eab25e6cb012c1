#!/usr/bin/env python3
"""``abstat run`` as a whole against ``hyperfine -N``, paired in one script (issue 26, items 7 and 8).

Every round runs, in alternating order, hyperfine and ``abstat run`` (the
real command line, a fresh store each time) on the same command, and reads
back what each measured: hyperfine's ``--export-json`` times, abstat's stored
``wall`` values.  Each process is also timed from outside.  Printed, with the
load average:

- **measured wall time** of ``true`` and ``sleep 0.005``: each tool's median,
  and the median over rounds of the per-round difference of medians (paired:
  the drift of a shared machine hits both alike).  Target: |paired| <= 0.03 ms.
- **time per run** (start to start): (whole time of N2 runs - whole time of
  N1 runs) / (N2 - N1), for each tool, start-up cancelled; and the part of it
  beyond the command's measured life (the time between runs proper: the
  difference of the measured times taken off).  Target: abstat's time per
  run <= 1.5x hyperfine's, paired per round (the issue's figures, 1.23 ms
  against 0.60 ms for ``true``, are times per run).
- **fixed cost** of ``abstat run -n 10 -v a=true``: its whole time minus the
  ten measured runs.  Target: <= 0.4 s; printed beside hyperfine's own fixed
  cost and ``python -c pass`` measured in the same rounds.

Usage: python benchmarks/run_overhead.py [--rounds 10] [--runs 20] [--more 100]
Needs ``hyperfine`` (Debian package).  Exit status 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner_overhead import run_hyperfine  # noqa: E402  (the same hyperfine invocation)

COMMANDS = {"true": "true", "sleep": "sleep 0.005"}
BIAS_TARGET_MS = 0.03
GAP_TARGET = 1.5
FIXED_TARGET_S = 0.4


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one whole process (its output thrown away)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def hyperfine(text: str, runs: int, workdir: str) -> tuple[float, list[float]]:
    """(whole time, measured times) of ``hyperfine -N`` (one warm-up run)."""
    start = time.perf_counter()
    times = run_hyperfine(text, runs, workdir)
    return time.perf_counter() - start, times


def abstat(text: str, runs: int, workdir: str, warmup: int = 1) -> tuple[float, list[float]]:
    """(whole time, stored wall values) of ``abstat run`` into a fresh store."""
    fd, store = tempfile.mkstemp(prefix="run-overhead-", suffix=".db", dir=workdir)
    os.close(fd)
    os.unlink(store)
    whole = timed([sys.executable, "-m", "abstat", "run", "-n", str(runs), "--warmup", str(warmup),
                   "--store", store, "--no-progress", "--format", "csv", "-v", f"a={text}"])
    db = sqlite3.connect(store)
    walls = [row[0] for row in db.execute("SELECT wall FROM runs WHERE status = 'ok' ORDER BY position")]
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.unlink(store + suffix)
    if len(walls) != runs:
        raise SystemExit(f"abstat stored {len(walls)} runs of {text!r}, not {runs}")
    return whole, walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20, help="N1: runs per command, round and tool")
    parser.add_argument("--more", type=int, default=100, help="N2 - N1 for the time between runs")
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        print("hyperfine is not installed (apt-get install hyperfine)", file=sys.stderr)
        return 2
    version = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout.strip()
    tools = {"hyperfine": hyperfine, "abstat": abstat}
    n1, n2 = args.runs, args.runs + args.more
    medians = {tool: {name: [] for name in COMMANDS} for tool in tools}
    gaps = {tool: {name: [] for name in COMMANDS} for tool in tools}
    cycles = {tool: {name: [] for name in COMMANDS} for tool in tools}
    fixed: dict[str, list[float]] = {"abstat": [], "hyperfine": [], "python": []}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="abstat-run-overhead-") as workdir:
        for index in range(args.rounds):
            order = list(tools) if index % 2 == 0 else list(tools)[::-1]
            for name, text in COMMANDS.items():
                for tool in order:
                    whole1, times1 = tools[tool](text, n1, workdir)
                    whole2, times2 = tools[tool](text, n2, workdir)
                    medians[tool][name].append(statistics.median(times1 + times2))
                    cycles[tool][name].append((whole2 - whole1) / (n2 - n1))
                    gaps[tool][name].append((whole2 - whole1 - (sum(times2) - sum(times1))) / (n2 - n1))
            for tool in order:  # the fixed cost: -n 10 of `true`, whole time minus the runs
                whole, times = tools[tool]("true", 10, workdir)
                fixed[tool].append(whole - sum(times))
            fixed["python"].append(timed([sys.executable, "-c", "pass"]))
            loads.append(os.getloadavg()[0])
    print(f"abstat run vs {version} -N: {args.rounds} alternating rounds of {n1} and {n2} runs per command and "
          f"tool; load average {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} CPUs")
    missed = False
    print(f"{'measured wall time':<20} {'hyperfine':>11} {'abstat':>11} {'paired diff':>12} {'rounds >0':>9}"
          f"  target |paired diff| <= {BIAS_TARGET_MS} ms")
    for name, text in COMMANDS.items():
        h, a = (statistics.median(medians[tool][name]) for tool in ("hyperfine", "abstat"))
        diffs = [x - y for x, y in zip(medians["abstat"][name], medians["hyperfine"][name])]
        pair_ms = statistics.median(diffs) * 1e3
        ok = abs(pair_ms) <= BIAS_TARGET_MS
        missed |= not ok
        print(f"{text:<20} {h * 1e3:>8.3f} ms {a * 1e3:>8.3f} ms {pair_ms:>+9.3f} ms "
              f"{sum(d > 0 for d in diffs):>4}/{len(diffs):<4}  {'ok' if ok else 'MISSED'}")
    print(f"{'time per run':<20} {'hyperfine':>11} {'abstat':>11} {'paired ratio':>12}"
          f"  target ratio <= {GAP_TARGET}   {'between runs: hyperfine':>24} {'abstat':>10}")
    for name, text in COMMANDS.items():
        h, a = (statistics.median(cycles[tool][name]) for tool in ("hyperfine", "abstat"))
        ratio = statistics.median(x / y for x, y in zip(cycles["abstat"][name], cycles["hyperfine"][name]))
        gh, ga = (statistics.median(gaps[tool][name]) for tool in ("hyperfine", "abstat"))
        ok = ratio <= GAP_TARGET
        missed |= not ok
        print(f"{text:<20} {h * 1e3:>8.3f} ms {a * 1e3:>8.3f} ms {ratio:>12.2f}  {'ok' if ok else 'MISSED':<22}"
              f"{gh * 1e3:>+21.3f} ms {ga * 1e3:>+7.3f} ms")
    a, h, p = (statistics.median(fixed[key]) for key in ("abstat", "hyperfine", "python"))
    ok = a <= FIXED_TARGET_S
    missed |= not ok
    print(f"fixed cost of -n 10 true (whole time minus the runs): abstat {a:.3f} s, hyperfine {h:.3f} s "
          f"(ratio {a / h:.1f}), python -c pass {p:.3f} s (ratio {a / p:.1f}); "
          f"target abstat <= {FIXED_TARGET_S} s: {'ok' if ok else 'MISSED'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
