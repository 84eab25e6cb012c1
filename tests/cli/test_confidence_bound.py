"""attack21 B4: ``-c`` close to 100 sized the permutation draws as 50 / alpha with no bound: ``-c 99.999``
took 71 s and 2.3 GB on 20 against 20 values, ``-c 99.99999`` ended in "internal error: MemoryError".  The
level is now refused above 99.99 in one line (exit 2), on the command line and in a specification."""

from __future__ import annotations

from support.cli import run_abstat as abstat


def test_a_confidence_beyond_the_bound_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a.txt").write_text("\n".join(str(100 + i % 7) for i in range(20)) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(str(103 + i % 5) for i in range(20)) + "\n")
    for level in ("99.999", "99.99999", "100"):
        result = abstat("compare", "-c", level, "a.txt", "b.txt", cwd=str(tmp_path), timeout=60)
        assert result.returncode == 2, (level, result.stderr)
        assert len(result.stderr.strip().splitlines()) <= 2 and "at most 99.99" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    ok = abstat("compare", "-c", "99.99", "a.txt", "b.txt", cwd=str(tmp_path), timeout=120)
    assert ok.returncode == 0, ok.stderr
