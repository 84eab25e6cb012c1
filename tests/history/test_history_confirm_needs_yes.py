"""``abstat history --confirm`` builds revisions the data names: it lists them and needs ``--yes`` (attack19 F8).

A history (a CSV, or a store that may have been imported) names the revisions ``--confirm`` checks out and
builds with the user's ``--build``, which runs the tree's own scripts.  Here two commits exist only under
``refs/pull/99/head`` (a fetched pull request) and their ``build.sh`` leaves a marker: without ``--yes``
nothing is built, the revisions are listed with the label the data gave them and whether HEAD reaches them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

from support import paths

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True, text=True).stdout.strip()


def _repo(repo: str, marker: str) -> tuple[list[str], list[str]]:
    os.makedirs(repo)
    _git(repo, "init", "-q", "-b", "main")
    with open(os.path.join(repo, "bench.sh"), "w") as handle:
        handle.write('echo "wall: 10"\n')
    main = []
    for i in range(6):
        with open(os.path.join(repo, "build.sh"), "w") as handle:
            handle.write("true\n")
        with open(os.path.join(repo, "f"), "w") as handle:
            handle.write(f"{i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{i}")
        main.append(_git(repo, "rev-parse", "HEAD"))
    _git(repo, "checkout", "-q", "-b", "evil")
    with open(os.path.join(repo, "build.sh"), "w") as handle:
        handle.write(f"touch {marker}\n")
    evil = []
    for name in ("e1", "e2"):
        with open(os.path.join(repo, "f"), "w") as handle:
            handle.write(name)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", name)
        evil.append(_git(repo, "rev-parse", "HEAD"))
    _git(repo, "update-ref", "refs/pull/99/head", "HEAD")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "branch", "-qD", "evil")
    return main, evil


def _history(tmp_path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[str], list[str], str]:
    repo, marker = str(tmp_path / "repo"), str(tmp_path / "PWNED")
    main, evil = _repo(repo, marker)
    data = str(tmp_path / "h.csv")
    rng = random.Random(3)
    with open(data, "w") as handle:
        handle.write("rev,wall\n")
        for i, sha in enumerate(main + evil):
            handle.writelines(f"{sha[:12]},{(10 if i < 6 else 12) + rng.gauss(0, 0.1)}\n" for _ in range(5))
    argv = ["history", "--input", data, "--repo", repo, "--no-state", "--min-segment", "2", "--confirm"]
    argv += ["--build", "sh build.sh", "--run", "sh bench.sh", "--run-metric", r"ns=wall: (\d+)"]
    argv += ["--confirm-runs", "3", "--store", str(tmp_path / "c.db"), *extra]
    env = {**os.environ, "PYTHONPATH": paths.SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "abstat", *argv], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    return done, main, evil, marker


def test_without_yes_the_revisions_are_listed_and_nothing_is_built(tmp_path):
    done, main, evil, marker = _history(tmp_path)
    assert done.returncode == 2, done.stderr
    assert not os.path.exists(marker)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("abstat history:") and "--yes" in lines[-1]
    before = next(line for line in lines if main[-1] in line)
    after = next(line for line in lines if evil[0] in line)
    assert main[-1][:12] in before and "reachable from HEAD" in before and "not" not in before
    assert evil[0][:12] in after and "not reachable from HEAD" in after


def test_with_yes_it_builds_them(tmp_path):
    done, _, evil, marker = _history(tmp_path, "--yes")
    assert done.returncode == 0, done.stderr
    assert os.path.exists(marker)  # the user saw the list and said yes: the pull request's build.sh ran
    assert evil[0][:12] in done.stdout
