"""attack21 B3: ``report d1/x.txt d2/x.txt`` (files named alike in two directories, two hyperfine results of
one command, criterion's ``new`` of two checkouts) pooled both inputs into one variant, compared nothing, and
``--fail-on slower`` passed ("no comparison of 0", exit 0) on a regression.  report names such inputs apart as
compare does (the reference: compare of the same files), two results of one command in one hyperfine file are
two benchmarks, and a gate given nothing to compare exits 2 in one line saying why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from support.cli import run_abstat

GATED = re.compile(r"slower ([+-][\d.]+% \[[^\]]+\])")  # the gate's line: the change and its interval


def _samples(path: Path, mu: float, seed: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.random.default_rng(seed).normal(mu, 1.0, 20))
    return path


def _hyperfine(path: Path, *results: tuple[str, float]) -> Path:
    rng = np.random.default_rng(2)
    docs = []
    for command, mu in results:
        times = [float(t) for t in rng.normal(mu, 0.01, 10)]
        docs.append({"command": command, "mean": float(np.mean(times)), "times": times, "exit_codes": [0] * 10})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"results": docs}))
    return path


def test_files_named_alike_in_two_directories_are_two_variants(tmp_path: Path) -> None:
    old, new = _samples(tmp_path / "d1" / "x.txt", 100, 1), _samples(tmp_path / "d2" / "x.txt", 110, 2)
    reference = run_abstat("compare", old, new, "--fail-on", "slower")
    result = run_abstat("report", old, new, "--fail-on", "slower")
    assert result.returncode == reference.returncode == 1, result.stdout + result.stderr
    assert "pooled" not in result.stdout and f"baseline {old}" in result.stdout
    assert GATED.findall(result.stderr) == GATED.findall(reference.stderr) != []
    assert "gate: FAIL: 1 of 1" in result.stderr


def test_hyperfine_files_of_one_command_in_two_directories(tmp_path: Path) -> None:
    old = _hyperfine(tmp_path / "old" / "bench.json", ("./bench", 1.0))
    new = _hyperfine(tmp_path / "new" / "bench.json", ("./bench", 1.2))
    result = run_abstat("report", old, new, "--fail-on", "slower")
    assert result.returncode == 1, result.stdout + result.stderr
    reference = run_abstat("compare", old, new, "--fail-on", "slower")
    assert GATED.findall(result.stderr) == GATED.findall(reference.stderr) != []


def test_one_command_twice_in_one_hyperfine_file_is_two_benchmarks(tmp_path: Path) -> None:
    path = _hyperfine(tmp_path / "hf.json", ("a", 1.0), ("a", 1.2))
    result = run_abstat("report", path, "--fail-on", "slower")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a #2" in result.stdout and "results[1] is the command of results[0] (a) again" in result.stdout
    assert "pooled" not in result.stdout


def test_files_of_one_variant_among_others_are_still_pooled(tmp_path: Path) -> None:
    paths = [
        _samples(tmp_path / f"r{run}" / f"{name}.txt", mu, run)
        for run in (1, 2)
        for name, mu in (("before", 100), ("after", 110))
    ]
    result = run_abstat("report", *paths)
    assert result.returncode == 0, result.stderr
    assert "baseline before" in result.stdout and "pooled as separate runs" in result.stdout


def test_a_file_given_twice_is_refused(tmp_path: Path) -> None:
    path = _samples(tmp_path / "a.txt", 100, 1)
    result = run_abstat("report", path, tmp_path / "." / "a.txt")
    assert result.returncode == 2 and "given twice" in result.stderr, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_gate_with_nothing_to_compare_exits_2_saying_why(tmp_path: Path) -> None:
    path = _samples(tmp_path / "a.txt", 100, 1)
    result = run_abstat("report", path, "--label", "variant=same", "--fail-on", "slower")
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "--fail-on slower: nothing to gate: no row has both the baseline variant=same" in line
    assert "gate: pass" not in result.stderr


def test_a_gate_over_pairs_none_of_which_can_be_judged_exits_2_saying_why(tmp_path: Path) -> None:
    # attack22 A8: laid side by side but none judged is no pass either (tests/report/test_gate_judged_none.py)
    (tmp_path / "a.txt").write_text("1.0\n")
    (tmp_path / "b.txt").write_text("1.5\n")
    result = run_abstat("report", tmp_path / "a.txt", tmp_path / "b.txt", "--fail-on", "slower")
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "--fail-on slower: nothing could be judged" in line and "1 sample; at least 2" in line, line
