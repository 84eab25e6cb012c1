"""attack21 B10: ``compare old='rr/*.txt' new='rr/new*.txt'`` read rr/new*.txt into both variants and hid a +5%
change ("no difference proven", exit 0).  A file read into two variants is refused in one line naming it and
both variants; disjoint patterns compare as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from support.cli import run_abstat


def _runs(root: Path) -> None:
    rng = np.random.default_rng(2)
    root.mkdir()
    for i in range(5):
        np.savetxt(root / f"base{i}.txt", rng.normal(100, 1, 10))
    for i in range(5):
        np.savetxt(root / f"new{i}.txt", rng.normal(105, 1, 10))


def test_a_file_in_two_variants_is_refused(tmp_path: Path) -> None:
    _runs(tmp_path / "rr")
    result = run_abstat("compare", "old=rr/*.txt", "new=rr/new*.txt", "--fail-on", "slower", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "rr/new0.txt: read into two variants, old and new" in line
    apart = run_abstat("compare", "old=rr/base*.txt", "new=rr/new*.txt", "--fail-on", "slower", cwd=tmp_path)
    assert apart.returncode == 1 and "slower" in apart.stdout, apart.stdout + apart.stderr


def test_one_file_named_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    result = run_abstat("compare", "x=a.txt", "y=a.txt", cwd=tmp_path)
    assert result.returncode == 2 and "a.txt: read into two variants, x and y" in result.stderr, result.stderr
