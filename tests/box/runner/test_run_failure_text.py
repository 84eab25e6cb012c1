"""A failed run's one line says why it failed first, and shows a metric's pattern as the user wrote it (a newcomer
read "peak RSS not recorded: ...; metric c: pattern '^nomatch(\\\\d+)' matched nothing")."""

from __future__ import annotations

import os
import subprocess
import sys

from support import paths


def test_the_reason_comes_first_and_the_pattern_as_written(tmp_path):
    bench = tmp_path / "b.sh"
    bench.write_text("#!/bin/sh\necho hello\n")
    bench.chmod(0o755)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "2",
            "--store",
            str(tmp_path / "s.db"),
            "--metric",
            r"c=^nomatch(\d+)",
            "-v",
            f"a={bench}",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(paths.SRC)},
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    reason = last.split("failed: ", 1)[1]
    assert reason.startswith(r"metric c: pattern '^nomatch(\d+)' matched nothing"), last
