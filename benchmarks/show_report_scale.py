"""``abstat show`` and ``abstat report`` on a 20,000-run experiment.

Anchor, same run: a Python process that reads the same runs with sqlite3
and computes each variant's median (``statistics.median``) -- the least any
summary of the store must do.  A throw-away store gets 20,000 runs (two
variants interleaved, one sample of one metric per run, one invocation);
each command's wall time is the median of several interleaved runs.
Target (issue 14): show and report each <= 5x the anchor.

    python benchmarks/show_report_scale.py [--runs-stored 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

EXPERIMENT = "scale"
ANCHOR = """
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
values = {}
for variant, value in db.execute(
        "SELECT v.name, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
        " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
        " WHERE e.name = ? AND r.status = 'ok'", (sys.argv[2],)):
    values.setdefault(variant, []).append(value)
for variant, numbers in values.items():
    print(variant, len(numbers), statistics.median(numbers))
"""


def fill_store(path: str, runs: int) -> None:
    import random

    from abstat.box.machine import collect
    from abstat.store import open_store

    rng = random.Random(runs)
    with open_store(path) as store:
        store.db.execute("PRAGMA synchronous = OFF")
        invocation = store.start_invocation(EXPERIMENT, collect(), variants=("base", "new"))
        for position in range(runs):
            variant = ("base", "new")[position % 2]
            value = rng.gauss(1000.0 if variant == "base" else 990.0, 20.0)
            store.add_run(
                invocation,
                variant=variant,
                command=f"./bench {variant}",
                iteration=position // 2,
                position=position,
                status="ok",
                exit_code=0,
                started_at=0.0,
                wall=0.01,
                values={"time": [value]},
                units={"time": "s"},
            )
        store.finish_invocation(invocation, "ok")


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-stored", type=int, default=20_000, help="runs in the experiment (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each command (default 3)")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="abstat-scale-")
    try:
        store = os.path.join(work, "abstat.db")
        started = time.perf_counter()
        fill_store(store, options.runs_stored)
        print(f"stored {options.runs_stored} runs in {time.perf_counter() - started:.1f} s")
        abstat = [sys.executable, "-m", "abstat"]
        commands = {
            "anchor (sqlite3 + medians)": [sys.executable, "-c", ANCHOR, store, EXPERIMENT],
            "abstat show": [*abstat, "show", "--store", store, EXPERIMENT],
            "abstat report": [*abstat, "report", "--store", store, "--where", f"experiment={EXPERIMENT}"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # warm
        for _ in range(options.repeat):
            for name, command in commands.items():
                times[name].append(_wall(command))
        anchor = _median(times["anchor (sqlite3 + medians)"])
        ok = True
        for name in commands:
            wall = _median(times[name])
            ratio = wall / anchor
            verdict = (
                ""
                if name.startswith("anchor")
                else f"  {ratio:5.2f}x (target <= 5x) {'ok' if ratio <= 5 else 'MISSED'}"
            )
            ok = ok and (name.startswith("anchor") or ratio <= 5)
            print(f"{name:<28} {wall:7.3f} s{verdict}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
