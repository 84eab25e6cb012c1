"""Start-up of ``abstat plan`` on a pasted report against ``python -c "import numpy"`` (issue 26).

A ministat report pasted into a mail gives each side's N, Avg and Stddev;
``abstat plan`` takes them as ``NAME=n:mean:stddev``.  Its whole run (parse,
plan, print) is timed in a fresh interpreter, alternating with the anchor
``python -c "import numpy"`` so that the machine's load falls on both alike,
with abstat's bytecode cached as in an installed package.  Also timed: the
same plan from two sample files of 100 values (the default estimand).
Target: wall time <= 2x the anchor's (medians of ``--reps`` runs).  Exit 1
when missed.

    python benchmarks/plan_startup.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
TARGET = 2.0
# seed 000's naples pv32 block, pasted: N, Avg, Stddev of each side
PASTED = ["before=98:1276.2857:42.913483", "after=95:1250.9368:52.491298"]


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        files = []
        import numpy as np

        rng = np.random.default_rng(1)
        for name, mean in (("a", 1000.0), ("b", 1005.0)):
            path = os.path.join(tmp, f"{name}.txt")
            np.savetxt(path, rng.normal(mean, 10.0, 100))
            files.append(path)
        anchor = [sys.executable, "-c", "import numpy"]
        cases = [
            ("pasted report (n:mean:stddev)", [sys.executable, "-m", "abstat", "plan", *PASTED]),
            ("two sample files of 100", [sys.executable, "-m", "abstat", "plan", *files]),
        ]
        print('| plan input | abstat plan wall (median) | `python -c "import numpy"` wall | ratio |')
        print("|---|---|---|---|")
        for label, command in cases:
            wall(command, env)  # writes the bytecode
            ours, theirs = [], []
            for _ in range(args.reps):
                theirs.append(wall(anchor, env))
                ours.append(wall(command, env))
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"| {label} | {a * 1e3:.0f} ms | {b * 1e3:.0f} ms | {a / b:.2f} |")
            if label.startswith("pasted") and a / b > TARGET:
                failed = True
    if failed:
        print(f"MISSED TARGET: plan on a pasted report above {TARGET}x the numpy import")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
