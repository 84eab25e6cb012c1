#!/usr/bin/env python3
"""abstat's measured wall time against hyperfine -N, in the same script.

Measures ``sleep 0.05`` and ``true`` with hyperfine -N and with abstat's
process executor (the code ``abstat run`` measures with) in many short,
alternating rounds, so the drift and bursts of a noisy machine hit both
tools alike, and prints:

- each tool's median wall time over all rounds, their difference and
  ratio; the median of the per-round differences of medians ("paired",
  the drift-cancelling estimate the 0.5 ms target is checked on: on a
  loaded 2-CPU machine the pooled medians move by milliseconds between
  identical runs); and the difference of the 10th percentiles;
- abstat's own overhead per run in a real ``abstat run`` invocation: the
  time from the end of one measured run to the start of the next
  (scheduling, rusage, metric extraction, the SQLite commit, the progress
  line), from the stored run start times.

With ``--baseline-src DIR`` (another abstat's ``src``, e.g. a worktree of
an older commit), the between-run overhead of ``abstat run`` is also measured
for both, alternating in ``--cli-rounds`` rounds of 50 runs, and the
medians, their ratio and the median of the per-round differences are printed.

Usage: python benchmarks/runner_overhead.py [--rounds 80] [--runs 3] [--baseline-src DIR]
Needs ``hyperfine`` (Debian package) on PATH.  Exit status 1 when the
target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

from abstat.box.runner import Command, ProcessExecutor, RunContext

COMMANDS = {"sleep": "sleep 0.05", "true": "true"}
TARGET_MS = 0.5


def run_hyperfine(text: str, runs: int, workdir: str) -> list[float]:
    export = os.path.join(workdir, "hyperfine.json")
    subprocess.run(
        ["hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(runs), "--export-json", export, text],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with open(export) as handle:
        return list(json.load(handle)["results"][0]["times"])


def run_abstat(executor: ProcessExecutor, name: str, text: str, runs: int) -> list[float]:
    command = Command(text)
    executor.measure(command, RunContext(name, 0, True), timeout=None)  # warm-up, like hyperfine's
    values = []
    for i in range(runs):
        measurement = executor.measure(command, RunContext(name, i), timeout=None)
        assert measurement.ok, measurement.notes
        values.append(measurement.wall_s)
    return values


def cli_overhead_per_run(workdir: str, runs: int, src: str | None = None) -> list[float]:
    """Gaps between the end of one run and the start of the next in a real `abstat run`
    (of the abstat in ``src`` when given)."""
    fd, store = tempfile.mkstemp(prefix="overhead-", suffix=".db", dir=workdir)
    os.close(fd)
    os.unlink(store)
    argv = [
        sys.executable,
        "-m",
        "abstat",
        "run",
        "-n",
        str(runs),
        "--store",
        store,
        "--no-progress",
        "--format",
        "csv",
    ]
    for name, command in COMMANDS.items():
        argv += ["-v", f"{name}={command}"]
    env = dict(os.environ, PYTHONPATH=src) if src else None
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    db = sqlite3.connect(store)
    rows = db.execute("SELECT started_at, wall FROM runs ORDER BY position").fetchall()
    db.close()
    return [b[0] - a[0] - a[1] for a, b in zip(rows, rows[1:])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=80)
    parser.add_argument("--runs", type=int, default=3, help="runs per command, round and tool")
    parser.add_argument("--baseline-src", metavar="DIR", help="another abstat's src: pair abstat run's overhead")
    parser.add_argument("--cli-rounds", type=int, default=10, help="alternating rounds with --baseline-src")
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        print("hyperfine is not installed (apt-get install hyperfine)", file=sys.stderr)
        return 2
    version = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout.strip()
    tools = ("hyperfine", "abstat")
    samples = {tool: {name: [] for name in COMMANDS} for tool in tools}
    paired: dict[str, list[float]] = {name: [] for name in COMMANDS}
    executor = ProcessExecutor()
    try:
        with tempfile.TemporaryDirectory(prefix="abstat-bench-") as workdir:
            for round_index in range(args.rounds):
                for name, text in COMMANDS.items():
                    medians: dict[str, float] = {}
                    for tool in tools if round_index % 2 == 0 else tools[::-1]:
                        if tool == "hyperfine":
                            values = run_hyperfine(text, args.runs, workdir)
                        else:
                            values = run_abstat(executor, name, text, args.runs)
                        samples[tool][name].extend(values)
                        medians[tool] = statistics.median(values)
                    paired[name].append(medians["abstat"] - medians["hyperfine"])
            gaps = cli_overhead_per_run(workdir, 50)
            pairs = []
            if args.baseline_src:
                here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
                for round_index in range(args.cli_rounds):
                    order = (here, args.baseline_src) if round_index % 2 == 0 else (args.baseline_src, here)
                    medians = {src: statistics.median(cli_overhead_per_run(workdir, 50, src)) for src in order}
                    pairs.append((medians[here], medians[args.baseline_src]))
    finally:
        executor.close()
    print(
        f"runner overhead: {args.rounds} alternating rounds x {args.runs} runs per command and tool "
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs); anchor: {version} -N"
    )
    print(
        f"{'command':<11} {'hyperfine':>11} {'abstat':>11} {'difference':>11} {'ratio':>6} "
        f"{'paired diff':>12} {'p10 diff':>10}  target |paired diff| <= {TARGET_MS} ms"
    )
    missed = False
    for name, command in COMMANDS.items():
        h = statistics.median(samples["hyperfine"][name])
        a = statistics.median(samples["abstat"][name])
        diff_ms = (a - h) * 1e3
        pair_ms = statistics.median(paired[name]) * 1e3
        p10_ms = (
            statistics.quantiles(samples["abstat"][name], n=10)[0]
            - statistics.quantiles(samples["hyperfine"][name], n=10)[0]
        ) * 1e3
        ok = abs(pair_ms) <= TARGET_MS
        missed |= not ok
        print(
            f"{command:<11} {h * 1e3:>8.3f} ms {a * 1e3:>8.3f} ms {diff_ms:>+8.3f} ms {a / h:>6.3f} "
            f"{pair_ms:>+9.3f} ms {p10_ms:>+7.3f} ms  {'ok' if ok else 'MISSED'}"
        )
    print(
        f"abstat run's own overhead per run (end of a run to the start of the next, median of "
        f"{len(gaps)}): {statistics.median(gaps) * 1e3:.3f} ms (90th percentile "
        f"{statistics.quantiles(gaps, n=10)[-1] * 1e3:.3f} ms)"
    )
    if pairs:
        new = statistics.median(p[0] for p in pairs)
        old = statistics.median(p[1] for p in pairs)
        paired = statistics.median(p[0] - p[1] for p in pairs)
        print(
            f"abstat run's overhead per run, this abstat vs {args.baseline_src} ({len(pairs)} alternating rounds "
            f"of 50 runs, medians of the rounds' medians): {new * 1e3:.3f} ms vs {old * 1e3:.3f} ms, ratio "
            f"{new / old:.3f}, paired difference {paired * 1e3:+.3f} ms"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
