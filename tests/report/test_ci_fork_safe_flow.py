"""Issue 36, item 3: the fork-safe CI flow of docs/ci.md, run as written (its trusted job's ``run:``
lines) with a forged artifact: the fork's store carries its own ``baseline@main`` and ``main`` (as slow
as its PR), and its PR is a proven +10% regression.  The gate must exit 1, and the cached baseline is
left as it was."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest
from support import paths
from support.cli import run_abstat

ROOT = str(paths.ROOT)
SRC = os.path.join(ROOT, "src")


def gate_commands() -> list[str]:
    """The ``run:`` steps of the trusted workflow (bench-gate.yml) in docs/ci.md, folded as YAML folds ``>``."""
    with open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8") as handle:
        text = handle.read()
    block = re.search(r"```yaml\n# \.github/workflows/bench-gate\.yml.*?\n```", text, re.S)
    assert block, "docs/ci.md has no bench-gate.yml"
    commands: list[str] = []
    folding = False
    for line in block.group(0).splitlines():
        step = re.match(r"\s*- run: (.*)$", line)
        if step:
            folding = step.group(1).strip() == ">"
            commands.append("" if folding else step.group(1))
        elif folding and line.startswith("          "):
            commands[-1] = (commands[-1] + " " + line.strip()).strip()
        else:
            folding = False
    return [c for c in commands if not c.startswith("pip ")]


def _abstat(env: dict[str, str], cwd: str, *args: str) -> None:
    done = run_abstat(*args, cwd=cwd, env=env, timeout=300)
    assert done.returncode == 0, done.stderr


def _measure(env: dict[str, str], cwd: str, store: str, experiment: str, mean: float, n: int) -> None:
    command = f"{sys.executable} -c \"import random; print('t=%.6f' % random.gauss({mean}, {mean / 100}))\""
    _abstat(
        env,
        cwd,
        "run",
        "--experiment",
        experiment,
        "-n",
        str(n),
        "--shell",
        "--no-progress",
        "--store",
        store,
        "-v",
        f"bench={command}",
        "--metric",
        "t=t=([0-9.]+)",
    )


@pytest.fixture
def workspace(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "abstat").write_text(f'#!/bin/sh\nexec {sys.executable} -m abstat "$@"\n')
    (bin_dir / "abstat").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=SRC, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("ABSTAT_STORE", None)
    return tmp_path, env


def test_the_documented_fork_safe_flow_fails_a_regression_whatever_the_artifact_brings(workspace):
    cwd, env = workspace
    # the main branch's cache: baseline@main, t ~ 1.0
    _measure(env, str(cwd), "baseline.db", "main", 1.0, 20)
    _abstat(env, str(cwd), "baseline", "save", "main", "main", "--store", "baseline.db")
    cached = (cwd / "baseline.db").read_bytes()
    # the fork's artifact: its PR 10% slower, and a forged baseline@main (and main) slower still
    _measure(env, str(cwd), "pr.db", "main", 1.3, 40)
    _abstat(env, str(cwd), "baseline", "save", "main", "main", "--store", "pr.db")
    _measure(env, str(cwd), "pr.db", "pr", 1.1, 20)
    commands = gate_commands()
    assert any("abstat compare" in c and "--fail-on slower" in c for c in commands), commands
    status = 0
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=str(cwd),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        status = done.returncode
        if "abstat compare" not in command:
            assert status == 0, (command, done.stderr)
    assert status == 1, "the gate let a proven regression pass"
    assert (cwd / "baseline.db").read_bytes() == cached  # the cache a later PR restores is as it was


def test_import_takes_only_what_is_named_and_never_a_baseline_unasked(workspace):
    cwd, env = workspace
    _measure(env, str(cwd), "other.db", "main", 1.0, 3)
    _abstat(env, str(cwd), "baseline", "save", "main", "main", "--store", "other.db")
    _measure(env, str(cwd), "other.db", "pr", 1.0, 3)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "abstat", "import", *args],
            cwd=str(cwd),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def names(store: str) -> list[str]:
        db = sqlite3.connect(str(cwd / store))
        try:
            return sorted(row[0] for row in db.execute("SELECT name FROM experiments"))
        finally:
            db.close()

    done = run("--store", "a.db", "--experiment", "pr", "other.db")
    assert done.returncode == 0 and names("a.db") == ["pr"], done.stderr
    assert "not imported: main, baseline@main" in done.stdout, done.stdout
    again = run("--store", "a.db", "--experiment", "pr", "other.db")  # already there: not without --merge
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "--merge" in again.stderr, again.stderr
    assert run("--store", "a.db", "--experiment", "pr", "--merge", "other.db").returncode == 0
    missing = run("--store", "a.db", "--experiment", "nope", "other.db")
    assert missing.returncode == 2 and "'nope': no such experiment" in missing.stderr
    every = run("--store", "b.db", "other.db")
    assert every.returncode == 0 and names("b.db") == ["main", "pr"], every.stderr
    shutil.copy(cwd / "other.db", cwd / "c.db")
    assert run("--store", "d.db", "--baselines", "c.db").returncode == 0 and names("d.db") == [
        "baseline@main",
        "main",
        "pr",
    ]


def test_an_invocation_identity_of_another_experiment_is_refused(workspace):
    """A store whose invocation carries the identity of the target's invocation of another experiment:
    its runs are not attached to that experiment (a later ``baseline save`` would have taken them)."""
    cwd, env = workspace
    _measure(env, str(cwd), "target.db", "main", 1.0, 3)
    _measure(env, str(cwd), "forged.db", "pr", 1.0, 3)
    target, forged = sqlite3.connect(str(cwd / "target.db")), sqlite3.connect(str(cwd / "forged.db"))
    (uid,) = target.execute("SELECT uid FROM invocations").fetchone()
    forged.execute("UPDATE invocations SET uid = ?", (uid,))
    forged.commit()
    forged.close()
    target.close()
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "import", "--store", "target.db", "forged.db"],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "is already in the target as one of experiment 'main'" in done.stderr, done.stderr
    db = sqlite3.connect(str(cwd / "target.db"))
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3
    assert [name for (name,) in db.execute("SELECT name FROM experiments")] == ["main"]
    db.close()
