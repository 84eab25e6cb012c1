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

With ``--history`` the stores are history experiments instead (``store_shape.build_history``:
one invocation per revision, 5 runs each, a machine record each) and ``--sizes`` counts
revisions (default 1000,10000,100000); the script times, against the same anchor,

    abstat report --store S                      (target: <= 3x the anchor, <= 1 GiB peak RSS)
    abstat history --store S nightly --metric wall --repo WORK
                                                 (against the anchor of the wall samples alone,
                                                  ``history-anchor``: <= 2x its CPU, <= 2x its RSS)

    abstat publish --store S SITE --full         (target: <= 1 GiB peak RSS)

and every command's growth exponent must stay <= 1.1 (issue 42), in CPU and in peak RSS: the
script ends with each command's peak RSS at the smallest and the largest size, its ratio to the
anchor's at each, the exponent of its growth, and what each revision (run) adds, in KiB
(the difference of the peaks over the difference of the sizes): the per-set constant.

    python benchmarks/store_scale.py [--sizes 10000,100000,1000000] [--reps 1] [--keep DIR]
    python benchmarks/store_scale.py --history [--sizes 1000,10000,100000] [--keep DIR]

``--keep DIR`` keeps the built stores there for the next run.  ``--base-src DIR`` (another tree's
``src``, e.g. main's from ``git archive``) also times each command from that tree, as ``NAME@base``,
right after the same command from this one (the same anchor; no target applies to it).
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
HISTORY_TARGET = 2.0  # history against its anchor, CPU and peak RSS
HISTORY_GROWTH = 1.1
REPORT_MEMORY = 2**20  # KiB: 1 GiB
BASE = "@base"  # a command run from --base-src


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
        said = process.stderr.read().decode()[-500:] if process.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {said}")
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
        writer.writerow(
            [
                "experiment",
                "variant",
                "metric",
                "value",
                "unit",
                "run",
                "iteration",
                "index",
                "invocation",
                "boot_id",
                "host",
                "started_at",
                "command",
                "labels",
                "notes",
            ]
        )
        for row in db.execute(
            "SELECT e.name, v.name, s.metric, s.value, s.unit, r.id, r.iteration + 1, s.idx, i.id, i.boot_id,"
            " i.hostname, r.started_at, r.command, r.notes FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " JOIN invocations i ON i.id = r.invocation_id WHERE r.status = 'ok'"
        ):
            *head, notes = row
            head[3] = repr(head[3])
            writer.writerow([*head, " ".join(labels.get(row[8], [])), "; ".join(json.loads(notes or "[]"))])
    db.close()
    return os.path.getsize(path)


def _missed(name: str, size: int, sizes: list[int], ratio: float, rss: int, anchor_rss: int) -> list[str]:
    if name.endswith(BASE):
        return []
    """The targets ``name`` missed at ``size`` (checked at the largest size)."""
    if name.endswith("anchor") or size != max(sizes):
        return []
    if name == "history":
        missed = [f"history at {size:,}: {ratio:.2f}x the anchor's CPU"] if ratio > HISTORY_TARGET else []
        if rss > HISTORY_TARGET * anchor_rss:
            missed.append(f"history at {size:,}: {rss / anchor_rss:.2f}x the anchor's peak RSS")
        return missed
    missed = [f"{name} at {size:,}: {ratio:.2f}x"] if ratio > TARGET else []
    if name in ("report", "publish") and rss > REPORT_MEMORY:
        missed.append(f"{name} at {size:,}: {rss / 2**20:.2f} GiB peak RSS (target <= 1 GiB)")
    return missed


def _commands(abstat: list[str], path: str, out: str, machines: str, history: bool, only: str) -> dict[str, list[str]]:
    """The commands timed at one size (and their anchors)."""
    work = os.path.dirname(out)
    commands = {
        "anchor": [sys.executable, os.path.join(HERE, "store_anchor.py"), path, EXPERIMENT],
        "list": [*abstat, "list", "--store", path],
        "show": [*abstat, "show", "--store", path, EXPERIMENT],
        "compare": [*abstat, "compare", "--store", path, f"{EXPERIMENT}:a", f"{EXPERIMENT}:b"],
        "report": [*abstat, "report", "--store", path],
        "export": [*abstat, "export", "--store", path, "--format", "csv", "-o", out, "--machines", machines],
    }
    if history:
        commands = {
            "anchor": commands["anchor"],
            "report": commands["report"],
            "publish": [*abstat, "publish", "--store", path, os.path.join(os.path.dirname(out), "site"), "--full"],
            "history-anchor": [*commands["anchor"], "wall"],
            # --repo: a directory that is not a git repository (else, run from a checkout, git is asked about
            # every revision: 3.3 s of git's CPU at 10^5 revisions, none of which it knows)
            "history": [*abstat, "history", "--store", path, EXPERIMENT, "--metric", "wall", "--repo", work],
        }
    if only:
        asked = set(only.split(","))
        # history alone is timed against its own anchor: the anchor of every metric is not run (10^6 revisions: 165 s)
        wanted = {"history-anchor", *asked} | (set() if history and asked <= {"history"} else {"anchor"})
        commands = {name: argv for name, argv in commands.items() if name in wanted}
    return commands


def _with_base(commands: dict[str, list[str]], base_src: str | None) -> dict[str, list[str]]:
    """``commands`` with, after each but the anchors, the same command as ``NAME@base`` (``--base-src``)."""
    if not base_src:
        return commands
    both: dict[str, list[str]] = {}
    for name, argv in commands.items():
        both[name] = argv
        if not name.endswith("anchor"):
            both[name + BASE] = argv
    return both


def _growth(cpu: dict[str, dict[int, float]], low: int, high: int, history: bool) -> list[str]:
    """Print each command's CPU growth exponent from ``low`` to ``high``; the targets it missed."""
    failed = []
    print()
    print(f"growth exponent in runs, {low:,} -> {high:,} (CPU; 1 = linear):")
    for name, by_size in cpu.items():
        if low in by_size and high in by_size and not math.isinf(by_size[high]):
            exponent = math.log(by_size[high] / by_size[low]) / math.log(high / low)
            print(f"  {name:<14} {exponent:.2f}")
            if history and name != "anchor" and not name.endswith(BASE) and exponent > HISTORY_GROWTH:
                failed.append(f"{name} grows as size^{exponent:.2f} (target <= {HISTORY_GROWTH})")
        else:
            print(f"  {name:<8} (timed out)")
    return failed


def _memory_growth(peaks: dict[str, dict[int, int]], low: int, high: int, history: bool) -> list[str]:
    """Print each command's peak RSS at ``low`` and ``high``, its ratio to its anchor's, the growth
    exponent and the KiB each revision (run) adds; the targets it missed (history stores)."""
    failed = []
    unit = "revision" if history else "run"
    print()
    print(f"peak RSS, {low:,} -> {high:,} ({high // low}x the size; exponent 1 = linear):")
    print(f"| command | peak at {low:,} | x anchor | peak at {high:,} | x anchor | exponent | KiB per {unit} |")
    print("|---|---|---|---|---|---|---|")
    for name, by_size in peaks.items():
        anchor = peaks.get("history-anchor" if name.startswith("history") else "anchor", {})
        if not (by_size.get(low) and by_size.get(high) and anchor.get(low) and anchor.get(high)):
            print(f"| {name} | (timed out) | | | | | |")
            continue
        exponent = math.log(by_size[high] / by_size[low]) / math.log(high / low)
        per_unit = (by_size[high] - by_size[low]) / (high - low)
        print(
            f"| {name} | {by_size[low] / 1024:.0f} MiB | {by_size[low] / anchor[low]:.2f} | "
            f"{by_size[high] / 1024:.0f} MiB | {by_size[high] / anchor[high]:.2f} | {exponent:.2f} | "
            f"{per_unit:.2f} |"
        )
        if history and not name.endswith(("anchor", BASE)) and exponent > HISTORY_GROWTH:
            failed.append(f"{name}'s peak RSS grows as size^{exponent:.2f} (target <= {HISTORY_GROWTH})")
    return failed


def _print_size(
    size: int,
    sizes: list[int],
    results: dict[str, list[tuple[float, float, int]]],
    cpu: dict[str, dict[int, float]],
    peaks: dict[str, dict[int, int]],
    timeout: float,
) -> list[str]:
    """Print each command's row at ``size`` (median CPU and wall, its peak RSS), keep its CPU and
    peak in ``cpu`` and ``peaks``; the targets it missed."""
    failed = []
    for name in results:
        anchor_name = "history-anchor" if name.startswith("history") else "anchor"
        anchor = statistics.median(r[0] for r in results[anchor_name])
        used = statistics.median(r[0] for r in results[name])
        wall = statistics.median(r[1] for r in results[name])
        rss = max(r[2] for r in results[name])
        cpu.setdefault(name, {})[size] = used
        peaks.setdefault(name, {})[size] = rss
        ratio = used / anchor
        shown = f"> {timeout:.0f} s" if math.isinf(used) else f"{used:.2f} s"
        print(
            f"| {size:,} | {name} | {shown} | {anchor:.2f} s | {ratio:.2f} | "
            f"{wall:.2f} s | {rss / 1024:.0f} MiB | load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        failed += _missed(name, size, sizes, ratio, rss, max(r[2] for r in results[anchor_name]))
    return failed


def _export_size(size: int, path: str, out: str, machines: str, work: str) -> list[str]:
    """Print the CSV export's size against the samples alone; the target it missed."""
    exported = os.path.getsize(out) + os.path.getsize(machines)
    minimal = samples_only_csv(path, os.path.join(work, "minimal.csv"))
    ratio = exported / minimal
    print(
        f"| {size:,} | export CSV size, samples + machine records | {exported / 2**20:.1f} MiB |"
        f" samples only {minimal / 2**20:.1f} MiB | {ratio:.2f} | | |",
        flush=True,
    )
    for done in (out, machines, os.path.join(work, "minimal.csv")):
        os.unlink(done)
    return [f"export CSV size at {size:,} runs: {ratio:.2f}x"] if ratio > CSV_TARGET else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", help="runs per store, comma-separated (default 10000,100000,1000000; history: 1000,10000,100000)"
    )
    parser.add_argument("--reps", type=int, default=1, help="timed runs of each command per size (median)")
    parser.add_argument("--only", default="", help="commands to time, comma-separated (default: all)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a command counts as > that")
    parser.add_argument("--keep", help="directory to keep (and reuse) the built stores in")
    parser.add_argument("--history", action="store_true", help="history experiments; --sizes in revisions")
    parser.add_argument("--base-src", help="also time each command from this tree's src (NAME@base)")
    args = parser.parse_args()
    args.sizes = args.sizes or ("1000,10000,100000" if args.history else "10000,100000,1000000")
    sizes = [int(size) for size in args.sizes.split(",")]
    work, keep, env = workspace("abstat-store-scale-", args.keep)
    abstat = [sys.executable, "-m", "abstat"]
    cpu: dict[str, dict[int, float]] = {}
    peaks: dict[str, dict[int, int]] = {}
    failed: list[str] = []
    shape = None
    try:
        print(f"load average {os.getloadavg()[0]:.1f} at the start")
        print(f"| {'revisions' if args.history else 'runs'} | command | CPU | anchor CPU | ratio | wall | peak RSS |")
        print("|---|---|---|---|---|---|---|")
        for size in sizes:
            path = os.path.join(keep, f"{'history' if args.history else 'store'}-{size}.db")
            if not os.path.exists(path):
                shape = shape or template()
                started = time.perf_counter()
                cached(keep, size, shape, history=args.history)
                print(
                    f"(built {size:,} runs in {time.perf_counter() - started:.0f} s,"
                    f" {os.path.getsize(path) / 2**20:.0f} MiB)",
                    file=sys.stderr,
                )
            out = os.path.join(work, "export.csv")
            machines = os.path.join(work, "machines.csv")
            commands = _with_base(_commands(abstat, path, out, machines, args.history, args.only), args.base_src)
            timed(commands.get("anchor", commands["history-anchor"]), env, args.timeout)  # bytecode, page cache
            results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
            for _ in range(args.reps):
                for name, argv in commands.items():
                    chosen = dict(env, PYTHONPATH=args.base_src) if name.endswith(BASE) else env
                    results[name].append(timed(argv, chosen, args.timeout))
            failed += _print_size(size, sizes, results, cpu, peaks, args.timeout)
            if "export" in commands and os.path.exists(out):
                failed += _export_size(size, path, out, machines, work)
        if len(sizes) > 1:
            failed += _growth(cpu, min(sizes), max(sizes), args.history)
            failed += _memory_growth(peaks, min(sizes), max(sizes), args.history)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return verdict(failed)


if __name__ == "__main__":
    sys.exit(main())
