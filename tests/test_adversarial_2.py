"""Adversarial inputs, second round: each test pins a defect found by attacking the CLI.

The rule (brief): bad input gets one line naming it, exit status 2, no
traceback, no "internal error"; output from data is escaped for where it
goes; no input makes a command hang.  Speed checks here have margins of
100x or more (the old code needed minutes), so a slow machine cannot fail them.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from test_cli_bad_inputs import abstat, one_line_error


# --------------------------------------------------------------------------
# audit: regular expressions that backtracked quadratically on long lines

@pytest.mark.parametrize("line", ["1" * 100_000, "1" * 100_000 + " +/- 1", "1" * 100_000 + "% +/- 1%"])
def test_audit_of_a_long_run_of_digits_is_fast(tmp_path: Path, line: str) -> None:
    """``\\d+\\.?\\d*`` splits a run of n digits in n ways: 78 s for 40,000 digits."""
    path = tmp_path / "mail.txt"
    path.write_text(line + "\n")
    proc = abstat("audit", str(path), cwd=tmp_path, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert b"no ministat report" in proc.stdout


def test_audit_number_pattern_is_unchanged() -> None:
    from abstat.audit import scan

    number = re.compile(rf"^{scan._NUM}$")
    for text in ["1", "12", "12.", "12.5", ".5", "-1.5e-3", "+2E+10", "nan", "-inf", "1.5.", "1..5", "e5", "."]:
        old = re.fullmatch(r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)", text)
        assert bool(number.match(text)) == bool(old), text
