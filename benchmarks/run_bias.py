#!/usr/bin/env python3
"""Where `abstat run`'s bias against hyperfine comes from (issue 26, item 8): CPU work between runs.

A minimal measuring loop (abstat's own ``spawn`` and ``os.wait4``, timestamps as the executor
takes them) is run with ``--busy`` ms of CPU work between runs (what abstat's bookkeeping costs:
rusage, output, the store's commit), and before the first timestamp either nothing
(``plain``), ``sched_yield`` (``yield``), a sleep of N ms (``sleepN``), or what the executor
does now (``settle``: a 0.25 ms sleep when every CPU has a runnable task, else a
yield).  Each round runs hyperfine -N and every mode, alternating the order; printed: the
median measured time of each, the paired difference to hyperfine's (median over rounds) and the
time per run (start to start), with the load average.

    python benchmarks/run_bias.py [--rounds 8] [--runs 200] [--busy 1] [--modes plain,yield,settle]
                                  [-- COMMAND...]   (default: true)

On an idle machine every mode reads as hyperfine does; the differences appear under load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
LOOP = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from abstat.box.runner.executor import settle
from abstat.box.runner.process import resolve, spawn
mode, runs, busy, command = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) / 1e3, sys.argv[5:]
sink = os.open(os.devnull, os.O_WRONLY)
env = {key.encode(): value.encode() for key, value in os.environ.items()}
path, walls = resolve(command[0]), []
begun = time.perf_counter()
for _ in range(runs + 1):
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        pass
    if mode == "yield":
        os.sched_yield()
    elif mode == "settle":
        settle()
    elif mode.startswith("sleep"):
        time.sleep(float(mode[5:]) / 1e3)
    start = time.perf_counter_ns()
    pid = spawn(command, env, sink, sink, path)
    os.wait4(pid, 0)
    walls.append((time.perf_counter_ns() - start) / 1e6)
print(json.dumps({"walls": walls[1:], "cycle": (time.perf_counter() - begun) / (runs + 1) * 1e3}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--busy", type=float, default=1.0, help="ms of CPU work between runs")
    parser.add_argument("--modes", default="plain,yield,sleep0.25,settle")
    parser.add_argument("command", nargs="*", default=["true"])
    args = parser.parse_args()
    modes = args.modes.split(",")
    medians: dict[str, list[float]] = {}
    cycles: dict[str, list[float]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as work:
        export = os.path.join(work, "hyperfine.json")
        for index in range(args.rounds):
            tools = ["hyperfine", *modes]
            for tool in tools if index % 2 == 0 else tools[::-1]:
                if tool == "hyperfine":
                    begun = time.perf_counter()
                    subprocess.run(
                        [
                            "hyperfine",
                            "-N",
                            "--style",
                            "none",
                            "--warmup",
                            "1",
                            "--runs",
                            str(args.runs),
                            "--export-json",
                            export,
                            " ".join(args.command),
                        ],
                        check=True,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    cycle = (time.perf_counter() - begun) / (args.runs + 1) * 1e3  # its start-up included
                    with open(export) as handle:
                        walls = [t * 1e3 for t in json.load(handle)["results"][0]["times"]]
                else:
                    out = subprocess.run(
                        [sys.executable, "-c", LOOP, SRC, tool, str(args.runs), str(args.busy), *args.command],
                        check=True,
                        capture_output=True,
                        text=True,
                    ).stdout
                    found = json.loads(out)
                    walls, cycle = found["walls"], found["cycle"]
                medians.setdefault(tool, []).append(statistics.median(walls))
                cycles.setdefault(tool, []).append(cycle)
            loads.append(os.getloadavg()[0])
    print(
        f"{' '.join(args.command)}: {args.rounds} rounds of {args.runs} runs, {args.busy:g} ms of CPU between runs; "
        f"load average {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} CPUs"
    )
    anchor = medians["hyperfine"]
    for tool, values in medians.items():
        paired = statistics.median(a - b for a, b in zip(values, anchor))
        above = sum(a > b for a, b in zip(values, anchor))
        print(
            f"  {tool:<10} measured {statistics.median(values):.3f} ms, paired {paired:+.3f} ms vs hyperfine "
            f"(above in {above}/{args.rounds}); time per run {statistics.median(cycles[tool]):.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
