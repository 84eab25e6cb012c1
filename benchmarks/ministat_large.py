"""``abstat ministat -A`` on two files of 10 million integer samples.

Anchor: Debian's ``ministat`` (package ``ministat``: ``apt-get install
ministat``) run on the same files in the same script.  Prints wall time and
peak memory (max RSS of the child, from ``os.wait4``) of both and their
ratios, and checks that the outputs are byte-identical.
Targets: time ratio <= 0.5, memory ratio <= 1.0.

    python benchmarks/ministat_large.py [--samples 10000000] [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from ministat_scale import measure as _measure  # GNU time: the child's own peak RSS


def _write_samples(path: str, count: int, center: float, seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    with open(path, "w") as handle:
        for start in range(0, count, 1_000_000):
            size = min(1_000_000, count - start)
            block = np.rint(rng.normal(center, center * 0.06, size)).astype(np.int64)
            handle.write("\n".join(map(str, block.tolist())))
            handle.write("\n")


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000, help="samples per file (default 10 million)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each program (default 3)")
    options = parser.parse_args()
    reference = shutil.which("ministat") or ("/usr/bin/ministat" if os.path.exists("/usr/bin/ministat") else None)
    if reference is None:
        print("Debian's ministat is not installed: apt-get install ministat", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="abstat-large-")
    try:
        files = [os.path.join(work, "before.txt"), os.path.join(work, "after.txt")]
        started = time.perf_counter()
        _write_samples(files[0], options.samples, 52000.0, 1)
        _write_samples(files[1], options.samples, 51800.0, 2)
        print(f"generated 2 x {options.samples} integer samples in {time.perf_counter() - started:.1f} s")
        commands = {
            "ministat": [reference, "-A", *files],
            "abstat": [sys.executable, "-m", "abstat", "ministat", "-A", *files],
        }
        results: dict[str, list[tuple[float, int, int]]] = {name: [] for name in commands}
        outputs = {name: os.path.join(work, f"{name}.out") for name in commands}
        for command in commands.values():  # warm the page cache
            subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
        for _ in range(options.runs):
            for name, command in commands.items():
                results[name].append(_measure(command, outputs[name]))
        for name in commands:
            statuses = {status for _, _, status in results[name]}
            if statuses != {0}:
                print(f"{name} failed with exit status {statuses}", file=sys.stderr)
                return 1
        with open(outputs["ministat"], "rb") as ref, open(outputs["abstat"], "rb") as ours:
            identical = ref.read() == ours.read()
        time_ref = _median([elapsed for elapsed, _, _ in results["ministat"]])
        time_ours = _median([elapsed for elapsed, _, _ in results["abstat"]])
        rss_ref = max(rss for _, rss, _ in results["ministat"])
        rss_ours = max(rss for _, rss, _ in results["abstat"])
        print(f"runs: {options.runs} each (median wall time, max of max RSS)")
        print(f"ministat -A       {time_ref:7.2f} s  {rss_ref / 1024:8.1f} MiB  ({reference})")
        print(f"abstat ministat -A {time_ours:6.2f} s  {rss_ours / 1024:8.1f} MiB")
        print(f"time ratio   abstat/ministat = {time_ours / time_ref:.2f}x (target <= 0.50x)")
        print(f"memory ratio abstat/ministat = {rss_ours / rss_ref:.2f}x (target <= 1.00x)")
        print(f"output byte-identical: {'yes' if identical else 'NO'}")
        ok = identical and time_ours <= 0.5 * time_ref and rss_ours <= rss_ref
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
