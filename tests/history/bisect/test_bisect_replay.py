"""abstat bisect's default budget on a real git repository, and the in-process replay of it (issue 34 item 5).

The benchmark of tests/support/bisect_repos.py prints seeded noise drawn from its run's number; ``bench_value``
computes the same value in Python, so a bisection's runs can be replayed through the library
(benchmarks/bisection.py --repos --replay).  Checked here against the compiled benchmark, and end to end: the real
bisection and its replay spend the same runs and state the same answer.  Everything is seeded: no assertion
depends on the machine's speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import paths
from support.bisect_repos import BUILD, METRIC, RUN, bench_value, make_repo, noise_env, work_of

from abstat.history.bisect.search import OVERRUN
from abstat.history.bisect.segments import Bisection, simulate

COMMITS = 32
WORK = 200_000
# benchmarks/bisection.py --repos, seed 1, clean trial 10: one +2% change at commit index 30, 2% noise
CHANGE_AT, NOISE_SEED = 30, 988811802391089072


@pytest.mark.parametrize("shape", ["o0", "o5", "b10"])
def test_bench_value_is_what_the_compiled_benchmark_prints(tmp_path, shape):
    repo = str(tmp_path / "repo")
    make_repo(repo, commits=1, work=WORK)
    subprocess.run(BUILD.split(), cwd=repo, check=True, capture_output=True)
    env = {**os.environ, **noise_env(str(tmp_path / "counter"), NOISE_SEED, 2.0, shape)}
    printed = [
        float(subprocess.run([RUN], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.split()[1])
        for _ in range(40)
    ]
    assert printed == [bench_value(NOISE_SEED, number, WORK, 2.0, shape) for number in range(40)]
    assert len(set(printed)) == 40  # noise, not a constant


def replay(budget: int, overrun: float):
    works = [work_of(i + 1, WORK, {CHANGE_AT + 1: 0.02}) for i in range(COMMITS + 1)]
    taken = []

    def measure(commit: int) -> float:
        taken.append(commit)
        return bench_value(NOISE_SEED, len(taken) - 1, works[commit], 2.0, "o0")

    return simulate(Bisection(COMMITS, budget=budget, overrun=overrun), measure)


def test_the_default_budget_finishes_a_confirmation_on_a_real_repository_as_its_replay_does(tmp_path):
    """At a hard 400 runs this history ends inconclusive while its culprit is being confirmed; abstat bisect's
    default (no --budget) goes on to confirm it, and names the changed commit.  The real bisection (worktrees,
    cc, the runner, the store) spends exactly the runs of the replay and states its probability."""
    hard = replay(400, 0.0)
    assert hard.status == "inconclusive" and 400 <= hard.runs <= 400 + 24
    soft = replay(400, OVERRUN)
    assert soft.status == "found" and soft.culprit == CHANGE_AT and 400 < soft.runs <= 600 + 24
    repo = str(tmp_path / "repo")
    shas = make_repo(repo, commits=COMMITS + 1, work=WORK, steps={CHANGE_AT + 1: 0.02})
    env = {**os.environ, "PYTHONPATH": paths.SRC, **noise_env(str(tmp_path / "counter"), NOISE_SEED, 2.0, "o0")}
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "bisect", "--repo", repo, "--good", shas[0], "--bad", shas[-1]]
        + ["--build", BUILD, "--run", RUN, "--metric", METRIC, "--store", str(tmp_path / "b.db")]
        + ["--format", "json", "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "found" and result["culprit"] == shas[CHANGE_AT]
    assert result["runs"] == soft.runs
    assert result["probability"] == pytest.approx(soft.probability, rel=1e-12)
    with open(tmp_path / "counter") as counter:  # every run the bisection took, and only those
        assert int(counter.read()) == soft.runs
