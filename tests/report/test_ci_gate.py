"""The CI gate (--fail-on), its exit statuses, and the github/gitlab outputs (issue 25)."""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import pytest

from abstat.comparison import compare
from abstat.report.gate import evaluate
from support.cli import run_abstat

JOB = """\
import pathlib, random, sys
level, seed = float(sys.argv[1]), int(sys.argv[2])
counter = pathlib.Path(f"job-{seed}.n")
run = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(run + 1))
print(f"t={level * (1 + random.Random(seed * 1000 + run).gauss(0, 0.005)):.6f}")
"""


abstat = functools.partial(run_abstat, timeout=180)


def _ci_job(tmp_path: Path, name: str, level: float, seed: int) -> None:
    """One CI job: 8 runs of the benchmark, each printing its time (0.5% noise)."""
    done = abstat(
        "run",
        "-n",
        "8",
        "--no-progress",
        "--store",
        "ci.db",
        "--experiment",
        name,
        "--metric",
        r"t=t=([0-9.]+)",
        "-v",
        f"bench={sys.executable} job.py {level} {seed}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_fake_ci_job_gates_only_the_slower_commit(tmp_path):
    """The proof of issue 25: the same commit twice, then a 5% slower one, through `run` and
    `compare --fail-on slower --threshold 2`: exit 0, 0, then 1."""
    (tmp_path / "job.py").write_text(JOB)
    _ci_job(tmp_path, "main", 100.0, 1)
    statuses = []
    for name, level, seed in (("same-1", 100.0, 2), ("same-2", 100.0, 3), ("slower", 105.0, 4)):
        _ci_job(tmp_path, name, level, seed)
        done = abstat(
            "compare",
            "main:bench",
            f"{name}:bench",
            "--metric",
            "t",
            "--store",
            "ci.db",
            "--fail-on",
            "slower",
            "--threshold",
            "2",
            cwd=tmp_path,
        )
        assert done.returncode in (0, 1), done.stderr
        statuses.append(done.returncode)
        last = done
    assert statuses == [0, 0, 1]
    assert "gate: FAIL: 1 of 1 comparison(s) proven slower beyond 2%" in last.stderr
    # bad input is 2, not 1: a gate never passes or fails on a typo
    bad = abstat(
        "compare",
        "main:bench",
        "nosuch:bench",
        "--metric",
        "t",
        "--store",
        "ci.db",
        "--fail-on",
        "slower",
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def _comparison(values_b, values_a, threshold=None, **kw):
    return compare(values_b, values_a, threshold=threshold, names=("base", "cand"), **kw)


def test_gate_needs_the_whole_interval_beyond_the_threshold():
    base = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 100.3]
    clear = _comparison(base, [v * 1.05 for v in base], threshold=2)
    assert evaluate([clear], "slower", 2).exit_status == 1
    assert evaluate([clear], "change", 2).exit_status == 1
    assert evaluate([clear], "faster", 2).exit_status == 0
    assert evaluate([clear], "slower", 6).exit_status == 0  # proven slower, not beyond 6%
    # an estimate beyond the threshold whose interval reaches back inside it: not proven beyond
    noisy = _comparison([100, 104, 97, 102, 99, 101], [103, 107, 100, 106, 101, 105], threshold=2)
    lo, hi = noisy.ci_pct
    assert noisy.delta_pct > 2 and lo < 2
    assert evaluate([noisy], "slower", 2).exit_status == 0
    # a throughput: lower is worse
    tput = _comparison(base, [v * 0.9 for v in base], threshold=2, higher_is_better=True)
    assert evaluate([tput], "slower", 2).hits[0].direction == "slower"


def test_gate_holm_over_candidates():
    """Ten candidates of which one is barely significant alone: Holm over the family keeps
    the gate shut where the unadjusted p would have opened it."""
    base = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 100.3]
    marginal = _comparison(base, [v + 0.35 for v in [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 101.9]])
    assert 0.005 < marginal.p_value < 0.05 and marginal.ci_pct[0] > 0
    same = [_comparison(base, list(base)) for _ in range(9)]
    assert evaluate([marginal], "slower", 0).exit_status == 1
    assert evaluate([marginal, *same], "slower", 0).exit_status == 0


def _samples(tmp_path: Path, name: str, values) -> str:
    path = tmp_path / name
    path.write_text("\n".join(map(str, values)) + "\n")
    return str(path)


def test_report_gate_threshold_outliers_and_headered_csv_in_compare(tmp_path):
    base = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 100.3, 100.0, 100.2]
    a = _samples(tmp_path, "a.txt", base)
    b = _samples(tmp_path, "b.txt", [v * 1.05 for v in base[:-1]] + [500.0])
    done = abstat(
        "report",
        "--outliers",
        "tukey",
        a,
        b,
        "--fail-on",
        "slower",
        "--threshold",
        "2",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    (cell,) = [c for row in json.loads(done.stdout)["rows"] for c in row["cells"].values() if c.get("comparison")]
    detail = cell["comparison"]["detail"]
    assert detail["threshold_pct"] == 2.0 and detail["n"] == [10, 9]  # the 500 dropped by Tukey's rule
    ok = abstat("report", a, b, "--fail-on", "slower", "--threshold", "20", cwd=tmp_path)
    assert ok.returncode == 0 and "gate: pass" in ok.stderr
    csv = tmp_path / "r.csv"
    csv.write_text("variant,t\n" + "".join(f"old,{v}\n" for v in base) + "".join(f"new,{v * 1.05}\n" for v in base))
    peer = abstat("compare", str(csv), "--by", "variant", cwd=tmp_path)
    assert peer.returncode == 2  # compare has no --by: one line
    peer = abstat(
        "compare",
        f"x={csv}",
        _samples(tmp_path, "c.txt", base),
        "--threshold",
        "2",
        "--fail-on",
        "change",
        cwd=tmp_path,
    )
    # x is the CSV's two variants read as two runs, 5% apart: two runs that differ are not pooled, and 2 runs
    # against 1 cannot be judged; a gate that judged nothing exits 2 saying why (attack22 A8)
    assert peer.returncode == 2 and "internal error" not in peer.stderr, peer.stderr
    assert "differ by more than their samples do" in peer.stderr and len(peer.stderr.strip().splitlines()) == 1


EVIL = "evil%0A::error::x <img onerror>[l](javascript:alert(1))"


def test_github_and_gitlab_outputs_escape_names(tmp_path):
    base = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 100.3]
    a = _samples(tmp_path, "a.txt", base)
    b = _samples(tmp_path, "b.txt", [v * 1.05 for v in base])
    name = EVIL
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
    done = abstat("compare", a, f"{name}={b}", "--format", "github", "--threshold", "2", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error title=abstat%3A ")
    assert "%250A%3A%3Aerror%3A%3Ax" in lines[0] and "::x" not in lines[0].split("::", 2)[2]
    text = summary.read_text()
    assert "<img" not in text and "&lt;img" in text and "\\[l\\]" in text
    assert "regression(s) proven beyond the threshold" in text
    env.pop("GITHUB_STEP_SUMMARY")
    done = abstat("compare", a, f"{name}={b}", "--format", "gitlab", "--threshold", "2", cwd=tmp_path, env=env)
    (issue,) = json.loads(done.stdout)
    assert issue["severity"] == "major" and issue["check_name"] == "abstat-regression"
    assert len(issue["fingerprint"]) == 64 and "\n" not in issue["description"]
    quiet = abstat("compare", a, a.replace("a.txt", "a.txt"), "--format", "gitlab", cwd=tmp_path, env=env)
    assert quiet.returncode in (0, 2)


@pytest.mark.parametrize("fmt", ["github", "gitlab"])
def test_report_ci_formats(tmp_path, fmt):
    base = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 99.8, 100.3]
    a = _samples(tmp_path, "a.txt", base)
    b = _samples(tmp_path, "b.txt", [v * 1.01 for v in base])
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    done = abstat("report", a, b, "--format", fmt, "--threshold", "5", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    if fmt == "gitlab":
        assert json.loads(done.stdout) == []  # +1% proven, but within the 5% threshold: no issue
    else:
        assert "No regression proven beyond the threshold" in done.stdout and "::error" not in done.stdout


# --------------------------------------------------------------------------
# saved baselines, on both store back ends

from support.store_pg import backend, store_name  # noqa: E402,F401  (fixtures: sqlite and postgresql)


def _run(tmp_path: Path, store: str, experiment: str, level: float, seed: int, runs: int = 6) -> None:
    done = abstat(
        "run",
        "-n",
        str(runs),
        "--no-progress",
        "--store",
        store,
        "--experiment",
        experiment,
        "--metric",
        r"t=t=([0-9.]+)",
        "-v",
        f"bench={sys.executable} job.py {level} {seed}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_saved_baseline_is_frozen_and_notes_another_machine(tmp_path, store_name):
    from abstat.store import open_store

    (tmp_path / "job.py").write_text(JOB)
    _run(tmp_path, store_name, "main", 100.0, 1)  # two CI jobs of main: two invocations, two run groups
    _run(tmp_path, store_name, "main", 100.0, 5)
    saved = abstat("baseline", "save", "main", "main", "--store", store_name, cwd=tmp_path)
    assert saved.returncode == 0 and "2 invocation(s), 12 run(s)" in saved.stdout, saved.stderr
    _run(tmp_path, store_name, "main", 200.0, 2)  # later runs of main do not move the baseline
    _run(tmp_path, store_name, "pr", 110.0, 3)
    listed = abstat("baseline", "list", "--store", store_name, cwd=tmp_path)
    assert listed.stdout.startswith("main  ") and listed.stdout.rstrip().endswith("12 run(s)")
    with open_store(store_name) as store:  # the candidate ran on another kernel
        (machine,) = store.db.execute(
            "SELECT i.machine FROM invocations i JOIN experiments e ON e.id = i.experiment_id WHERE e.name = ?", ("pr",)
        ).fetchone()
        record = dict(json.loads(machine), kernel_release="6.99.0-other")
        with store.db.transaction():
            store.db.execute(
                "UPDATE invocations SET machine = ? WHERE experiment_id = (SELECT id FROM experiments WHERE name = ?)",
                (json.dumps(record), "pr"),
            )
    gate = abstat(
        "compare",
        "baseline:main",
        "pr:bench",
        "--metric",
        "t",
        "--store",
        store_name,
        "--fail-on",
        "slower",
        "--threshold",
        "2",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert gate.returncode == 1, gate.stderr
    (comparison,) = json.loads(gate.stdout)["comparisons"]
    assert comparison["n"] == [12, 6] and 7 < comparison["delta_pct"] < 13  # the frozen 12 runs of main
    assert comparison["unit"] == "runs" and comparison["runs"] == [2, 1]  # each job a group
    (note,) = [w for w in comparison["warnings"] if w["code"] == "baseline-machine"]
    assert "another machine configuration" in note["message"] and "kernel" in note["message"]
    missing = abstat("compare", "baseline:nope", "pr:bench", "--store", store_name, cwd=tmp_path)
    assert missing.returncode == 2 and "no saved baseline 'nope'" in missing.stderr
