"""Wall-time spread of a CPU-bound command without ``--cpus``, with it, and with ``--cpus --isolate`` (as root,
on the cgroup v1 cpuset hierarchy), under a background load, through the real ``abstat run``: does
confining the measured command to one CPU, or giving it that CPU alone, steady it?

    python benchmarks/isolation.py [--runs 40] [--rounds 3] [--load 2]

Each round runs three experiments of the same command: without ``--cpus``, with ``--cpus`` (the last CPU), and
with ``--cpus --isolate`` where it can (else it says why not),
with ``--load`` busy loops started as ``--background`` loads, and prints each one's median and spread
(interquartile range / median, and the 5-95% range / median) from the stored wall times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = f"{sys.executable} -c 'sum(i * i for i in range(300000))'"
LOAD = f"{sys.executable} -c 'while True: pass'"


def walls(store: str, experiment: str) -> np.ndarray:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from abstat.store import open_store

    handle = open_store(store)
    try:
        groups = handle.groups_by_metric(experiment)
    finally:
        handle.close()
    return np.array([v for runs in groups["wall"].values() for run in runs for v in run])


def one(store: str, name: str, runs: int, load: int, cpus: str | None, isolate: bool = False) -> np.ndarray:
    args = [
        sys.executable,
        "-m",
        "abstat",
        "run",
        "-n",
        str(runs),
        "--store",
        store,
        "--experiment",
        name,
        "--no-progress",
        "--shell",
        "-v",
        f"work={WORK}",
    ]
    args += [item for _ in range(load) for item in ("--background", LOAD)]
    if cpus is not None:
        args += ["--cpus", cpus]
    if isolate:
        args += ["--isolate"]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    subprocess.run(args, check=True, capture_output=True, env=env)
    return walls(store, name)


def spread(values: np.ndarray) -> str:
    q05, q25, q50, q75, q95 = np.percentile(values, [5, 25, 50, 75, 95])
    return (
        f"median {q50 * 1e3:7.1f} ms  IQR/median {100 * (q75 - q25) / q50:5.1f}%  "
        f"5-95%/median {100 * (q95 - q05) / q50:5.1f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load", type=int, default=2)
    args = parser.parse_args()
    cpu = str(max(os.sched_getaffinity(0)))
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from abstat.box.isolate import isolation_problem

    why_not = isolation_problem([int(cpu)])
    print(f"load average {os.getloadavg()[0]:.1f} before; {args.load} busy loops as --background; --cpus {cpu}")
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "iso.db")
        for round_ in range(args.rounds):
            free = one(store, f"free{round_}", args.runs, args.load, None)
            pinned = one(store, f"pinned{round_}", args.runs, args.load, cpu)
            print(f"round {round_ + 1}  without --cpus: {spread(free)}")
            print(f"         with --cpus {cpu}: {spread(pinned)}")
            if why_not is None:
                isolated = one(store, f"isolated{round_}", args.runs, args.load, cpu, isolate=True)
                print(f"         with --cpus {cpu} --isolate: {spread(isolated)}")
    if why_not is not None:
        print(f"--isolate not measured: {why_not}")


if __name__ == "__main__":
    main()
