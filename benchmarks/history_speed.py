"""Speed of ``abstat history``'s detector against ruptures' PELT, its growth, and its start-up.

    python benchmarks/history_speed.py [--sizes 10000,100000,1000000] [--repeat 3]

1. On 10^4 revisions (noise N(100, 1), +2 from n/3 on, -1 from 2n/3 on) the CPU time
   of ``abstat.history.changepoints.detect`` against ruptures ``Pelt(model="l2")`` with
   the BIC penalty (the anchor of benchmarks/changepoints.py) and against ruptures'
   ``KernelCPD`` with the linear kernel (the same cost in C, which main's detector used),
   on the same array, in the same run: the best of ``--repeat``.
2. Growth: abstat's CPU time at each of ``--sizes`` (at least 100x apart), the exponent of
   the fitted power law, and the change points found at each size (n/3 and 2n/3 expected).
3. Start-up: the wall and CPU time of ``abstat history --input`` on a 1000-revision CSV
   against ``python -c "import numpy"``, and whether scipy or ruptures were imported.
4. Loading (issue 42): ``abstat history --input`` on a CSV of each of ``--input-sizes``
   revisions (one sample each) against the detector alone on the same values (a child that
   reads the column with ``numpy.loadtxt`` and calls ``detect``): CPU and peak RSS of each
   process, their ratios (target <= 2x at 10^6) and the growth of the command's CPU, the
   detector's and their peak RSS; with ``--base-src DIR`` (another tree's ``src``, e.g. main's from
   ``git archive``) that tree's command too, in the same run.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)


def series(n: int, seed: int = 1) -> np.ndarray:
    values = np.random.default_rng(seed).normal(100, 1, n)
    values[n // 3 :] += 2
    values[2 * n // 3 :] -= 1
    return values


def cpu(function, repeat: int) -> tuple[float, object]:
    best, result = math.inf, None
    for _ in range(repeat):
        started = time.process_time()
        result = function()
        best = min(best, time.process_time() - started)
    return best, result


def detect_abstat(values: np.ndarray) -> list[int]:
    from abstat.history.changepoints import detect

    return [c.index for c in detect(values).change_points]


def pelt_l2(values: np.ndarray) -> list[int]:
    import ruptures

    sigma = float(np.median(np.abs(np.diff(values)))) / (0.6745 * math.sqrt(2))
    fitted = ruptures.Pelt(model="l2", min_size=2).fit(values.reshape(-1, 1))
    return [e for e in fitted.predict(pen=2 * sigma**2 * math.log(values.size)) if e < values.size]


def kernel_linear(values: np.ndarray) -> list[int]:
    import ruptures

    sigma = float(np.median(np.abs(np.diff(values)))) / (0.6745 * math.sqrt(2))
    scaled = ((values - np.median(values)) / sigma).reshape(-1, 1)
    fitted = ruptures.KernelCPD(kernel="linear", min_size=2).fit(scaled)
    return [e for e in fitted.predict(pen=2 * math.log(values.size)) if e < values.size]


def child_cpu(command: list[str], repeat: int) -> tuple[float, float, str]:
    """Best wall and CPU seconds of a command (children's rusage), and its stdout."""
    best_wall, best_cpu, out = math.inf, math.inf, ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC})
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)}: exit {done.returncode}: {done.stderr}")
        best_wall, best_cpu, out = min(best_wall, wall), min(best_cpu, used), done.stdout
    return best_wall, best_cpu, out


def child_usage(command: list[str], src: str = SRC) -> tuple[float, int]:
    """(CPU seconds, peak RSS in KiB) of one process, importing abstat from ``src``."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": src}
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def loading(sizes: list[int], base_src: str | None = None) -> list[str]:
    """Part 4; what missed its target."""
    detector = (
        "import sys, numpy; from abstat.history.changepoints import detect; "
        "detect(numpy.loadtxt(sys.argv[1], delimiter=',', skiprows=1, usecols=2))"
    )
    failed: list[str] = []
    usage: dict[str, list[tuple[float, int]]] = {"abstat": [], "detector": [], "base": []}
    print("history --input against the detector alone on the same values (CPU s, peak MiB):")
    with tempfile.TemporaryDirectory() as directory:
        for n in sizes:
            path = os.path.join(directory, f"h{n}.csv")
            with open(path, "w") as out:
                out.write("rev,commit_time,ns\n")
                out.writelines(f"r{i:07d},{1000 + i},{v:.4f}\n" for i, v in enumerate(series(n)))
            command = [sys.executable, "-m", "abstat", "history", "--input", path, "--repo", directory, "--no-state"]
            cpu_ours, rss_ours = child_usage(command)
            cpu_detector, rss_detector = child_usage([sys.executable, "-c", detector, path])
            usage["abstat"].append((cpu_ours, rss_ours))
            usage["detector"].append((cpu_detector, rss_detector))
            print(
                f"  n = {n:>8}: abstat {cpu_ours:7.2f} s {rss_ours / 1024:6.0f} MiB; detector {cpu_detector:7.2f} s"
                f" {rss_detector / 1024:6.0f} MiB; ratios {cpu_ours / cpu_detector:.2f} CPU,"
                f" {rss_ours / rss_detector:.2f} memory; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            if base_src:
                cpu_base, rss_base = child_usage(command, base_src)
                usage["base"].append((cpu_base, rss_base))
                print(
                    f"  {'':>12}base tree {cpu_base:7.2f} s {rss_base / 1024:6.0f} MiB; ratios to the detector"
                    f" {cpu_base / cpu_detector:.2f} CPU, {rss_base / rss_detector:.2f} memory",
                    flush=True,
                )
            if n == max(sizes) and n >= 10**6:
                failed += [
                    f"history --input at {n}: {what} {ratio:.2f}x the detector's"
                    for what, ratio in (("CPU", cpu_ours / cpu_detector), ("peak RSS", rss_ours / rss_detector))
                    if ratio > 2
                ]
    if len(sizes) > 1:
        span = math.log(sizes[-1] / sizes[0])
        for name, found in usage.items():
            if found:
                cpu_growth = math.log(found[-1][0] / found[0][0]) / span
                rss_growth = math.log(found[-1][1] / found[0][1]) / span
                print(
                    f"  growth over {sizes[-1] / sizes[0]:g}x, {name}: CPU n^{cpu_growth:.2f}, RSS n^{rss_growth:.2f}"
                )
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--input-sizes", default="10000,1000000", help="part 4's CSV sizes (empty: skip it)")
    parser.add_argument("--only-loading", action="store_true", help="part 4 only")
    parser.add_argument("--base-src", help="part 4: also run the command from this tree's src (e.g. main's)")
    args = parser.parse_args()
    if args.only_loading:
        return _verdict(loading([int(s) for s in args.input_sizes.split(",")], args.base_src))
    sizes = [int(s) for s in args.sizes.split(",")]
    values = series(10_000)
    ours, found = cpu(lambda: detect_abstat(values), args.repeat)
    pelt, pelt_found = cpu(lambda: pelt_l2(values), 1)
    kernel, kernel_found = cpu(lambda: kernel_linear(values), args.repeat)
    print("10^4 revisions, CPU s (best of runs):")
    print(f"  abstat detect      {ours:8.3f}   {found}")
    print(f"  ruptures Pelt l2   {pelt:8.3f}   ratio abstat/Pelt = {ours / pelt:.3f}   {pelt_found}")
    print(f"  ruptures KernelCPD {kernel:8.3f}   ratio abstat/KernelCPD = {ours / kernel:.3f}   {kernel_found}")
    print("growth (abstat detect, CPU s):")
    times = []
    for n in sizes:
        seconds, found = cpu(lambda: detect_abstat(series(n)), 1 if n >= 10**6 else args.repeat)
        times.append(seconds)
        expected = [n // 3, 2 * n // 3]
        print(f"  n = {n:>9}: {seconds:8.3f} s   found {found}, true steps at {expected}")
    if len(sizes) >= 2:
        slope = np.polyfit(np.log(sizes), np.log(times), 1)[0]
        print(f"  growth exponent over {sizes[-1] / sizes[0]:g}x: {slope:.2f} (1 = linear)")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "h.csv")
        with open(path, "w") as out:
            out.write("rev,commit_time,ns\n")
            out.writelines(f"r{i:04d},{1000 + i},{v:.4f}\n" for i, v in enumerate(series(1000)))
        wall, used, _ = child_cpu(
            [sys.executable, "-m", "abstat", "history", "--input", path, "--repo", directory, "--no-state"], args.repeat
        )
        anchor_wall, anchor_cpu, _ = child_cpu([sys.executable, "-c", "import numpy"], args.repeat)
        probe = (
            "import sys, runpy; sys.argv = ['abstat', 'history', '--input', %r, '--repo', %r];"
            "import abstat.cli as c\ntry:\n    c.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('IMPORTED', sorted(m for m in ('scipy', 'ruptures', 'matplotlib') if m in sys.modules))"
            % (path, directory)
        )
        _, _, out = child_cpu([sys.executable, "-c", probe], 1)
    print("start-up, 1000-revision CSV (best of runs):")
    print(f"  abstat history  wall {wall:.3f} s, CPU {used:.3f} s")
    print(
        f"  import numpy    wall {anchor_wall:.3f} s, CPU {anchor_cpu:.3f} s   ratio {wall / anchor_wall:.2f} wall, "
        f"{used / anchor_cpu:.2f} CPU"
    )
    print("  " + next((line for line in out.splitlines() if line.startswith("IMPORTED")), "IMPORTED ?"))
    return _verdict(loading([int(s) for s in args.input_sizes.split(",")], args.base_src) if args.input_sizes else [])


def _verdict(failed: list[str]) -> int:
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
