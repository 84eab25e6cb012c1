"""Start-up of the quick commands, and what each imports that it does not need (issue 42).

For each command below, run in fresh interpreters alternately with its anchor (abstat's bytecode
cached, as for an installed package), the script prints the medians of wall and CPU time, the
ratio to the anchor, and the modules of ``-X importtime`` the command must not import:

    abstat compare A B (2 x 100 values)   anchor python -c 'import numpy'   target <= 1.2x
    abstat ministat A B (2 x 100 values)  anchor python -c 'import numpy'   target <= 1.2x
    abstat ministat -A A B                anchor python -I -S -c pass       printed (issue: within 10 ms)
    abstat --help                         anchor python -I -S -c pass       printed (imports no numpy)

Forbidden imports: on the compare path numpy.random, numpy.ma, scipy, sqlite3 and the store (a
file comparison reads no store), argparse (inputs only), and the modules of options not given (--where,
--fail-on, CI formats); on ministat's, numpy and dataclasses too (the ministat path is the standard
library's, its grammar its own).  The load average is printed with each figure: quote the ratios.
Times are the whole process's, its exit included: after compare and ministat abstat's process freezes its
objects (``gc.freeze``, :data:`abstat.cli.FROZEN_AT_EXIT`) and its exit skips the collector's work on them,
which the anchor's exit (numpy's ~17,000 tracked objects) does.

    python benchmarks/startup.py [--reps 21] [--against OTHER/src] [--module]

abstat is started as the installed ``abstat`` command is: ``python scripts/abstat`` (the plain script pip
installs, which imports only ``sys`` before :mod:`abstat.cli`); ``--module`` starts ``python -m abstat``
instead, which also pays for runpy (it imports ``importlib.util``, ``contextlib``, ``collections``,
``functools``...: ~4-5 ms of CPU on this VM, all of it beyond ``ministat -A``'s own).
``--against`` times another tree's abstat (``git archive main src | tar -x -C /tmp/main``) in the same
alternation and prints its wall and CPU ratios to the anchor, and this tree's CPU time over its.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")
SCRIPT = os.path.join(ROOT, "scripts", "abstat")
TARGET = 1.2
COMPARE_FORBIDDEN = (
    "numpy.random",
    "numpy.ma",
    "scipy",
    "sqlite3",
    "abstat.store",
    "abstat.readers.peers",
    "abstat.readers.kernel",
    "shutil",  # argparse's formatter asks it for the width (and it imports bz2, lzma)
    "statistics",  # imports random, fractions, decimal
    "glob",
    "csv",
    "html",
    "abstat.cli.commands.where",  # --where only
    "abstat.report.gate",  # --fail-on only
    "abstat.render.ci_formats",  # --format github/gitlab only
    "argparse",  # inputs only: compare.DEFAULTS is the parser's namespace
    "abstat.cli.commands.compare_extra",  # --fail-on, --format github, peers' files
    "abstat.readers.kernel_formats",  # a peer's file, --input-format's choices
    "abstat.report.sampleset",  # SampleSet's old name (report/* import readers.sampleset)
    "abstat.report.inputs",  # --where, stored variants
    "abstat.report.exact",  # units declared exact (Go's assume=exact)
)
MINISTAT_FORBIDDEN = ("numpy", "dataclasses", *COMPARE_FORBIDDEN)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def imported(argv: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True)
    return [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]


def alternate(argv: list[str], anchor: list[str], envs: list[dict[str, str]], reps: int) -> list[list[Any]]:
    """(wall, CPU) of ``argv`` under each environment and of the anchor (last), run in turn ``reps`` times."""
    for env in envs:
        timed(argv, env)  # bytecode, page cache
    timed(anchor, envs[0])
    runs: list[list[Any]] = [[] for _ in range(len(envs) + 1)]
    for _ in range(reps):
        for env, times in zip(envs, runs[:-1], strict=True):
            times.append(timed(argv, env))
        runs[-1].append(timed(anchor, envs[0]))
    return runs


def sample_files(tmp: str) -> list[str]:
    rng = random.Random(1)
    files = []
    for name, shift in (("a", 0.0), ("b", 1.0)):
        files.append(os.path.join(tmp, name))
        with open(files[-1], "w") as handle:
            handle.write("".join(f"{rng.gauss(100 + shift, 5)!r}\n" for _ in range(100)))
    return files


def report(name: str, anchor: list[str], target: float | None, runs: list[list[Any]]) -> list[str]:
    """One row (the first tree against the anchor, other trees' CPU ratios below); the targets missed."""
    *ours, theirs = runs
    wall, cpu = (statistics.median(x[i] for x in ours[0]) for i in (0, 1))
    anchor_wall, anchor_cpu = (statistics.median(x[i] for x in theirs) for i in (0, 1))
    ratio = wall / anchor_wall
    print(
        f"{name:<16} {wall * 1e3:>8.1f} {anchor_wall * 1e3:>9.1f} {ratio:>6.2f} {cpu * 1e3:>7.1f}"
        f" {anchor_cpu * 1e3:>7.1f} {cpu / anchor_cpu:>6.2f}  {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for other in ours[1:]:
        other_wall, other_cpu = (statistics.median(x[i] for x in other) for i in (0, 1))
        print(
            f"{'':<16} --against: wall {other_wall * 1e3:.1f} ms {other_wall / anchor_wall:.2f}x, CPU"
            f" {other_cpu * 1e3:.1f} ms {other_cpu / anchor_cpu:.2f}x the anchor's; this tree's CPU"
            f" {(cpu - other_cpu) * 1e3:+.1f} ms"
        )
    if target is None:
        more = f"{(wall - anchor_wall) * 1e3:.1f} ms more wall, {(cpu - anchor_cpu) * 1e3:.1f} ms more CPU"
        print(f"{'':<16} {more} than {' '.join(anchor[1:])}")
        return []
    return [f"{name}: {ratio:.2f}x the anchor's wall time (target <= {target})"] if ratio > target else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, timed in the same alternation")
    parser.add_argument("--module", action="store_true", help="start python -m abstat, not the abstat script")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    envs = [env, dict(env, PYTHONPATH=os.path.abspath(args.against))] if args.against else [env]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        files = sample_files(tmp)
        abstat = [sys.executable, "-m", "abstat"] if args.module else [sys.executable, SCRIPT]
        numpy = [sys.executable, "-c", "import numpy"]
        bare = [sys.executable, "-I", "-S", "-c", "pass"]
        cases = [
            ("compare A B", [*abstat, "compare", *files], numpy, COMPARE_FORBIDDEN, TARGET),
            ("ministat A B", [*abstat, "ministat", *files], numpy, MINISTAT_FORBIDDEN, TARGET),
            ("ministat -A A B", [*abstat, "ministat", "-A", *files], bare, MINISTAT_FORBIDDEN, None),
            ("--help", [*abstat, "--help"], bare, MINISTAT_FORBIDDEN, None),
        ]
        print(f"abstat started as: {' '.join(abstat)}")
        print(
            f"{'command':<16} {'wall ms':>8} {'anchor ms':>9} {'ratio':>6} {'CPU ms':>7} {'anchor':>7} {'ratio':>6}"
            "  load"
        )
        for name, argv, anchor, forbidden, target in cases:
            failed += report(name, anchor, target, alternate(argv, anchor, envs, args.reps))
            bad = [m for m in imported(argv, env) if any(m == f or m.startswith(f + ".") for f in forbidden)]
            if bad:
                failed.append(f"{name} imports {', '.join(sorted(set(bad))[:8])}")
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
