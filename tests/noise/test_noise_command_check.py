"""``abstat noise -- COMMAND`` checks the command before anything else: no store is made for runs that never
run, and the error names what the user gave (the benchmark command), not the A/A design's variant 'a'."""

from __future__ import annotations

import os
import subprocess
import sys

from support import paths


def test_noise_checks_its_command_before_it_makes_a_store(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "noise", "-n", "20", "--", "./nonexist"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(paths.SRC)},
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "the benchmark command: command not found" in done.stderr and "variant" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no ./abstat.db made for runs that never ran
