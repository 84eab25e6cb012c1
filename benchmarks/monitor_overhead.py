"""What ``--monitor`` costs per run: each monitor's two readings (before and after a run), and the time per
run of ``true`` through the executor with that monitor against the same executor without one, in
alternating rounds of one process.  Target: at most 0.2 ms per run per monitor (issue 41).

    python benchmarks/monitor_overhead.py [--runs 300] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from abstat.box.runner import monitor  # noqa: E402
from abstat.box.runner.executor import ProcessExecutor  # noqa: E402
from abstat.box.runner.model import Command, RunContext  # noqa: E402


def readings_ms(name: str, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        monitor.snapshot(name)
        monitor.snapshot(name)
    return (time.perf_counter() - start) / repeat * 1e3


def per_run_ms(names: tuple[str, ...], runs: int) -> float:
    collectors = [monitor.MonitorCollector(names)] if names else []
    executor = ProcessExecutor(collectors=collectors, subreaper=False, cgroups=False)
    command, context = Command("true", False), RunContext("a", 0)
    try:
        start = time.perf_counter()
        for _ in range(runs):
            executor.measure(command, context, timeout=30)
        return (time.perf_counter() - start) / runs * 1e3
    finally:
        executor.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    available = [name for name in monitor.MONITORS if _readable(name)]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; monitors here: {', '.join(available)}")
    print(f"{'monitor':<12} {'2 readings':>11} {'run with':>9} {'run without':>12} {'ratio':>6} {'added':>8}")
    for name in available:
        reading = statistics.median(readings_ms(name, 200) for _ in range(args.rounds))
        pairs = [(per_run_ms((name,), args.runs), per_run_ms((), args.runs)) for _ in range(args.rounds)]
        with_m = statistics.median(p[0] for p in pairs)
        without = statistics.median(p[1] for p in pairs)
        added = statistics.median(p[0] - p[1] for p in pairs)
        print(f"{name:<12} {reading:>8.3f} ms {with_m:>6.3f} ms {without:>9.3f} ms {with_m / without:>6.2f} "
              f"{added:>+5.3f} ms")


def _readable(name: str) -> bool:
    try:
        monitor.check((name,))
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    main()
