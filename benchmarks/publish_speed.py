"""``abstat publish`` on stores of 10^3 to 10^5 runs, against the store benchmarks' anchor (issue 27).

Each store holds ``runs / 1000`` experiments of 1000 runs (10 invocations of 100 runs, five
metrics, a ~4.2 KB machine record each: ``store_shape.py``).  For each size the script prints
the CPU and wall time of a first ``abstat publish`` (every page), its ratio to the anchor
(``store_anchor.py``: one sqlite3 query and numpy medians per experiment, in one interpreter per
store), the largest page, then adds one invocation of two runs to one experiment and times the
second ``publish`` (only that experiment's pages are rewritten).  Last, the growth exponent of
the first publish over the sizes.  Targets: 10^5 runs published in <= 60 s with pages <= 2 MB;
the second publish <= 2 s.

With ``--history`` the store is instead one history experiment of ``--runs`` revisions (one
invocation per revision, 5 runs each: ``store_shape.build_history``), as a nightly job
writes it; the targets there (issue 42): the first publish <= 3x the anchor's CPU, its peak RSS
<= 1 GiB, and its growth exponent <= 1.1 over the sizes.

    python benchmarks/publish_speed.py [--runs 1000,10000,100000] [--keep DIR]
    python benchmarks/publish_speed.py --history [--runs 1000,10000,100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from store_shape import SRC, build, build_history, template, workspace  # noqa: E402

PER_EXPERIMENT = 1000


SCHED: list[tuple[float, float]] = [(math.nan, math.nan)]  # the last timed process: (on CPU, waiting to run) s
PEAK: list[int] = [0]  # the last timed process's peak RSS, KiB


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU, wall) seconds of one process; where its wall time went goes to ``SCHED``: its main
    thread's time on a CPU and in the run queue (``/proc/PID/schedstat``, read while it is a
    zombie), the rest of the wall time being spent blocked (disk, sleeps) or in other threads."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    SCHED[0] = (math.nan, math.nan)
    try:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        with open(f"/proc/{process.pid}/schedstat") as handle:
            running, waiting = (int(x) / 1e9 for x in handle.read().split()[:2])
        SCHED[0] = (running, waiting)
    except (OSError, AttributeError, ValueError):
        pass
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    PEAK[0] = usage.ru_maxrss
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), time.monotonic() - start


def anchor_cpu(store: str, experiments: list[str], env: dict[str, str]) -> float:
    script = (
        "import sys; sys.path.insert(0, %r); import store_anchor\n"
        "for name in sys.argv[2:]: store_anchor.main(sys.argv[1], name)"
    ) % HERE
    return timed([sys.executable, "-c", script, store, *experiments], env)[0]


def add_run(store: str, experiment: str) -> None:
    sys.path.insert(0, SRC)
    from abstat.store import open_store

    with open_store(store) as handle:
        invocation = handle.start_invocation(experiment, {"hostname": "bench"}, variants=["a", "b"])
        for position, variant in enumerate(("a", "b")):
            handle.add_run(
                invocation,
                variant=variant,
                command="true",
                iteration=0,
                position=position,
                status="ok",
                exit_code=0,
                started_at=time.time(),
                wall=0.001,
                values={"wall": [0.001]},
                units={"wall": "s"},
            )
        handle.finish_invocation(invocation, "complete")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="1000,10000,100000")
    parser.add_argument("--keep", help="keep the built stores here (reused when present)")
    parser.add_argument("--history", action="store_true", help="one history experiment of --runs revisions")
    args = parser.parse_args(argv)
    if args.history:
        return history_main(args)
    work, keep, env = workspace("abstat-publish-", args.keep)
    shape = template()
    sizes = [int(x) for x in args.runs.split(",")]
    firsts, failed = [], []
    print(
        f"{'runs':>7} {'exps':>5} {'CPU s':>7} {'wall s':>7} {'anchor':>7} {'ratio':>6} {'largest page':>13}"
        f" {'2nd CPU':>8} {'2nd wall':>8}"
    )
    for runs in sizes:
        experiments = [f"bench{i:04d}" for i in range(max(1, runs // PER_EXPERIMENT))]
        store = os.path.join(keep, f"publish-{runs}.db")
        if not os.path.exists(store):
            for name in experiments:
                build(store, PER_EXPERIMENT, shape, experiment=name, seed=len(name) + int(name[5:]))
        site = os.path.join(work, f"site-{runs}")
        command = [sys.executable, "-m", "abstat", "publish", "--store", store, site, "--full"]
        cpu, wall = timed(command, env)
        anchor = anchor_cpu(store, experiments, env)
        largest = max(
            os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(site) for f in files if f.endswith(".html")
        )
        add_run(store, experiments[len(experiments) // 2])
        cpu2, wall2 = timed(command[:-1], env)
        running2, waiting2 = SCHED[0]
        firsts.append(cpu)
        print(
            f"{runs:>7} {len(experiments):>5} {cpu:>7.2f} {wall:>7.2f} {anchor:>7.2f} {cpu / anchor:>6.1f} "
            f"{largest:>13,} {cpu2:>8.2f} {wall2:>8.2f}"
        )
        print(
            f"  2nd publish's wall time: {running2:.2f} s on a CPU, {waiting2:.2f} s waiting in the run queue "
            f"(load), {max(0.0, wall2 - running2 - waiting2):.2f} s blocked (disk, sleeps) or elsewhere; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        if runs >= 100000:
            if wall > 60:
                failed.append(f"first publish of {runs} runs took {wall:.1f} s (target <= 60 s)")
            if wall2 > 2:
                failed.append(f"second publish after one new run took {wall2:.2f} s (target <= 2 s)")
        if largest > 2 * 1024 * 1024:
            failed.append(f"a page of {largest:,} bytes (target <= 2 MB)")
    if len(sizes) > 1:
        print(
            f"growth of the first publish: CPU ~ runs^{math.log(firsts[-1] / firsts[0]) / math.log(sizes[-1] / sizes[0]):.2f}"
        )
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


def history_main(args: argparse.Namespace) -> int:
    work, keep, env = workspace("abstat-publish-history-", args.keep)
    shape, sizes, firsts, failed = None, [int(x) for x in args.runs.split(",")], [], []
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    print(
        f"{'revisions':>9} {'CPU s':>7} {'wall s':>7} {'anchor':>7} {'ratio':>6} {'peak MiB':>8} {'largest page':>13}"
    )
    for revisions in sizes:
        store = os.path.join(keep, f"history-{revisions}.db")
        if not os.path.exists(store):
            shape = shape or template()
            build_history(store, revisions, shape)
        site = os.path.join(work, f"site-{revisions}")
        cpu, wall = timed([sys.executable, "-m", "abstat", "publish", "--store", store, site, "--full"], env)
        peak = PEAK[0]
        anchor = anchor_cpu(store, ["nightly"], env)
        largest = max(
            os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(site) for f in files if f.endswith(".html")
        )
        firsts.append(cpu)
        print(
            f"{revisions:>9} {cpu:>7.2f} {wall:>7.2f} {anchor:>7.2f} {cpu / anchor:>6.1f} {peak / 1024:>8.0f}"
            f" {largest:>13,}  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if revisions == max(sizes) and cpu / anchor > 3:
            failed.append(f"publish of {revisions} revisions: {cpu / anchor:.1f}x the anchor (target <= 3x)")
        if peak > 2**20:
            failed.append(f"publish of {revisions} revisions: {peak / 2**20:.2f} GiB peak RSS (target <= 1 GiB)")
    if len(sizes) > 1:
        growth = math.log(firsts[-1] / firsts[0]) / math.log(sizes[-1] / sizes[0])
        print(f"growth of the first publish: CPU ~ revisions^{growth:.2f}")
        if growth > 1.1:
            failed.append(f"publish grows as revisions^{growth:.2f} (target <= 1.1)")
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
