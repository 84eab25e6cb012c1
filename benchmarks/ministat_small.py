"""Start-up cost of ``abstat ministat`` on small inputs.

Two files of 100 samples; end-to-end wall time of ``python -m abstat
ministat a b`` and of the installed ``abstat ministat a b`` against the
anchor ``python -c pass`` run by the same interpreter, interleaved, median
of many runs (wall and CPU: on a loaded machine quote the CPU ratio).
Target: at most 1.2x (issue 42).  For scale it also times what the
interpreter imports before any abstat code runs (``runpy`` for ``-m``,
``re`` for pip's console-script template) and the abstat code alone.

Byte code is cached in a temporary PYTHONPYCACHEPREFIX (as an installed
package has its .pyc files) even when PYTHONDONTWRITEBYTECODE is set.

    python benchmarks/ministat_small.py [--runs 100]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time


TARGET = 1.2  # issue 42


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs of each command (default 100)")
    options = parser.parse_args()

    work = tempfile.mkdtemp(prefix="abstat-small-")
    try:
        rng = random.Random(42)
        files = []
        for name, center in (("before.txt", 1000.0), ("after.txt", 990.0)):
            path = os.path.join(work, name)
            with open(path, "w") as handle:
                handle.writelines(f"{rng.gauss(center, 15.0):.3f}\n" for _ in range(100))
            files.append(path)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
        python = sys.executable
        script = shutil.which("abstat", path=os.path.dirname(python)) or shutil.which("abstat")
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "python -m abstat ministat": [python, "-m", "abstat", "ministat", *files],
        }
        if script:
            commands["abstat ministat (installed script)"] = [script, "ministat", *files]
        # What the interpreter loads before any abstat code runs, for scale:
        # "python -m" imports runpy (importlib.util, contextlib, collections,
        # functools...); pip's console-script template imports re.
        commands["floor of -m: python -c 'import runpy'"] = [python, "-c", "import runpy"]
        commands["floor of script: python -c 'import re'"] = [python, "-c", "import re"]
        call = f"import sys; from abstat.cli import main; sys.exit(main(['ministat', {files[0]!r}, {files[1]!r}]))"
        commands["abstat code alone: python -c main(...)"] = [python, "-c", call]
        for command in commands.values():  # warm up: page cache and byte code
            for _ in range(3):
                subprocess.run(command, stdout=subprocess.DEVNULL, env=env, check=True)
        timings: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for _ in range(options.runs):
            rng.shuffle(names)
            for name in names:
                start = time.perf_counter()
                process = subprocess.Popen(commands[name], stdout=subprocess.DEVNULL, env=env)
                _, status, usage = os.wait4(process.pid, 0)
                timings[name].append(time.perf_counter() - start)
                if os.waitstatus_to_exitcode(status) != 0:
                    raise SystemExit(f"{name} failed")
                cpu[name].append(usage.ru_utime + usage.ru_stime)
        anchor, anchor_cpu = _median(timings["python -c pass"]), _median(cpu["python -c pass"])
        print(f"interpreter: {python}")
        print(f"runs per command: {options.runs} (interleaved, median); load {os.getloadavg()[0]:.1f}")
        for name in commands:
            value, used = _median(timings[name]), _median(cpu[name])
            print(
                f"{name:42s} {value * 1000:8.2f} ms   ratio {value / anchor:5.2f}x"
                f"   CPU {used * 1000:6.2f} ms ratio {used / anchor_cpu:5.2f}x"
            )
        # The target is on the command a user runs: the installed `abstat`.
        target_name = "abstat ministat (installed script)" if script else "python -m abstat ministat"
        ratio = _median(timings[target_name]) / anchor
        cpu_ratio = _median(cpu[target_name]) / anchor_cpu
        verdict = "ok" if ratio <= TARGET else "MISSED"
        print(
            f"{target_name} / python -c pass = {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU"
            f" (target <= {TARGET:.2f}x wall): {verdict}"
        )
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
