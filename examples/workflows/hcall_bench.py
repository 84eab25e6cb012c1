#!/usr/bin/env python3
"""Stand-in for a hypercall latency micro-benchmark (seed 000).

Prints the raw "TSC cycles" of each of ``--calls`` calls, one per line::

    xen_version: 440 cycles

The numbers mimic what a TSC read around a ``xen_version()`` hypercall
gives: a centre per CPU ("host"), guest mode and variant (taken from the
seed write-up), quantized to the TSC's step on that CPU, normal jitter of
about one step, and ``--outliers`` wild values (an interrupt landing in
the timed region) at 3 to 8 times the centre.

``--format plain`` prints bare numbers instead, ready for ``ministat``:

    hcall_bench.py --host milan --mode pv64 --variant before --format plain \
        > milan-hcall-pv64-before

``--seed`` makes the output reproducible; without it every run differs.
``--log FILE`` appends the values to FILE as well (what a test compares
abstat's stored samples with).
"""
from __future__ import annotations

import argparse
import random
import sys

# (host, mode) -> (centre before, centre after, quantum), in TSC cycles.
PROFILES: dict[tuple[str, str], tuple[int, int, int]] = {
    ("milan", "pv64"): (440, 380, 20),
    ("milan", "pv32"): (1980, 1760, 20),
    ("naples", "pv64"): (315, 252, 21),
    ("naples", "pv32"): (1260, 1239, 21),
    ("cflr", "pv64"): (792, 756, 18),
    ("cflr", "pv32"): (2198, 2160, 18),
}


def cycles(host: str, mode: str, variant: str, calls: int, outliers: int, rng: random.Random) -> list[int]:
    before, after, quantum = PROFILES[(host, mode)]
    centre = before if variant == "before" else after
    values = [centre + quantum * round(rng.gauss(0.0, 1.0)) for _ in range(calls)]
    for index in rng.sample(range(calls), min(outliers, calls)):
        values[index] = quantum * round(centre * rng.uniform(3.0, 8.0) / quantum)
    return values


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", required=True, choices=sorted({h for h, _ in PROFILES}))
    parser.add_argument("--mode", required=True, choices=("pv64", "pv32"))
    parser.add_argument("--variant", required=True, choices=("before", "after"))
    parser.add_argument("--calls", type=int, default=98)
    parser.add_argument("--outliers", type=int, default=2, help="wild values among the calls")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--format", choices=("text", "plain"), default="text")
    parser.add_argument("--log", metavar="FILE", help="also append the values to FILE, one per line")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    values = cycles(args.host, args.mode, args.variant, args.calls, args.outliers, rng)
    if args.log:
        with open(args.log, "a", encoding="ascii") as handle:
            handle.write("".join(f"{v}\n" for v in values))
    if args.format == "plain":
        sys.stdout.write("".join(f"{v}\n" for v in values))
    else:
        sys.stdout.write(f"# hcall bench: host {args.host}, mode {args.mode}, {args.variant}\n")
        sys.stdout.write("".join(f"xen_version: {v} cycles\n" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
