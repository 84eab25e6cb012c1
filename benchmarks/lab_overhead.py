"""Controller time the lab adds per run over SSH (target: at most 2 ms per run).

Anchor, measured in the same run: ``abstat run -n N -v a=true`` directly on
this machine.  Candidate: the same runs with ``--host box``, a real sshd on
a loopback address (a simulated box from tests/support/lab_sim.py; needs root,
sshd and unshare).  Each is timed at two sizes N1 < N2; the per-run cost is
the slope (time(N2) - time(N1)) / (N2 - N1), which leaves out the fixed
costs (Python start-up, the ssh connection, shipping the runner), shown
separately.  Medians of a few repetitions.  Over ssh the controller's store
commit overlaps the box's next run (results stream back), so the added time
can come out at or below zero.

    python benchmarks/lab_overhead.py [--small 20] [--large 1020] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))

import lab_sim  # noqa: E402


def timed(env: dict[str, str], store: str, runs: int, host: str | None) -> float:
    argv = [
        sys.executable,
        "-m",
        "abstat",
        "run",
        "--store",
        store,
        "-n",
        str(runs),
        "-v",
        "a=true",
        "--no-progress",
        "--format",
        "csv",
    ]
    if host:
        argv += ["--host", host]
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=1020)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    reason = lab_sim.missing_requirements()
    if reason:
        print(f"lab_overhead: skipped: {reason}")
        return 0
    lab = lab_sim.Lab(["box"])
    try:
        lab.start()
        env = lab.env()
        env["PYTHONPATH"] = os.path.join(ROOT, "src")
        results: dict[tuple[str, int], list[float]] = {}
        with tempfile.TemporaryDirectory() as work:
            for repeat in range(args.repeat):
                for where in ("local", "ssh"):
                    for runs in (args.small, args.large):
                        store = os.path.join(work, f"{where}-{runs}-{repeat}.db")
                        seconds = timed(env, store, runs, "box" if where == "ssh" else None)
                        results.setdefault((where, runs), []).append(seconds)
    finally:
        lab.close()
    med = {key: statistics.median(values) for key, values in results.items()}
    span = args.large - args.small
    per_run = {where: (med[(where, args.large)] - med[(where, args.small)]) / span for where in ("local", "ssh")}
    fixed = {where: med[(where, args.small)] - per_run[where] * args.small for where in ("local", "ssh")}
    added = per_run["ssh"] - per_run["local"]
    print(f"runs of `true`, medians of {args.repeat}; per-run = slope between n={args.small} and n={args.large}")
    print(f"{'':24}{'per run':>12}{'fixed':>12}")
    print(f"{'direct (anchor)':24}{per_run['local'] * 1e3:>9.2f} ms{fixed['local']:>10.2f} s")
    print(f"{'over ssh (--host)':24}{per_run['ssh'] * 1e3:>9.2f} ms{fixed['ssh']:>10.2f} s")
    print(
        f"controller time added per run over ssh: {added * 1e3:.2f} ms "
        f"(ratio to the direct per-run cost {per_run['ssh'] / per_run['local']:.2f}); target <= 2 ms: "
        f"{'met' if added <= 0.002 else 'NOT met'}"
    )
    print(
        f"fixed cost added (connection, shipping the runner, the host's machine record): "
        f"{fixed['ssh'] - fixed['local']:.2f} s per host and boot"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
