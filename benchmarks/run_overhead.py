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
import resource
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


CPU: list[float] = [0.0]  # user + system seconds of the last process tree timed (what load does not inflate much)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one whole process (its output thrown away); its CPU seconds go to ``CPU``."""
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    CPU[0] = _children_cpu() - cpu
    return wall


def hyperfine(text: str, runs: int, workdir: str) -> tuple[float, list[float]]:
    """(whole time, measured times) of ``hyperfine -N`` (one warm-up run)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    times = run_hyperfine(text, runs, workdir)
    wall = time.perf_counter() - start
    CPU[0] = _children_cpu() - cpu
    return wall, times


def abstat(text: str, runs: int, workdir: str, warmup: int = 1, src: str | None = None) -> tuple[float, list[float]]:
    """(whole time, stored wall values) of ``abstat run`` (the one in ``src`` when given) into a fresh store."""
    fd, store = tempfile.mkstemp(prefix="run-overhead-", suffix=".db", dir=workdir)
    os.close(fd)
    os.unlink(store)
    env = dict(os.environ, PYTHONPATH=src) if src else None
    whole = timed(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            str(runs),
            "--warmup",
            str(warmup),
            "--store",
            store,
            "--no-progress",
            "--format",
            "csv",
            "-v",
            f"a={text}",
        ],
        env,
    )
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
    parser.add_argument(
        "--baseline-src",
        metavar="DIR",
        help="another abstat's src (e.g. a worktree of an older commit), measured alike in each round",
    )
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        print("hyperfine is not installed (apt-get install hyperfine)", file=sys.stderr)
        return 2
    version = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout.strip()
    tools = {"hyperfine": hyperfine, "abstat": abstat}
    if args.baseline_src:
        tools["baseline"] = lambda text, runs, workdir: abstat(text, runs, workdir, src=args.baseline_src)
    n1, n2 = args.runs, args.runs + args.more
    medians = {tool: {name: [] for name in COMMANDS} for tool in tools}
    gaps = {tool: {name: [] for name in COMMANDS} for tool in tools}
    cycles = {tool: {name: [] for name in COMMANDS} for tool in tools}
    fixed: dict[str, list[float]] = {tool: [] for tool in tools}
    fixed["python"] = []
    fixed_cpu: dict[str, list[float]] = {key: [] for key in fixed}
    cycle_cpu = {tool: {name: [] for name in COMMANDS} for tool in tools}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="abstat-run-overhead-") as workdir:
        for index in range(args.rounds):
            order = list(tools) if index % 2 == 0 else list(tools)[::-1]
            for name, text in COMMANDS.items():
                for tool in order:
                    whole1, times1 = tools[tool](text, n1, workdir)
                    cpu1 = CPU[0]
                    whole2, times2 = tools[tool](text, n2, workdir)
                    cycle_cpu[tool][name].append((CPU[0] - cpu1) / (n2 - n1))
                    medians[tool][name].append(statistics.median(times1 + times2))
                    cycles[tool][name].append((whole2 - whole1) / (n2 - n1))
                    gaps[tool][name].append((whole2 - whole1 - (sum(times2) - sum(times1))) / (n2 - n1))
            for tool in order:  # the fixed cost: -n 10 of `true`, whole time minus the runs
                whole, times = tools[tool]("true", 10, workdir)
                fixed[tool].append(whole - sum(times))
                fixed_cpu[tool].append(CPU[0])
            fixed["python"].append(timed([sys.executable, "-c", "pass"]))
            fixed_cpu["python"].append(CPU[0])
            loads.append(os.getloadavg()[0])
    print(
        f"abstat run vs {version} -N: {args.rounds} alternating rounds of {n1} and {n2} runs per command and "
        f"tool; load average {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} CPUs"
    )
    others = [tool for tool in tools if tool != "hyperfine"]  # abstat, and the baseline abstat if given

    def paired(table: dict, tool: str, name: str, how) -> float:
        return statistics.median(how(x, y) for x, y in zip(table[tool][name], table["hyperfine"][name]))

    missed = False
    print(
        f"measured wall time (median; paired: median over rounds of the difference to hyperfine's); "
        f"target |abstat paired| <= {BIAS_TARGET_MS} ms"
    )
    for name, text in COMMANDS.items():
        cells = [f"hyperfine {statistics.median(medians['hyperfine'][name]) * 1e3:.3f} ms"]
        for tool in others:
            diff = paired(medians, tool, name, lambda x, y: x - y) * 1e3
            above = sum(x > y for x, y in zip(medians[tool][name], medians["hyperfine"][name]))
            cells.append(
                f"{tool} {statistics.median(medians[tool][name]) * 1e3:.3f} ms, paired {diff:+.3f} ms "
                f"(above in {above}/{args.rounds})"
            )
        ok = abs(paired(medians, "abstat", name, lambda x, y: x - y)) * 1e3 <= BIAS_TARGET_MS
        missed |= not ok
        print(f"  {text:<12} " + "; ".join(cells) + f"  {'ok' if ok else 'MISSED'}")
    print(
        f"time per run, start to start (beyond the command's measured life in brackets); "
        f"target abstat / hyperfine <= {GAP_TARGET}, paired"
    )
    for name, text in COMMANDS.items():
        cells = [
            f"hyperfine {statistics.median(cycles['hyperfine'][name]) * 1e3:.3f} ms "
            f"({statistics.median(gaps['hyperfine'][name]) * 1e3:+.3f})"
        ]
        for tool in others:
            cells.append(
                f"{tool} {statistics.median(cycles[tool][name]) * 1e3:.3f} ms "
                f"({statistics.median(gaps[tool][name]) * 1e3:+.3f}), ratio "
                f"{paired(cycles, tool, name, lambda x, y: x / y):.2f}"
            )
        ok = paired(cycles, "abstat", name, lambda x, y: x / y) <= GAP_TARGET
        missed |= not ok
        print(f"  {text:<12} " + "; ".join(cells) + f"  {'ok' if ok else 'MISSED'}")
        print(
            f"  {'':<12} CPU per run (process tree, the command's included): "
            + "; ".join(f"{tool} {statistics.median(cycle_cpu[tool][name]) * 1e3:.3f} ms" for tool in tools)
        )
    cost = {key: statistics.median(values) for key, values in fixed.items()}
    ok = cost["abstat"] <= FIXED_TARGET_S
    missed |= not ok
    print(
        "fixed cost of -n 10 true (whole time minus the ten runs): "
        + ", ".join(f"{tool} {cost[tool]:.3f} s" for tool in others)
        + f"; hyperfine {cost['hyperfine']:.3f} s; python -c pass {cost['python']:.3f} s (abstat / python "
        f"{cost['abstat'] / cost['python']:.1f}); target abstat <= {FIXED_TARGET_S} s: {'ok' if ok else 'MISSED'}"
    )
    print(
        "CPU of the whole -n 10 true (process tree, user + system): "
        + ", ".join(f"{tool} {statistics.median(fixed_cpu[tool]):.3f} s" for tool in fixed_cpu)
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
