"""Mistakes a newcomer made with compare's inputs get one line that says what is wrong (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

from support import paths


def _compare(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "abstat", "compare", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(paths.SRC)},
    )


def test_summary_statistics_a_field_short_are_named_as_such(tmp_path):
    done = _compare("Unpatched=5:66.51", "latched=5:64.82:1.0", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "5:66.51" in done.stderr and "NAME=n:mean:stddev, three numbers" in done.stderr
    stored = _compare("exp:a", "exp:b", cwd=tmp_path)  # a stored variant's name gets no such hint
    assert stored.returncode == 2 and "n:mean:stddev" not in stored.stderr


def test_an_empty_directory_is_called_a_directory(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "after").write_text("1\n2\n3\n")
    done = _compare(str(tmp_path / "bad"), str(tmp_path / "after"), cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "a directory, and no asv or criterion results in it" in done.stderr
