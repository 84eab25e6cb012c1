"""abstat bisect on histories with merges: the commit graph against git's own view of it.

References: the ancestor closure computed densely (numpy), ``git rev-list`` for ancestry, and
``git bisect run`` with a deterministic step script (the commit's work, not a timing) for the
first bad commit.  The repositories (bisect_repos.SHAPES): the issue's main m1..m7 with a side
branch forked before the slowdown and merged; the same with a topic branch merged into the side
branch first (a nested merge); and a side branch forked before the good end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from support.bisect_repos import (
    BASE_WORK,
    BUILD,
    METRIC,
    RUN,
    SHAPES,
    git_bisect_run,
    make_merge_repo,  # noqa: E402
    noise_env,
)

from abstat.history.bisect.driver import load_history  # noqa: E402
from abstat.history.bisect.graph import Graph  # noqa: E402
from abstat.history.bisect.search import Search, simulate  # noqa: E402
from support import paths

SRC = paths.SRC
MERGE = "Merge branch 'side'"
CASES = [
    ("side", "m4"),
    ("side", "s3"),
    ("side", MERGE),
    ("nested", "t2"),
    ("nested", "m4"),
    ("before-good", "s3"),
    ("before-good", "m4"),
]


def _closure(parents: list[list[int]]) -> np.ndarray:
    n = len(parents)
    ancestors = np.zeros((n + 1, n + 1), dtype=bool)
    for i in range(1, n + 1):
        ancestors[i, i] = True
        for p in parents[i - 1]:
            if p > 0:
                ancestors[i] |= ancestors[p]
    return ancestors[1:, 1:]


def _random_dag(rng: np.random.Generator, n: int) -> list[list[int]]:
    parents: list[list[int]] = []
    for i in range(1, n + 1):
        listed = [] if i == 1 or rng.random() < 0.05 else [i - 1 if rng.random() < 0.7 else int(rng.integers(1, i))]
        if i > 2 and rng.random() < 0.25:  # a merge
            listed.append(int(rng.integers(1, i)))
        parents.append(sorted(set(listed)))
    has_child = {p for listed in parents for p in listed}
    for i in range(1, n):  # every commit an ancestor of the last
        if i not in has_child:
            j = int(rng.integers(i + 1, n + 1))
            parents[j - 1] = sorted(set(parents[j - 1]) | {i})
            has_child.add(i)
    return parents


def test_graph_sums_equal_the_dense_ancestor_closure_on_random_dags():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        parents = _random_dag(rng, n)
        graph, closure = Graph(parents), _closure(parents)
        p, v = rng.random(n), rng.normal(size=n) * (rng.random(n) < 0.3)
        assert np.allclose(graph.bad_mass(p), closure @ p)
        assert np.allclose(graph.descendant_sums(v), closure.T @ v)
        assert all(graph.is_ancestor(k, i) == closure[i - 1, k - 1] for k in range(1, n + 1) for i in range(1, n + 1))
    assert Graph.linear(5).segments == 1 and Graph.linear(5).merges == 0


def test_graph_refuses_what_is_not_a_history_ending_at_the_bad_commit():
    with pytest.raises(ValueError):
        Graph([[], [2]])  # a parent after its child
    with pytest.raises(ValueError):
        Graph([[], [1], [1]])  # commit 2 is no ancestor of the bad end 3


class Histories:
    """Each (shape, culprit) history built once for the module, and git bisect run's first bad commit
    on it found once (``truth``).  The tests that only read a history share it; a test that runs abstat
    bisect, which adds and locks worktrees, does so in its own copy (``copy``)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.built: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
        self.truths: dict[tuple[str, str], str] = {}

    def get(self, shape: str, culprit: str) -> tuple[str, dict[str, str]]:
        if (shape, culprit) not in self.built:
            repo = str(self.factory.mktemp("history") / "repo")
            self.built[shape, culprit] = repo, make_merge_repo(repo, shape, culprit)
        return self.built[shape, culprit]

    def truth(self, shape: str, culprit: str) -> str:
        if (shape, culprit) not in self.truths:
            repo, shas = self.get(shape, culprit)
            self.truths[shape, culprit] = _truth(repo, shas, culprit)
        return self.truths[shape, culprit]

    def copy(self, shape: str, culprit: str, where) -> tuple[str, dict[str, str]]:
        repo, shas = self.get(shape, culprit)
        mine = str(where / "repo")
        shutil.copytree(repo, mine, symlinks=True)
        return mine, shas


@pytest.fixture(scope="module")
def histories(tmp_path_factory) -> Histories:
    return Histories(tmp_path_factory)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_graph_is_gits_ancestry(histories, shape):
    repo, shas = histories.get(shape, "m4")
    commits, parents, graph = load_history("m1", shas["good"], "m7", shas["bad"], repo)
    listed = subprocess.run(
        ["git", "rev-list", shas["bad"], "--not", shas["good"]], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    assert sorted(commits[1:]) == sorted(listed) and commits[-1] == shas["bad"]  # what git bisect considers
    index = {sha: i for i, sha in enumerate(commits)}
    for i, sha in enumerate(commits[1:], start=1):
        ancestors = subprocess.run(
            ["git", "rev-list", sha, "--not", shas["good"]], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.split()
        assert {index[a] for a in ancestors} == {k for k in range(1, len(commits)) if graph.is_ancestor(k, i)}
    assert graph.merges == {"side": 1, "nested": 2, "before-good": 1}[shape]


def _truth(repo: str, shas: dict[str, str], culprit: str) -> str:
    """git bisect run's first bad commit (deterministic script), which must be the one built slow."""
    first_bad = git_bisect_run(repo, shas["good"], shas["bad"], BASE_WORK)
    assert first_bad == shas[culprit]
    return first_bad


@pytest.mark.parametrize("shape, culprit", CASES)
def test_search_on_the_real_graph_names_gits_first_bad_commit_in_every_seeded_trial(histories, shape, culprit):
    """The search alone, on the graph of the real repository, 25 seeded trials: 5% change in 1% noise
    with 3% outliers (as the test benchmark prints), confidence 99%."""
    repo, shas = histories.get(shape, culprit)
    truth = histories.truth(shape, culprit)
    commits, _, graph = load_history("m1", shas["good"], "m7", shas["bad"], repo)
    k = commits.index(truth)
    for trial in range(25):
        rng = np.random.default_rng([21, trial])

        def measure(c: int) -> float:
            bad = c > 0 and graph.is_ancestor(k, c)
            value = 1.0 + 0.05 * bad + rng.normal(0, 0.01)
            return value * (1.1 + 0.2 * rng.random()) if rng.random() < 0.03 else value

        outcome = simulate(Search(graph.n, graph=graph, confidence=0.99), measure)
        assert outcome.status == "found" and outcome.culprit == k, (trial, outcome)


def _bisect(repo: str, shas: dict[str, str], counter: str, seed: int) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--good",
            "m1",
            "--bad",
            "m7",
            "--build",
            BUILD,
            "--run",
            RUN,
            "--metric",
            METRIC,
            "--store",
            os.path.join(os.path.dirname(repo), f"s{seed}.db"),
            "--confidence",
            "99",
            "--format",
            "json",
            "--no-progress",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": SRC, **noise_env(counter, seed)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("shape, culprit", CASES)
def test_bisect_on_merged_histories_agrees_with_git_bisect_run(histories, tmp_path, shape, culprit):
    """End to end (real builds, worktrees, runs; seeded noise): abstat bisect names git bisect run's
    first bad commit in every seeded trial, and says it searched the commit graph."""
    truth = histories.truth(shape, culprit)
    repo, shas = histories.copy(shape, culprit, tmp_path)
    for seed in (1, 2) if (shape, culprit) in TWICE else (3,):
        result = _bisect(repo, shas, str(tmp_path / f"counter{seed}"), seed)
        assert result["status"] == "found" and result["culprit"] == truth, (seed, result)
        assert result["graph"]["merges"] == SHAPES_MERGES[shape] and "ancestors" in result["graph"]["model"]
        assert result["probability"] >= 0.99
        merge_warning = [
            w for w in result["warnings"] if w["code"] == "merge-culprit" and "is a merge whose parents" in w["message"]
        ]
        assert bool(merge_warning) == (culprit == MERGE), result["warnings"]


SHAPES_MERGES = {"side": 1, "nested": 2, "before-good": 1}
TWICE = {("side", "m4"), ("nested", "t2")}  # two seeded trials; one for the others


def test_the_text_output_says_the_history_was_searched_as_a_graph(histories, tmp_path):
    repo, shas = histories.copy("nested", "t2", tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--good",
            "m1",
            "--bad",
            "m7",
            "--build",
            BUILD,
            "--run",
            RUN,
            "--metric",
            METRIC,
            "--store",
            str(tmp_path / "a.db"),
            "--confidence",
            "99",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": SRC, **noise_env(str(tmp_path / "counter"), 5)},
    )
    assert done.returncode == 0, done.stderr
    assert f"culprit: {shas['t2']} t2 slower loop" in done.stdout
    assert "2 merge(s): searched the commit graph" in done.stdout
    assert "2 merge(s): searching the commit graph" in done.stderr.splitlines()[0]


def test_a_good_end_that_is_no_ancestor_of_the_bad_end_is_refused_naming_the_merge_base(histories, tmp_path):
    repo, shas = histories.copy("side", "m4", tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--good",
            "s3",
            "--bad",
            "m6",
            "--run",
            RUN,
            "--metric",
            METRIC,
            "--store",
            str(tmp_path / "a.db"),
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--good s3 is not an ancestor of --bad m6" in done.stderr
    assert f"merge base is {shas['m2'][:12]}" in done.stderr and len(done.stderr.splitlines()) == 1
