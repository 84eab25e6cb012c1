"""The git worktrees a bisection builds and measures in, kept away from the user's checkout.

- **Pinned git.**  Every git command abstat runs on a worktree names its
  repository outright (``GIT_DIR``: the worktree's own directory under the
  repository's ``worktrees/``; ``GIT_WORK_TREE``: the tree) and sets
  ``GIT_CEILING_DIRECTORIES`` to the directory holding the worktrees, with
  the variables that locate a repository (``GIT_INDEX_FILE``...) removed from
  its environment.  A benchmark that deletes its tree's ``.git`` file, with
  ``$TMPDIR`` inside the user's repository, cannot make a ``checkout --force``
  land in the user's checkout: git never searches for a repository.  The
  ``.git`` file is written back before each checkout.  The commands abstat
  runs in a tree (build, benchmark) get ``GIT_CEILING_DIRECTORIES`` too (see
  :func:`ceiling_prefix`), so their git stops at the tree.
- **Recognisable.**  The worktrees live in ``$TMPDIR/abstat-bisect-XXXXXXXX/``
  beside a lock file (``abstat-bisect.lock``) that the bisection holds
  (``flock``) while it runs, and each is locked (``git worktree lock``) with
  the reason ``abstat bisect (pid N)``, so that ``git worktree prune`` keeps
  it while the bisection runs.
- **Pruned after a SIGKILL.**  A new :class:`Worktrees` first removes the
  worktrees of this repository that are abstat's (locked with that reason,
  in such a directory) and whose bisection is gone (nobody holds the lock
  file, or the directory is gone).  No other worktree is touched: abstat
  never runs ``git worktree prune``, which would also drop the user's
  worktrees on an unmounted disk.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from abstat.errors import InputError

PREFIX = "abstat-bisect-"
LOCK_FILE = "abstat-bisect.lock"
REASON = "abstat bisect"
GIT_TIMEOUT_S = 300
# Variables that tell git where a repository, its index or its objects are: never inherited.
_LOCATING = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_QUARANTINE_PATH",
)


def pinned_git(
    args: Sequence[str], *, git_dir: str, ceiling: str, work_tree: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` on exactly ``git_dir`` (and ``work_tree``), never a repository git finds itself."""
    env = {key: value for key, value in os.environ.items() if key not in _LOCATING}
    env.update(GIT_DIR=git_dir, GIT_CEILING_DIRECTORIES=ceiling, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    if work_tree is not None:
        env["GIT_WORK_TREE"] = work_tree
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=work_tree if work_tree and os.path.isdir(work_tree) else ceiling,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
        )
    except FileNotFoundError:
        raise InputError("git is not installed", path=git_dir) from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {' '.join(args[:2])} took more than {GIT_TIMEOUT_S} s", path=git_dir) from None
    if check and done.returncode != 0:
        message = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise InputError(f"git {' '.join(args[:2])}: {message}", path=work_tree or git_dir)
    return done


def common_dir(repo: str) -> str:
    """The repository's common git directory (absolute), found from ``repo`` as the user meant it."""
    from abstat.history.revision import git

    found = git(["rev-parse", "--git-common-dir"], repo).stdout.strip()  # relative to repo, or absolute
    return os.path.realpath(os.path.join(repo, found))


def ceiling_prefix(root: str) -> str:
    """Shell text that makes the git of a build or benchmark in a tree under ``root`` stop there."""
    return f"GIT_CEILING_DIRECTORIES={shlex.quote(root)}; export GIT_CEILING_DIRECTORIES; "


class Worktrees:
    """Detached worktrees of one repository under a private temporary directory, removed on close."""

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self.common = common_dir(repo)
        self.pruned = prune_stale(self.common)  # paths of a killed bisection's worktrees, removed
        self.root = os.path.realpath(tempfile.mkdtemp(prefix=PREFIX))
        self._lock = open(os.path.join(self.root, LOCK_FILE), "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock.write(f"pid {os.getpid()}\nrepository {self.common}\n")
        self._lock.flush()
        self.paths: dict[str, str] = {}
        self.gitdirs: dict[str, str] = {}  # name -> the worktree's own git directory
        self.at: dict[str, str] = {}

    def checkout(self, name: str, sha: str) -> str:
        path = self.paths.get(name)
        if path is None:
            path = os.path.join(self.root, name)
            pinned_git(["worktree", "add", "--detach", "--force", path, sha], git_dir=self.common, ceiling=self.root)
            pinned_git(
                ["worktree", "lock", "--reason", f"{REASON} (pid {os.getpid()})", path],
                git_dir=self.common,
                ceiling=self.root,
            )
            self.paths[name] = path
            self.gitdirs[name] = _read_gitfile(path) or _admin_dir(self.common, path) or ""
            if not self.gitdirs[name]:
                raise InputError("git worktree add made no worktree directory", path=path)
        elif self.at.get(name) != sha:
            _restore_gitfile(path, self.gitdirs[name])
            pinned_git(
                ["checkout", "--quiet", "--force", "--detach", sha],
                git_dir=self.gitdirs[name],
                work_tree=path,
                ceiling=self.root,
            )
        self.at[name] = sha
        return path

    def close(self) -> None:
        for name, path in self.paths.items():
            _remove(self.common, path, self.gitdirs.get(name), self.root)
        self.paths.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        self._lock.close()

    def __enter__(self) -> Worktrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_gitfile(path: str) -> str | None:
    try:
        with open(os.path.join(path, ".git")) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(path, text[len("gitdir:") :].strip()))  # relative since git 2.48's option


def _restore_gitfile(path: str, gitdir: str) -> None:
    """Write the tree's ``.git`` file back when a build or benchmark removed or replaced it."""
    if _read_gitfile(path) == gitdir or not os.path.isdir(path):
        return
    dotgit = os.path.join(path, ".git")
    if os.path.isdir(dotgit) and not os.path.islink(dotgit):
        shutil.rmtree(dotgit)
    elif os.path.lexists(dotgit):
        os.unlink(dotgit)
    with open(dotgit, "w") as handle:
        handle.write(f"gitdir: {gitdir}\n")


def _admin_dir(common: str, path: str) -> str | None:
    """The directory under ``COMMON/worktrees/`` whose ``gitdir`` names ``path``'s ``.git`` (gitrepository-layout)."""
    base = os.path.join(common, "worktrees")
    want = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path), ".git")
    try:
        names = os.listdir(base)
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(base, name, "gitdir")) as handle:
                target = os.path.normpath(os.path.join(base, name, handle.read().strip()))
        except OSError:
            continue
        if target in (want, os.path.join(path, ".git")):
            return os.path.join(base, name)
    return None


def _remove(common: str, path: str, gitdir: str | None, ceiling: str) -> None:
    """Remove one of our worktrees: ``git worktree remove`` (locked: forced twice); when git cannot
    (its tree is gone), its directory under ``worktrees/``, which is what ``git worktree prune`` removes."""
    gitdir = gitdir or _admin_dir(common, path)
    if os.path.isdir(path) and gitdir:
        _restore_gitfile(path, gitdir)
        done = pinned_git(
            ["worktree", "remove", "--force", "--force", path], git_dir=common, ceiling=ceiling, check=False
        )
        if done.returncode == 0:
            return
    if gitdir and os.path.dirname(os.path.realpath(gitdir)) == os.path.join(common, "worktrees"):
        shutil.rmtree(gitdir, ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)


def _ours_and_dead(root: str) -> bool:
    """Whether ``root`` is a bisection's directory that no running bisection holds."""
    lock = os.path.join(root, LOCK_FILE)
    if not os.path.isdir(root):
        return True
    try:
        handle = open(lock)
    except OSError:
        return False  # no lock file: not made by this abstat (or its owner is still setting up)
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a bisection holds it
        return True


def prune_stale(common: str) -> list[str]:
    """Remove this repository's worktrees left by a bisection that was killed; their paths.

    Read from the repository's own records (gitrepository-layout(5)): ``worktrees/<id>/gitdir``
    names the tree's ``.git`` file, ``worktrees/<id>/locked`` holds the reason it is locked."""
    base = os.path.join(common, "worktrees")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    removed: list[str] = []
    roots: set[str] = set()
    for name in names:
        admin = os.path.join(base, name)
        try:
            with open(os.path.join(admin, "locked")) as handle:
                reason = handle.read()
            with open(os.path.join(admin, "gitdir")) as handle:
                path = os.path.dirname(os.path.normpath(os.path.join(admin, handle.read().strip())))
        except OSError:
            continue  # not locked: not abstat's
        root = os.path.dirname(path)
        if not reason.startswith(REASON) or not os.path.basename(root).startswith(PREFIX) or not _ours_and_dead(root):
            continue
        _remove(common, path, admin, root if os.path.isdir(root) else os.path.dirname(common))
        removed.append(path)
        roots.add(root)
    for root in roots:
        if os.path.isdir(root) and os.path.exists(os.path.join(root, LOCK_FILE)):
            shutil.rmtree(root, ignore_errors=True)
    return removed
