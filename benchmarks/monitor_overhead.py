"""What ``--monitor`` costs per run, per monitor, against an anchor measured in the same run.

One executor without monitors (the anchor) and one per monitor (and one with all of them) run ``true``
in rounds: every round runs each executor once, in a shuffled order, so that the load of the machine
falls on all of them alike.  Per round, each executor's cost is the time of its whole ``measure`` call
(spawn, wait, the monitors' readings before and after, parsing, storing) as

- ``cpu``: abstat's own CPU time (user + system of this process, the command's excluded), the part that
  does not depend on how loaded the machine is, and
- ``wall``: elapsed time, which on a loaded machine also holds the time waited for a CPU;

and the overhead is the paired difference monitor minus anchor per round: its mean with a 95% interval
(t over rounds), divided by the number of monitors for the row with all of them.  Target (issue 41): at
most 0.2 ms per run per monitor.

    python benchmarks/monitor_overhead.py [--rounds 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from abstat.box.runner import monitor  # noqa: E402
from abstat.box.runner.executor import ProcessExecutor  # noqa: E402
from abstat.box.runner.model import Command, RunContext  # noqa: E402

TARGET_MS = 0.2
T_975 = 1.96  # rounds are many: the normal quantile


def _readable(name: str) -> bool:
    try:
        monitor.check((name,))
    except ValueError:
        return False
    return True


def _executor(names: tuple[str, ...]) -> ProcessExecutor:
    collectors = [monitor.MonitorCollector(names)] if names else []
    return ProcessExecutor(collectors=collectors, subreaper=False, cgroups=False)


def _one(executor: ProcessExecutor, command: Command, context: RunContext) -> tuple[float, float]:
    """(cpu ms, wall ms) of one measured run."""
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    measured = executor.measure(command, context, timeout=30)
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    if not measured.ok:
        raise SystemExit(f"'true' failed: {measured.notes}")
    return cpu / 1e6, wall / 1e6


def _interval(differences: list[float], per: int) -> tuple[float, float, float]:
    mean = statistics.fmean(differences) / per
    half = T_975 * statistics.stdev(differences) / len(differences) ** 0.5 / per
    return mean, mean - half, mean + half


def measure(conditions: dict[str, tuple[str, ...]], rounds: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    """Per condition, (cpu ms, wall ms) per round; the anchor is the condition ``none``."""
    rng = random.Random(seed)
    executors = {label: _executor(names) for label, names in conditions.items()}
    command = Command("true", False)
    costs: dict[str, list[tuple[float, float]]] = {label: [] for label in conditions}
    try:
        for label, executor in executors.items():  # warm up: paths resolved, files opened, caches filled
            for _ in range(20):
                _one(executor, command, RunContext(label, 0))
        order = list(conditions)
        for index in range(rounds):
            rng.shuffle(order)
            for label in order:
                costs[label].append(_one(executors[label], command, RunContext(label, index)))
    finally:
        for executor in executors.values():
            executor.close()
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    available = tuple(name for name in monitor.MONITORS if _readable(name))
    conditions: dict[str, tuple[str, ...]] = {"none": ()}
    conditions.update({name: (name,) for name in available})
    conditions["all"] = available
    load = os.getloadavg()[0]
    costs = measure(conditions, args.rounds, args.seed)
    print(
        f"load average {load:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.rounds} rounds "
        f"of 'true' per executor, interleaved; monitors here: {', '.join(available)}"
    )
    anchor = costs["none"]
    print(
        f"anchor (no monitor): cpu {statistics.fmean(c for c, _ in anchor):.3f} ms, "
        f"wall {statistics.fmean(w for _, w in anchor):.3f} ms per run (means)"
    )
    print(
        f"{'monitor':<11} {'cpu ratio':>9} {'cpu added per monitor [95%]':>30} "
        f"{'wall ratio':>10} {'wall added per monitor [95%]':>31}  within {TARGET_MS} ms (cpu)"
    )
    for label, names in conditions.items():
        if label == "none":
            continue
        per = len(names)
        rows = costs[label]
        cells = []
        for part in (0, 1):
            ratio = statistics.fmean(r[part] for r in rows) / statistics.fmean(a[part] for a in anchor)
            mean, low, high = _interval([r[part] - a[part] for r, a in zip(rows, anchor, strict=True)], per)
            cells.append(f"{ratio:>9.3f} {mean:>+9.4f} ms [{low:+.4f}, {high:+.4f}]")
        _, _, cpu_high = _interval([r[0] - a[0] for r, a in zip(rows, anchor, strict=True)], per)
        print(
            f"{label + ('/' + str(per) if per > 1 else ''):<11} {cells[0]} {cells[1]}  "
            f"{'yes' if cpu_high <= TARGET_MS else 'NO'}"
        )


if __name__ == "__main__":
    main()
