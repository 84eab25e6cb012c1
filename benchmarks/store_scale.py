"""Every store command at 10^4, 10^5 and 10^6 runs, against an anchor measured in the same run.

The stores are shaped as ``abstat run`` writes them (``store_shape.py``:
one experiment, many invocations of 100 runs, five metrics per run, a
~4.2 KB machine record per invocation).  At each size the script runs, in
fresh interpreters and interleaved, the anchor (``store_anchor.py``: one
sqlite3 query and numpy medians of the same samples) and

    abstat list --store S
    abstat show --store S nightly
    abstat compare --store S nightly:a nightly:b
    abstat report --store S
    abstat export --store S --format csv -o OUT.csv --machines MACHINES.csv

It prints each one's CPU time (user + system, median of ``--reps``), its
ratio to the anchor's, its peak RSS, and at the end each command's growth
exponent in runs (``log(CPU ratio) / log(size ratio)`` between the
smallest and the largest size: 1 is linear, 2 quadratic).
Targets (issue 26): at 10^6 runs every command <= 3x the anchor's CPU, and
growth linear; the CSV export (samples and machine records) <= 2x the size
of the samples alone (the same sample columns, written by sqlite3 and the
csv module, without machine records).

    python benchmarks/store_scale.py [--sizes 10000,100000,1000000] [--reps 1] [--keep DIR]

``--keep DIR`` keeps the built stores there for the next run.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from store_shape import EXPERIMENT, cached, template, verdict, workspace  # noqa: E402

TARGET = 3.0
CSV_TARGET = 2.0


def timed(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, peak RSS in KiB) of one run; CPU is inf past ``timeout``."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                process.wait()
                return math.inf, math.inf, 0
            time.sleep(0.01)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {process.stderr.read().decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss


def samples_only_csv(store: str, path: str) -> int:
    """Bytes of the samples alone, as CSV: the export's sample columns (no machine record), written
    here from one sqlite3 query, with Python's csv module."""
    import json

    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    labels: dict[int, list[str]] = {}
    for invocation, key, value in db.execute("SELECT invocation_id, key, value FROM labels ORDER BY key"):
        labels.setdefault(invocation, []).append(f"{key}={value}")
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["experiment", "variant", "metric", "value", "unit", "run", "iteration", "index",
                         "invocation", "boot_id", "host", "started_at", "command", "labels", "notes"])
        for row in db.execute(
                "SELECT e.name, v.name, s.metric, s.value, s.unit, r.id, r.iteration + 1, s.idx, i.id, i.boot_id,"
                " i.hostname, r.started_at, r.command, r.notes FROM samples s JOIN runs r ON r.id = s.run_id"
                " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
                " JOIN invocations i ON i.id = r.invocation_id WHERE r.status = 'ok'"):
            *head, notes = row
            head[3] = repr(head[3])
            writer.writerow([*head, " ".join(labels.get(row[8], [])), "; ".join(json.loads(notes or "[]"))])
    db.close()
    return os.path.getsize(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="runs per store, comma-separated")
    parser.add_argument("--reps", type=int, default=1, help="timed runs of each command per size (median)")
    parser.add_argument("--only", default="", help="commands to time, comma-separated (default: all)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a command counts as > that")
    parser.add_argument("--keep", help="directory to keep (and reuse) the built stores in")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    work, keep, env = workspace("abstat-store-scale-", args.keep)
    abstat = [sys.executable, "-m", "abstat"]
    cpu: dict[str, dict[int, float]] = {}
    failed: list[str] = []
    shape = None
    try:
        print("| runs | command | CPU | anchor CPU | ratio | wall | peak RSS |")
        print("|---|---|---|---|---|---|---|")
        for size in sizes:
            path = os.path.join(keep, f"store-{size}.db")
            if not os.path.exists(path):
                shape = shape or template()
                started = time.perf_counter()
                cached(keep, size, shape)
                print(f"(built {size:,} runs in {time.perf_counter() - started:.0f} s,"
                      f" {os.path.getsize(path) / 2**20:.0f} MiB)", file=sys.stderr)
            out = os.path.join(work, "export.csv")
            machines = os.path.join(work, "machines.csv")
            commands = {
                "anchor": [sys.executable, os.path.join(HERE, "store_anchor.py"), path, EXPERIMENT],
                "list": [*abstat, "list", "--store", path],
                "show": [*abstat, "show", "--store", path, EXPERIMENT],
                "compare": [*abstat, "compare", "--store", path, f"{EXPERIMENT}:a", f"{EXPERIMENT}:b"],
                "report": [*abstat, "report", "--store", path],
                "export": [*abstat, "export", "--store", path, "--format", "csv", "-o", out, "--machines", machines],
            }
            if args.only:
                wanted = {"anchor", *args.only.split(",")}
                commands = {name: argv for name, argv in commands.items() if name in wanted}
            timed(commands["anchor"], env, args.timeout)  # bytecode, page cache
            results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
            for _ in range(args.reps):
                for name, argv in commands.items():
                    results[name].append(timed(argv, env, args.timeout))
            anchor = statistics.median(r[0] for r in results["anchor"])
            for name in commands:
                used = statistics.median(r[0] for r in results[name])
                wall = statistics.median(r[1] for r in results[name])
                rss = max(r[2] for r in results[name])
                cpu.setdefault(name, {})[size] = used
                ratio = used / anchor
                shown = f"> {args.timeout:.0f} s" if math.isinf(used) else f"{used:.2f} s"
                print(f"| {size:,} | {name} | {shown} | {anchor:.2f} s | {ratio:.2f} | "
                      f"{wall:.2f} s | {rss / 1024:.0f} MiB |", flush=True)
                if name != "anchor" and size == max(sizes) and ratio > TARGET:
                    failed.append(f"{name} at {size:,} runs: {ratio:.2f}x")
            if "export" in commands and os.path.exists(out):
                exported = os.path.getsize(out) + os.path.getsize(machines)
                minimal = samples_only_csv(path, os.path.join(work, "minimal.csv"))
                ratio = exported / minimal
                print(f"| {size:,} | export CSV size, samples + machine records | {exported / 2**20:.1f} MiB |"
                      f" samples only {minimal / 2**20:.1f} MiB | {ratio:.2f} | | |", flush=True)
                if ratio > CSV_TARGET:
                    failed.append(f"export CSV size at {size:,} runs: {ratio:.2f}x")
                for done in (out, machines, os.path.join(work, "minimal.csv")):
                    os.unlink(done)
        if len(sizes) > 1:
            low, high = min(sizes), max(sizes)
            print()
            print(f"growth exponent in runs, {low:,} -> {high:,} (CPU; 1 = linear):")
            for name, by_size in cpu.items():
                if low in by_size and high in by_size and not math.isinf(by_size[high]):
                    exponent = math.log(by_size[high] / by_size[low]) / math.log(high / low)
                    print(f"  {name:<8} {exponent:.2f}")
                else:
                    print(f"  {name:<8} (timed out)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return verdict(failed)


if __name__ == "__main__":
    sys.exit(main())
