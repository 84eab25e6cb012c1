"""Start-up of ``abstat audit`` on a pasted report against ``python -c "import numpy"``.

The input is the seed write-up's pasted ministat blocks
(``tests/data/audit/xen-hypercall-ministat.txt``: 4 machines x 2 modes,
each re-judged with Welch's t and the power figures).  Both commands run
in fresh interpreters, alternately, with abstat's bytecode cached as for
an installed package; the script prints the medians of wall and CPU time,
their ratio, and the heaviest imports of one audit (``-X importtime``),
naming scipy if it is among them.
Target (issue 26): <= 2x the anchor's wall time.

    python benchmarks/audit_startup.py [--reps 15] [FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SRC = os.path.join(HERE, "..", "src")
INPUT = os.path.join(HERE, "..", "tests", "data", "audit", "xen-hypercall-ministat.txt")
TARGET = 2.0


def run_timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) of one run; audit's own exit status
    (1: a block is inconsistent) is its verdict, not a failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(ours: list[str], anchor: list[str], reps: int, env: dict[str, str]) -> tuple[float, ...]:
    runs: dict[str, list[tuple[float, float]]] = {"ours": [], "anchor": []}
    for _ in range(reps):
        runs["anchor"].append(run_timed(anchor, env))
        runs["ours"].append(run_timed(ours, env))
    return tuple(statistics.median(r[i] for r in runs[k]) for k in ("ours", "anchor") for i in (0, 1))


def heaviest_imports(argv: list[str], env: dict[str, str], count: int = 6) -> list[tuple[float, str]]:
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True)
    found = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            found.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    top = [entry for entry in found if not entry[1].startswith("   ")]  # top-level imports only
    return sorted(top, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=INPUT)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = [sys.executable, "-m", "abstat", "audit", args.file]
        anchor = [sys.executable, "-c", "import numpy"]
        run_timed(command, env)  # writes the bytecode
        wall, cpu, anchor_wall, anchor_cpu = interleaved(command, anchor, args.reps, env)
        imports = heaviest_imports(command, env)
    ratio = wall / anchor_wall
    print(
        '| command | wall (median) | CPU (median) | anchor `python -c "import numpy"` wall, CPU '
        "| wall ratio | CPU ratio |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| `abstat audit {os.path.basename(args.file)}` | {wall * 1e3:.0f} ms | {cpu * 1e3:.0f} ms | "
        f"{anchor_wall * 1e3:.0f} ms, {anchor_cpu * 1e3:.0f} ms | {ratio:.2f} | {cpu / anchor_cpu:.2f} |"
    )
    print(
        "heaviest top-level imports: "
        + ", ".join(f"{name.strip()} {seconds * 1e3:.0f} ms" for seconds, name in imports)
    )
    if any(name.strip().startswith("scipy") for _, name in imports):
        print("scipy is imported on this path")
    print(f"target <= {TARGET}x: {'met' if ratio <= TARGET else 'MISSED'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
