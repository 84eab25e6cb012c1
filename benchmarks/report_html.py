"""CPU of ``abstat report --format html`` against ``--format markdown`` (issue 14).

Writes ROWS x 2 sample files (before/after per host and mode, 30 samples
each: the seeds' shape), half of them TSC-like quantized integers and half
distinct values, then runs the same ``abstat report`` command in a child
process with ``--format markdown`` and ``--format html`` and compares the
children's CPU time (user + system).  Target: html <= 3x markdown, with a
plot for every compared cell (checked: one ``<svg`` per row).

    python benchmarks/report_html.py [--rows 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def child_cpu(argv: list[str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=SRC)
    subprocess.run([sys.executable, "-m", "abstat", *argv], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_files(directory: str, rows: int, n: int) -> list[str]:
    rng = random.Random(0)
    names = []
    for row in range(rows):
        host, mode = f"h{row // 10:03d}", f"m{row % 10}"
        quantized = row % 2 == 0
        for variant, centre in (("before", 440.0), ("after", 425.0)):
            values = [rng.gauss(centre, 7) for _ in range(n)]
            if quantized:
                values = [round(v / 20) * 20 for v in values]
            name = f"{host}-{mode}-{variant}"
            with open(os.path.join(directory, name), "w") as handle:
                handle.write("\n".join(f"{v:g}" for v in values) + "\n")
            names.append(name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200, help="table rows (cells = 2 x rows; default 200)")
    parser.add_argument("--samples", type=int, default=30, help="samples per cell (default 30)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each format; the minimum counts")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="abstat-bench-") as directory:
        names = write_files(directory, args.rows, args.samples)
        common = ["report", "--pattern", "{host}-{mode}-{variant}", *names]
        cpu = {}
        for fmt in ("markdown", "html"):
            out = os.path.join(directory, f"out.{fmt}")
            cpu[fmt] = min(child_cpu([*common, "--format", fmt, "-o", out], directory) for _ in range(args.repeat))
        with open(os.path.join(directory, "out.html"), encoding="utf-8") as handle:
            plots = handle.read().count("<svg")
    ratio = cpu["html"] / cpu["markdown"]
    print(f"cells {2 * args.rows} ({args.rows} compared, {args.samples} samples each), plots {plots}")
    print(
        f"markdown CPU {cpu['markdown']:.2f} s   html CPU {cpu['html']:.2f} s   "
        f"per plot {(cpu['html'] - cpu['markdown']) / max(plots, 1) * 1e3:.2f} ms"
    )
    print(f"ratio html/markdown {ratio:.2f}  (target <= 3)  {'OK' if ratio <= 3 and plots == args.rows else 'FAIL'}")
    return 0 if ratio <= 3 and plots == args.rows else 1


if __name__ == "__main__":
    sys.exit(main())
