"""attack20 A4: ``compare x/.../new/sample.json y/.../new/sample.json`` (criterion's results of two checkouts) pooled
both files into the one variant ``new`` their directories name, and compared nothing (exit 0).  Each input is its
own variant; the reference is the same two runs laid out as criterion lays them in one tree (``base`` and ``new``
beside each other: the book's Fibonacci/Iterative run, tests/data/peers/criterion), which compare already reads as
two variants."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from support import paths
from support.cli import run_abstat

BOOK = paths.DATA / "peers" / "criterion" / "Fibonacci" / "Iterative"
CHANGE = re.compile(r"[+-]?\d+(?:\.\d+)?% \[[^\]]+\]")


def _checkout(root: Path, run: str) -> Path:
    """A checkout's target/criterion holding the book's ``run`` as its latest (``new``) results."""
    new = root / "target" / "criterion" / "Fibonacci" / "Iterative" / "new"
    shutil.copytree(BOOK / run, new)
    return new


@pytest.mark.parametrize("name", ["sample.json", "raw.csv", "estimates.json"])
def test_two_checkouts_are_two_variants(tmp_path: Path, name: str) -> None:
    old, new = _checkout(tmp_path / "x", "base") / name, _checkout(tmp_path / "y", "new") / name
    reference = run_abstat("compare", str(BOOK / "base" / name), str(BOOK / "new" / name))
    assert reference.returncode == 0, reference.stderr
    result = run_abstat("compare", str(old), str(new))
    assert result.returncode == 0, result.stderr
    assert f"baseline {old}" in result.stdout and str(new) in result.stdout
    assert "pooled" not in result.stdout
    assert CHANGE.findall(result.stdout) == CHANGE.findall(reference.stdout) != []


def test_names_given_win_and_directories_of_several_variants_are_refused(tmp_path: Path) -> None:
    old, new = _checkout(tmp_path / "x", "base") / "sample.json", _checkout(tmp_path / "y", "new") / "sample.json"
    named = run_abstat("compare", f"before={old}", f"after={new}")
    assert named.returncode == 0 and "baseline before" in named.stdout, named.stderr
    for root in ("x", "y"):
        shutil.copytree(BOOK / "base", tmp_path / root / "target" / "criterion" / "Fibonacci" / "Iterative" / "base")
    both = run_abstat("compare", str(tmp_path / "x" / "target"), str(tmp_path / "y" / "target"))
    assert both.returncode == 2, both.stdout
    assert "its variants (base, new) are another input's too" in both.stderr
    assert len(both.stderr.strip().splitlines()) == 1
