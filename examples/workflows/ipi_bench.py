#!/usr/bin/env python3
"""Stand-in for the kernel's ipi_benchmark module (seed 003).

Prints the five results of one benchmark run, in nanoseconds, in the
seed's text format (name, then the number)::

    Dry-run                 495181
    Self-IPI              21549999
    Normal IPI           575433727
    Broadcast IPI       1700692010
    Broadcast lock      1663001374

or, with ``--json``, one JSON object per line that ``abstat run`` reads
without any ``--metric``::

    {"dry-run": 495181, "self-ipi": 21549999, ...}

The centres are the seed's averages for the 2x2 design: ``--base``
(``with-4bd06060762b`` or ``without``) times ``--patch`` (``with`` or
``without``), with about 2% run-to-run noise.  On a base without
4bd06060762b the dry run and the broadcasts report 0, as in the seed.
``--log FILE`` appends the results to FILE as well, as a JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import sys

NAMES = ("Dry-run", "Self-IPI", "Normal IPI", "Broadcast IPI", "Broadcast lock")

# (base, patch) -> the seed's averages of 100 runs, in the order of NAMES.
CENTRES: dict[tuple[str, str], tuple[int, ...]] = {
    ("with-4bd06060762b", "with"): (495181, 21549999, 575433727, 1700692010, 1663001374),
    ("with-4bd06060762b", "without"): (607657, 21217644, 735015570, 2173803373, 2150451543),
    ("without", "with"): (0, 11352737, 499400218, 0, 0),
    ("without", "without"): (0, 10915950, 621712609, 0, 0),
}


def metric_key(name: str) -> str:
    """``Normal IPI`` -> ``normal-ipi`` (a valid abstat metric name)."""
    return name.lower().replace(" ", "-")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, choices=("with-4bd06060762b", "without"))
    parser.add_argument("--patch", required=True, choices=("with", "without"))
    parser.add_argument("--noise", type=float, default=0.02, help="relative run-to-run noise")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--log", metavar="FILE", help="also append the results to FILE as a JSON line")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    values = [round(c * rng.lognormvariate(0.0, args.noise)) for c in CENTRES[(args.base, args.patch)]]
    if args.log:
        with open(args.log, "a", encoding="ascii") as handle:
            handle.write(json.dumps({metric_key(n): v for n, v in zip(NAMES, values)}) + "\n")
    if args.json:
        print(json.dumps({metric_key(n): v for n, v in zip(NAMES, values)}))
    else:
        for name, value in zip(NAMES, values):
            print(f"{name:<16}{value:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
