#!/usr/bin/env python3
"""Stand-in for "make -j N" of a hypervisor (seed 002), and its "make clean".

    build_standin.py --variant unlatched --out build/   # the build
    build_standin.py --clean --out build/               # make clean

The build "compiles" ``--units`` translation units with ``--jobs`` worker
processes; each worker does real CPU work (SHA-256 rounds; the variant
scales the amount as the patch under test would) and writes ``UNIT.o``.
Like make, it only rebuilds missing objects: without a clean step between
runs, every run after the first does nothing.  It ends with the line

    compiled 4 objects

so ``--metric 'objects=compiled (\\d+) objects'`` shows whether each
measured run really built everything, and then its own CPU time (itself
and its workers, from getrusage) for comparison with what abstat measured::

    cpu user 0.251234 s, system 0.020113 s
"""
from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys

# Work per variant, relative to Unpatched (the seed's elapsed-time ratios).
WORK = {"Unpatched": 1.0, "latched": 0.975, "unlatched": 0.953}


def compile_unit(path: str, rounds: int) -> None:
    digest = path.encode()
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()
    temporary = path + ".tmp"
    with open(temporary, "wb") as handle:
        handle.write(digest * 256)  # 8 KiB "object file"
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def build(out: str, variant: str, units: int, jobs: int, rounds: int) -> int:
    os.makedirs(out, exist_ok=True)
    todo = [os.path.join(out, f"unit{i}.o") for i in range(units)]
    todo = [path for path in todo if not os.path.exists(path)]
    if not todo:
        print("make: Nothing to be done for 'all'.")
    scaled = int(rounds * WORK[variant])
    running: list[subprocess.Popen[bytes]] = []
    for path in todo:
        if len(running) >= jobs:
            if running.pop(0).wait() != 0:
                return 1
        print(f"  CC      {os.path.basename(path)}", flush=True)
        running.append(subprocess.Popen(
            [sys.executable, __file__, "--out", out, "--compile", path, "--rounds", str(scaled)]))
    if any(process.wait() != 0 for process in running):
        return 1
    print(f"compiled {len(todo)} objects")
    # CPU time of this build and every worker, as the build itself sees it.
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"cpu user {own.ru_utime + workers.ru_utime:.6f} s, system {own.ru_stime + workers.ru_stime:.6f} s")
    return 0


def clean(out: str) -> int:
    removed = 0
    if os.path.isdir(out):
        for name in os.listdir(out):
            if name.endswith(".o"):
                os.unlink(os.path.join(out, name))
                removed += 1
    print(f"removed {removed} objects")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="build directory")
    parser.add_argument("--variant", choices=sorted(WORK), default="Unpatched")
    parser.add_argument("--units", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=60000, help="SHA-256 rounds per unit (Unpatched)")
    parser.add_argument("--clean", action="store_true", help="remove the objects (make clean)")
    parser.add_argument("--compile", metavar="OBJECT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile:
        compile_unit(args.compile, args.rounds)
        return 0
    if args.clean:
        return clean(args.out)
    return build(args.out, args.variant, args.units, args.jobs, args.rounds)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
