"""``run --until-decided`` with a large maximum (attack22 A2): ``-n 1000`` looks first at 12 and 18 runs per
variant at levels 4e-6 and 9e-6, where the permutation reference drew 50 / alpha arrangements (2.7 GB at the
first look, then "internal error: MemoryError" after the runs).  The draws are capped now and the looks their
draws cannot resolve are skipped: the run stops at the first look that can settle, in bounded memory (an
address-space limit of 1.5 GB here)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from support import paths


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


def test_a_maximum_of_1000_runs_stops_at_the_first_look_its_draws_resolve(tmp_path):
    bench = tmp_path / "v.py"
    bench.write_text("import random, sys\nprint('v: %.3f' % (float(sys.argv[1]) * random.lognormvariate(0, 0.01)))\n")
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "run", "--store", str(tmp_path / "s.db"), "--until-decided", "-n", "1000"]
        + ["--metric", "v=v: ([0-9.]+):ns", "--no-json-lines", "--no-progress", "--decide-on", "v"]
        + ["-v", f"old={sys.executable} {bench} 100", "-v", f"new={sys.executable} {bench} 130"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": paths.SRC, "OPENBLAS_NUM_THREADS": "1", "NO_COLOR": "1"},
        preexec_fn=_limit,  # noqa: PLW1509 -- a memory limit, set before exec (main's code needs 2.7 GB here)
    )
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr[-2000:]
    line = next(line for line in done.stderr.splitlines() if "--until-decided on v" in line)
    assert "stopped early at 27 of at most 1000 runs per variant: new slower" in line, line
