"""abstat bisect's worktrees: the user's checkout is never touched, and a killed bisection's
worktrees are pruned by the next one (only those, never the user's other worktrees).

Real git, real builds and real processes (SIGKILL, SIGTERM); the benchmark prints seeded noise
(bisect_repos.noise_env) so that the bisections end the same way on a loaded machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from support.bisect_repos import BUILD, METRIC, RUN, git, make_repo, noise_env  # noqa: E402
from support import paths

SRC = paths.SRC


def _env(tmp_path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, **noise_env(str(tmp_path / "counter"), 1), **extra}


def _bisect(repo: str, good: str, bad: str, store: str, **options: str) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "abstat",
        "bisect",
        "--good",
        good,
        "--bad",
        bad,
        "--build",
        BUILD,
        "--run",
        options.pop("run", RUN),
        "--metric",
        METRIC,
        "--store",
        store,
        "--confidence",
        "99",
    ]
    return argv + [item for key, value in options.items() for item in (f"--{key.replace('_', '-')}", value)]


def _worktrees(repo: str) -> dict[str, dict[str, str]]:
    """``git worktree list --porcelain``: path -> its fields."""
    listing = git(repo, "worktree", "list", "--porcelain")
    entries = {}
    for block in listing.split("\n\n"):
        fields = dict((line.split(" ", 1) + [""])[:2] for line in block.splitlines() if line)
        entries[fields["worktree"]] = fields
    return entries


def test_a_benchmark_that_deletes_git_with_tmpdir_inside_the_repository_leaves_the_users_work_alone(tmp_path):
    repo = str(tmp_path / "repo")
    shas = make_repo(repo, commits=24, slow_at=13)
    inside = os.path.join(repo, "tmp")  # $TMPDIR inside the repository, as on many CI runners
    os.makedirs(inside)
    with open(os.path.join(repo, "NOTES"), "a") as out:  # uncommitted work: a change, a staged file, a new file
        out.write("work in progress\n")
    with open(os.path.join(repo, "staged.txt"), "w") as out:
        out.write("staged\n")
    git(repo, "add", "staged.txt")
    with open(os.path.join(repo, "untracked.txt"), "w") as out:
        out.write("mine\n")
    before = {
        name: open(os.path.join(repo, name)).read() for name in ("NOTES", "staged.txt", "untracked.txt", "work.h")
    }
    status = git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!tmp")
    # the benchmark removes its tree's .git file, then checks that git finds no repository above the tree
    run = f"rm -f .git && {RUN} && ! git rev-parse --git-dir >/dev/null 2>&1"
    done = subprocess.run(
        _bisect(repo, shas[0], shas[-1], str(tmp_path / "a.db"), run=run, format="json"),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path, TMPDIR=inside),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "found" and result["culprit"] == shas[12], done.stdout
    assert result["skipped"] == []  # every run passed: no git above the tree ever answered
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"  # not detached
    assert git(repo, "rev-parse", "HEAD") == shas[-1]
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!tmp") == status
    assert {name: open(os.path.join(repo, name)).read() for name in before} == before
    assert list(_worktrees(repo)) == [repo] and os.listdir(inside) == []


def _wait_for(predicate, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except subprocess.CalledProcessError:  # `git worktree list` meeting a `git worktree add` half done
            pass  # (exit 128 once in five full runs, while a bisection made its worktrees): look again
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _ours(repo: str) -> dict[str, dict[str, str]]:
    return {
        path: fields
        for path, fields in _worktrees(repo).items()
        if fields.get("locked", "").startswith("abstat bisect")
    }


def test_the_next_bisect_prunes_a_sigkilled_bisects_worktrees_and_nothing_else(tmp_path):
    repo = str(tmp_path / "repo")
    shas = make_repo(repo, commits=16, slow_at=9)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = _env(tmp_path, TMPDIR=str(tmpdir))
    # the user's own worktrees: an ordinary one, a locked one, one whose directory is gone (prunable),
    # and one in a directory named like abstat's but not made by it
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "mine"), shas[3])
    git(
        repo, "worktree", "add", "-q", "--detach", "--lock", "--reason", "on a USB disk", str(tmp_path / "usb"), shas[4]
    )
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "gone"), shas[5])
    subprocess.run(["rm", "-rf", str(tmp_path / "gone")], check=True)
    lookalike = tmpdir / "abstat-bisect-mine" / "good"
    git(repo, "worktree", "add", "-q", "--detach", str(lookalike), shas[6])
    users = set(_worktrees(repo))
    slow = f"{RUN} && sleep 0.3"

    killed = subprocess.Popen(
        _bisect(repo, shas[0], shas[-1], str(tmp_path / "k.db"), run=slow),
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for(lambda: len(_ours(repo)) >= 3, "the first bisection's worktrees")  # good, bad, a test slot
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    stale = set(_ours(repo))
    assert stale and all(str(killed.pid) in _ours(repo)[path]["locked"] for path in stale)
    stale_roots = {os.path.dirname(path) for path in stale}
    assert all(os.path.isdir(root) for root in stale_roots)  # SIGKILL: nothing was cleaned up

    # the next bisection removes them first; it keeps running while a third one runs to its end
    live = subprocess.Popen(
        _bisect(repo, shas[0], shas[-1], str(tmp_path / "l.db"), run=slow),
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: not set(_worktrees(repo)) & stale, "the stale worktrees to go")
        # prune_stale removes the worktrees, then their roots: the roots go a moment later
        _wait_for(lambda: not any(os.path.exists(root) for root in stale_roots), "the stale roots to go")
        _wait_for(
            lambda: len([p for p in _ours(repo) if str(live.pid) in _ours(repo)[p]["locked"]]) >= 2,
            "the live bisection's worktrees",
        )
        running = {p for p, fields in _ours(repo).items() if str(live.pid) in fields["locked"]}
        done = subprocess.run(
            _bisect(repo, shas[0], shas[-1], str(tmp_path / "n.db"), budget="100"),
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        # it ran to its end: found (0), or inconclusive (3) or several changes (4) when two other
        # bisections and a loaded machine leave 100 runs too few or make the timed benchmark's commits
        # measure apart (seen at load 18 and in a parallel run); which is not what this test is about
        assert done.returncode in (0, 3, 4), done.stderr
        assert "of a bisection that was killed" not in done.stderr  # nothing stale was left
        left = set(_worktrees(repo))
        assert users <= left  # the user's four, the prunable one included
        assert running <= left and all(os.path.isdir(p) for p in running)  # a running bisection's are kept
        assert _worktrees(repo)[str(tmp_path / "usb")]["locked"] == "on a USB disk"
        assert (lookalike / ".git").exists()
    finally:
        live.send_signal(signal.SIGTERM)
        _, err = live.communicate(timeout=60)
    assert live.returncode == 130 and "interrupted" in err, err
    assert f"removed {len(stale)} worktree(s) of a bisection that was killed" in err
    assert set(_worktrees(repo)) == users  # the live one removed its own on SIGTERM
