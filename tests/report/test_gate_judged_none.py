"""attack22 A8: a ``--fail-on`` gate that judged no comparison does not pass.  Pairs laid side by side of
which none could be judged (both sides constant, one value a side) exit 2 with one line saying why, in
``compare`` and ``report`` alike; a gate that judged at least one still lets the others pass unjudged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import abstat
from abstat.errors import UsageError
from abstat.report.gate import evaluate
from support.cli import run_abstat


def _write(path: Path, values) -> Path:
    path.write_text("".join(f"{float(v)!r}\n" for v in values))
    return path


def _noisy(path: Path, seed: int) -> Path:
    return _write(path, list(100 + np.random.default_rng(seed).normal(0, 1, 10)))


@pytest.mark.parametrize("fail_on", ["slower", "change"])
def test_compare_of_constant_sides_judges_nothing_and_exits_2(tmp_path: Path, fail_on: str) -> None:
    old = _write(tmp_path / "c1.txt", [100.0] * 3)
    new = _write(tmp_path / "c2.txt", [300.0] * 3)  # +200%, but with no noise estimate
    done = run_abstat("compare", old, new, "--fail-on", fail_on, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"--fail-on {fail_on}: nothing could be judged" in line and "both variants are constant" in line, line
    assert "gate: pass" not in done.stderr and "+200.0%" in done.stdout  # the table is printed as without the gate


def test_report_of_one_value_a_side_judges_nothing_and_exits_2(tmp_path: Path) -> None:
    old = _write(tmp_path / "o1.txt", [100.0])
    new = _write(tmp_path / "o2.txt", [300.0])
    done = run_abstat("report", old, new, "--fail-on", "slower", "--format", "json", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "nothing could be judged" in line and "(o2: not compared: " in line and "1 sample; at least 2" in line, line


def test_a_report_gate_that_judged_one_lets_an_unjudged_one_pass(tmp_path: Path) -> None:
    files = [_noisy(tmp_path / "n1.txt", 1), _noisy(tmp_path / "n2.txt", 2), _write(tmp_path / "o2.txt", [300.0])]
    done = run_abstat("report", *files, "--fail-on", "slower", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate: pass: no comparison of 1 proven slower" in done.stderr
    assert "gate: 1 comparison(s) could not be judged" in done.stderr


def test_evaluate_refuses_a_family_it_cannot_judge_and_keeps_one_it_judged_partly() -> None:
    rng = np.random.default_rng(3)
    constant = abstat.compare([100.0] * 5, [300.0] * 5)
    judged = abstat.compare(list(100 + rng.normal(0, 1, 10)), list(100 + rng.normal(0, 1, 10)))
    with pytest.raises(UsageError, match="nothing could be judged.*candidate vs baseline: both variants are constant"):
        evaluate([constant], "slower", 0.0)
    partly = evaluate([judged, constant], "slower", 0.0)
    assert (partly.judged, partly.unjudged, partly.exit_status) == (1, 1, 0)
    annotation = evaluate([constant], "slower", 0.0, refuse_unjudged=False)  # one comparison's CI annotation
    assert (annotation.judged, annotation.unjudged, annotation.exit_status) == (0, 1, 0)
