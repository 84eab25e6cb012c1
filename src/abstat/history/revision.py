"""Revisions: what ``abstat run --rev`` records, and git's order of revisions.

Standard library only (subprocess + git).  Every git call has a timeout and
its failure is an :class:`InputError` naming the repository.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from abstat.errors import InputError

REV_LABEL = "rev"
TIME_LABEL = "commit_time"
GIT_TIMEOUT_S = 120


def git(
    args: Sequence[str], cwd: str, *, check: bool = True, timeout: float = GIT_TIMEOUT_S, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``cwd``; InputError when it fails and ``check``."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except (FileNotFoundError, NotADirectoryError):
        if not os.path.isdir(cwd):
            raise InputError("no such directory", path=cwd) from None
        raise InputError("git is not installed", path=cwd) from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {' '.join(args[:2])} took more than {timeout:g} s", path=cwd) from None
    if check and done.returncode != 0:
        message = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise InputError(f"git {' '.join(args[:2])}: {message}", path=cwd)
    return done


def head_labels(cwd: str = ".") -> dict[str, str]:
    """``{"rev": <full sha of HEAD>, "commit_time": <committer time, Unix seconds>}``."""
    done = git(["log", "-1", "--format=%H %ct", "HEAD"], cwd, check=False)
    if done.returncode != 0:
        raise InputError(
            "{rev}: not a git repository with a commit (use {label} rev=... instead)",
            path=os.path.abspath(cwd),
            fields=["rev", "label"],
        )
    sha, _, when = done.stdout.strip().partition(" ")
    return {REV_LABEL: sha, TIME_LABEL: when}


def resolve(revs: Sequence[str], cwd: str) -> dict[str, str | None]:
    """Each revision name -> full commit sha, or None when the repository does not know it."""
    if not revs:
        return {}
    for rev in revs:  # git cat-file --batch-check reads one name a line: a newline would shift the answers
        if any(ord(c) < 32 or ord(c) == 127 for c in rev):
            raise InputError(f"revision {rev!r} holds a control character (a newline?): not a revision name", path=cwd)
    text = "".join(f"{rev}^{{commit}}\n" for rev in revs)
    done = git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd, stdin=text)
    answers = done.stdout.splitlines()
    if len(answers) != len(revs):
        raise InputError(f"git cat-file answered {len(answers)} lines for {len(revs)} revisions", path=cwd)
    found: dict[str, str | None] = {}
    for rev, line in zip(revs, answers, strict=True):
        parts = line.split()
        found[rev] = parts[0] if len(parts) == 2 and parts[1] == "commit" else None
    return found


def is_repository(cwd: str) -> bool:
    try:
        return git(["rev-parse", "--git-dir"], cwd, check=False).returncode == 0
    except InputError:
        return False


def topological_order(shas: Sequence[str], cwd: str) -> list[str]:
    """The given commits, oldest first, in git's topological order
    (``git rev-list --topo-order --reverse``, limited to the history between them)."""
    unique = list(dict.fromkeys(shas))
    if len(unique) <= 1:
        return unique
    base = git(["merge-base", "--octopus", *unique], cwd, check=False).stdout.strip()
    args = ["rev-list", "--topo-order", "--reverse", *unique]
    if base:
        parents = git(["rev-parse", f"{base}^@"], cwd, check=False).stdout.split()
        if parents:
            args += ["--not", *parents]
    wanted = set(unique)
    listed = [sha for sha in git(args, cwd).stdout.split() if sha in wanted]
    missing = [sha for sha in unique if sha not in set(listed)]
    return listed + missing


def commits_between(good: str, bad: str, cwd: str) -> list[str]:
    """``good`` then every commit after it up to ``bad`` (first-parent-free
    topological order, as ``git bisect`` considers them), full shas."""
    listed = git(["rev-list", "--topo-order", "--reverse", "--ancestry-path", f"{good}..{bad}"], cwd).stdout.split()
    if not listed:
        raise InputError(f"no commits between {good} and {bad} (is {good} an ancestor of {bad}?)", path=cwd)
    return [good, *listed]


def commit_subject(sha: str, cwd: str) -> str:
    return git(["log", "-1", "--format=%s", sha], cwd, check=False).stdout.strip()


def commit_time(sha: str, cwd: str) -> str:
    return git(["log", "-1", "--format=%ct", sha], cwd, check=False).stdout.strip()


def checkout_listing(revs: Sequence[str], cwd: str, ref: str = "HEAD") -> list[str]:
    """What checking out ``revs`` (names read from data) means, one line each, for the user to approve:
    the commit's full sha, the name as the data gave it (quoted as JSON), and whether ``ref`` reaches it
    (a commit on no branch of the user's, a fetched pull request's say, runs its own scripts when built)."""
    import json

    lines = []
    for rev, sha in resolve(list(dict.fromkeys(revs)), cwd).items():
        if sha is None:
            lines.append(f"  {json.dumps(rev, ensure_ascii=False)}: not a commit of the repository")
            continue
        reached = git(["merge-base", "--is-ancestor", sha, ref], cwd, check=False).returncode == 0
        where = f"reachable from {ref}" if reached else f"not reachable from {ref}"
        lines.append(f"  {sha} ({json.dumps(rev, ensure_ascii=False)}): {where}")
    return lines
