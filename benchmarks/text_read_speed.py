"""Reading sample files for ``abstat compare FILE FILE`` against numpy's own text parser (issue 42).

At each of ``--sizes`` values (log-normal, written as ``repr`` of the float and as
``numpy.savetxt`` writes them, and TSC-like integer counts, one per line) the script times, in this
process, best of ``--repeat`` CPU times:

- ``abstat.readers.decimals.read_sample_array`` on the file (what ``abstat compare`` reads with: a
  float64 array, bit for bit ``read_samples``' values),
- ``abstat.readers.text.parse_samples`` on the file's bytes (the list of floats the API gives),
- ``numpy.loadtxt`` on the same file (numpy's C parser): the anchor,

and prints the ratios to the anchor (target for ``read_sample_array`` <= 1.25: text read at numpy's
parsing speed, within noise) and ns per value, then the growth exponents over the sizes.  Last, the whole command
``abstat compare A B`` at the largest size (wall and CPU of the process) against
``python -c 'import numpy; numpy.loadtxt(A); numpy.loadtxt(B)'``: the issue's target is
<= 1 s at 10^6 per side on a quiet machine; the load average is printed with each figure.

    python benchmarks/text_read_speed.py [--sizes 10000,100000,1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TOLERANCE = 1.25  # numpy's speed, within what a shared machine's noise moves a best-of-3 CPU time
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)


def best(functions, repeat: int) -> list[float]:
    """Best CPU time of each function, called in turn ``repeat`` times (a burst of the shared
    machine's load then falls on all of them, not on one)."""
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeat):
        for function, spent in zip(functions, times, strict=True):
            started = time.process_time()
            function()
            spent.append(time.process_time() - started)
    return [min(spent) for spent in times]


def child(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": SRC})
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> int:
    from abstat.readers.decimals import read_sample_array
    from abstat.readers.text import parse_samples

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    rng = np.random.default_rng(1)
    failed, ours = [], {}
    print(
        f"{'n':>9} {'format':>8} {'array ns/value':>14} {'list ns/value':>13} {'numpy ns/value':>14}"
        f" {'array/numpy':>11} {'list/numpy':>10}  load"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            values = rng.lognormal(0, 1, n)
            for fmt in ("repr", "savetxt", "tsc"):
                if fmt == "repr":
                    data = ("\n".join(map(repr, values.tolist())) + "\n").encode()
                else:
                    handle = io.BytesIO()
                    if fmt == "savetxt":
                        np.savetxt(handle, values)
                    else:  # TSC-like counts
                        np.savetxt(handle, rng.integers(10**9, 10**9 + 5000, n), fmt="%d")
                    data = handle.getvalue()
                path = os.path.join(tmp, f"{fmt}.txt")
                with open(path, "wb") as out:
                    out.write(data)
                array, mine, anchor = best(
                    [
                        lambda path=path: read_sample_array(path),
                        lambda data=data: parse_samples(data, "f"),
                        lambda path=path: np.loadtxt(path),
                    ],
                    args.repeat,
                )
                expected = np.loadtxt(path)
                assert np.array_equal(read_sample_array(path).view(np.int64), expected.view(np.int64))
                assert parse_samples(data, "f") == expected.tolist()
                ours.setdefault(fmt, []).append(array)
                print(
                    f"{n:>9} {fmt:>8} {array / n * 1e9:>14.0f} {mine / n * 1e9:>13.0f} {anchor / n * 1e9:>14.0f}"
                    f" {array / anchor:>11.2f} {mine / anchor:>10.2f}  {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                if n == max(sizes) and array > TOLERANCE * anchor:
                    failed.append(
                        f"read_sample_array at {n} ({fmt}): {array / anchor:.2f}x numpy.loadtxt (target <= {TOLERANCE})"
                    )
        for fmt, times in ours.items():
            if len(sizes) > 1:
                growth = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
                print(f"growth of read_sample_array ({fmt}), {sizes[0]} to {sizes[-1]}: n^{growth:.2f}")
        n = max(sizes)
        paths = []
        for shift in (0.0, 0.01):
            path = os.path.join(tmp, f"{shift}.txt")
            np.savetxt(path, rng.lognormal(shift, 1, n))
            paths.append(path)
        child([sys.executable, "-m", "abstat", "compare", *paths])  # warm the bytecode and page cache
        wall, cpu = child([sys.executable, "-m", "abstat", "compare", *paths])
        script = "import sys, numpy; [numpy.loadtxt(p) for p in sys.argv[1:]]"
        anchor_wall, anchor_cpu = child([sys.executable, "-c", script, *paths])
        print(
            f"abstat compare A B, {n} per side: {wall:.2f} s wall, {cpu:.2f} s CPU; numpy.loadtxt of both files: "
            f"{anchor_wall:.2f} s wall, {anchor_cpu:.2f} s CPU; load {os.getloadavg()[0]:.1f}"
        )
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
