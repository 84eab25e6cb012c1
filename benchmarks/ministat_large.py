"""``abstat ministat -A`` on two files of 10 million integer samples.

Anchor: Debian's ``ministat`` (package ``ministat``: ``apt-get install
ministat``) run on the same files in the same script.  Prints wall time and
peak memory of both (each program's own peak, through GNU time), their
ratios, and checks that the outputs are byte-identical.  The measurement is
``ministat_scale.py``'s, at one size and both data shapes.
Targets: time ratio <= 0.5, memory ratio <= 1.0.

    python benchmarks/ministat_large.py [--samples 10000000] [--runs 3] [--shapes distinct,tsc]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from ministat_scale import HEADER, run_case


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000, help="samples per file (default 10 million)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each program (default 3)")
    parser.add_argument("--shapes", default="distinct,tsc", help="distinct and/or tsc, comma-separated")
    options = parser.parse_args()
    reference = shutil.which("ministat") or ("/usr/bin/ministat" if os.path.exists("/usr/bin/ministat") else None)
    if reference is None:
        print("Debian's ministat is not installed: apt-get install ministat", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="abstat-large-")
    print(HEADER.format(runs=options.runs))
    try:
        results = [
            run_case(work, reference, options.samples, shape, options.runs) for shape in options.shapes.split(",")
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
