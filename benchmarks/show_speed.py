"""``abstat show`` and ``abstat report`` on a large experiment (issue 14).

Builds a throw-away store with one experiment of ``--runs`` runs (two
variants, one ``wall`` sample each, log-normal), then times, in the same
run, ``abstat show EXP`` and ``abstat report --store S`` against the anchor:
reading the same samples with ``sqlite3`` and computing each variant's
median (a fresh interpreter each, CPU and wall, medians of ``--reps``).
Target: <= 5x; and <= 3x the same script computing the medians with numpy (issue 42), whose
ratios the last two columns give.

    python benchmarks/show_speed.py                # 20,000 runs
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
sys.path.insert(0, SRC)

from compare_speed import run_timed  # noqa: E402  (same directory)

TARGET = 5.0
ANCHOR = """
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT v.name, s.value FROM samples s JOIN runs r ON r.id = s.run_id "
                  "JOIN variants v ON v.id = r.variant_id WHERE s.metric = 'wall'").fetchall()
groups = {}
for name, value in rows:
    groups.setdefault(name, []).append(value)
print({name: statistics.median(values) for name, values in groups.items()})
"""
ANCHOR_NUMPY = ANCHOR.replace("import sqlite3, statistics, sys", "import sqlite3, sys\nimport numpy").replace(
    "statistics.median(values)", "float(numpy.median(values))"
)
TARGET_NUMPY = 3.0


def build(path: str, runs: int) -> None:
    from abstat.store import open_store

    rng = np.random.default_rng(1)
    store = open_store(path)
    invocation = store.start_invocation("big", {"hostname": "bench"}, variants=("before", "after"))
    store.db.execute("PRAGMA synchronous = OFF")  # only for building the benchmark's input
    for i in range(runs):
        variant = "before" if i % 2 == 0 else "after"
        wall = float(rng.lognormal(0.0 if variant == "before" else 0.01, 0.1))
        store.add_run(
            invocation,
            variant=variant,
            command="true",
            iteration=i // 2,
            position=i % 2,
            status="ok",
            exit_code=0,
            started_at=float(i),
            wall=wall,
            values={"wall": [wall]},
        )
    store.finish_invocation(invocation, "ok")
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "big.db")
        build(store, args.runs)
        env = dict(os.environ, PYTHONPATH=SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        commands = {
            "anchor": [sys.executable, "-c", ANCHOR, store],
            "anchor, numpy": [sys.executable, "-c", ANCHOR_NUMPY, store],
            "abstat show big": [sys.executable, "-m", "abstat", "show", "--store", store, "big"],
            "abstat report": [sys.executable, "-m", "abstat", "report", "--store", store],
        }
        for argv in commands.values():
            run_timed(argv, env)  # bytecode, page cache
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.reps):
            for name, argv in commands.items():
                results[name].append(run_timed(argv, env))
    medians = {
        name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)) for name, rs in results.items()
    }
    anchor_wall, anchor_cpu = medians["anchor"]
    numpy_wall, numpy_cpu = medians["anchor, numpy"]
    print(f"| command, {args.runs:,} runs | wall | CPU | wall ratio | CPU ratio | numpy anchor: wall | CPU |")
    print("|---|---|---|---|---|---|---|")
    for name, (wall, cpu) in medians.items():
        print(
            f"| {name} | {wall * 1e3:.0f} ms | {cpu * 1e3:.0f} ms | {wall / anchor_wall:.2f} | {cpu / anchor_cpu:.2f} |"
            f" {wall / numpy_wall:.2f} | {cpu / numpy_cpu:.2f} |"
        )
        if name.startswith("abstat") and (wall / anchor_wall > TARGET or wall / numpy_wall > TARGET_NUMPY):
            failed.append(name)
    for name in failed:
        print(f"MISSED TARGET: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
