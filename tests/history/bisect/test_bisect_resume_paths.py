"""Wave 19 (attack18 H3): the artifact of ``abstat bisect --host`` is a file of the tree, whoever gives it.

A forged store's ``artifact`` of ``/ABS/SECRET`` was neither shown nor checked: with ``--yes``, ``--build``'s
worktree joined with it named the local file, which was copied to the box.  Now a stored artifact is checked
as ``--artifact`` is (relative, no ``..``) and shown before ``--yes``; and a file of the commit that links
outside its tree is refused, not followed (``--artifact link`` with ``link -> /ABS/SECRET`` committed).
The box is a stand-in ``ssh`` that keeps what is copied to it and answers nothing else (no network).
"""

from __future__ import annotations

import os
import subprocess
import sys

from support import forged, paths
from support.cli import run_abstat

SECRET = "TOP SECRET: the workstation's key\n"


def _repo(path: str) -> list[str]:
    """Three commits, each with ``kernel`` (in the tree), ``inside`` (a link to it) and ``link`` (to SECRET)."""
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    os.makedirs(path)
    secret = os.path.join(os.path.dirname(path), "SECRET")
    with open(secret, "w") as handle:
        handle.write(SECRET)
    os.symlink(secret, os.path.join(path, "link"))
    os.symlink("kernel", os.path.join(path, "inside"))
    shas = []
    for i in range(3):
        with open(os.path.join(path, "kernel"), "w") as handle:
            handle.write(f"kernel {i}\n")
        for args in (["init", "-q"] if i == 0 else [], ["add", "-A"], ["commit", "-qm", f"c{i}"]):
            if args:
                subprocess.run(["git", *args], cwd=path, env=env, check=True)
        shas.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, check=True, capture_output=True, text=True))
    return [done.stdout.strip() for done in shas]


def _box(tmp_path) -> dict[str, str]:
    """``ABSTAT_SSH_COMMAND``: a box that takes the artifact copied to it (kept in ``copied``) and cannot be
    reached for anything else; every command it is given is logged."""
    fake = tmp_path / "ssh"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {os.path.join(str(paths.ROOT), 'tests', 'support')!r})\n"
        "import local_ssh\n"
        "_, destination, command = local_ssh.parse(sys.argv[1:])  # a master (-M) waits to be stopped\n"
        "text = ' '.join(command)\n"
        f"open({str(tmp_path / 'ssh.log')!r}, 'a').write(text + '\\n')\n"
        "if 'cat >' in text:\n"
        f"    open({str(tmp_path / 'copied')!r}, 'ab').write(sys.stdin.buffer.read())\n"
        "    sys.exit(0)\n"
        "sys.exit(255 if command else 0)\n"
    )
    fake.chmod(0o755)
    return dict(os.environ, ABSTAT_SSH_COMMAND=str(fake))


def _forged(store: str, repo: str, shas: list[str], artifact: str) -> None:
    setup = {
        "label": "box",
        "destination": "box.lab",
        "run": "echo 'wall: 5'",
        "metric": "wall",
        "build": "true",
        "artifact": artifact,
        "boot_timeout": 5.0,
    }
    config = {"repo": repo, "good": shas[0], "bad": shas[-1], "budget": 20, "confidence": 0.95, "setup": setup}
    forged.bisect_store(store, config)


def _copied(tmp_path) -> str:
    path = tmp_path / "copied"
    return path.read_text() if path.exists() else ""


def test_a_stored_artifact_outside_the_tree_is_refused_before_anything_runs(tmp_path):
    repo = str(tmp_path / "repo")
    shas = _repo(repo)
    env = _box(tmp_path)
    for artifact in (str(tmp_path / "SECRET"), "../SECRET", "kernel/../../SECRET"):
        store = str(tmp_path / f"s{len(artifact)}.db")
        _forged(store, repo, shas, artifact)
        result = run_abstat("bisect", "--resume", "bx", "--store", store, "--yes", cwd=str(tmp_path), env=env)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.splitlines() == [
            f"abstat bisect: --resume 'bx': the stored box setting 'artifact' {artifact!r} is not a path "
            "inside the repository's tree (relative, without '..')"
        ]
    assert not (tmp_path / "ssh.log").exists() and SECRET not in _copied(tmp_path)


def test_the_stored_artifact_is_shown_before_yes(tmp_path):
    repo = str(tmp_path / "repo")
    shas = _repo(repo)
    store = str(tmp_path / "s.db")
    _forged(store, repo, shas, "arch/x86/boot/bzImage")
    result = run_abstat("bisect", "--resume", "bx", "--store", store, cwd=str(tmp_path), env=_box(tmp_path))
    assert result.returncode == 2
    assert (
        "  copied from the worktree to the box, as ABSTAT_ARTIFACT: --artifact arch/x86/boot/bzImage"
        in result.stderr.splitlines()
    ), result.stderr
    assert not (tmp_path / "ssh.log").exists()


def test_an_artifact_that_links_outside_the_tree_is_refused_and_one_inside_is_copied(tmp_path):
    repo = str(tmp_path / "repo")
    _repo(repo)
    env = _box(tmp_path)
    common = ["--repo", repo, "--good", "HEAD~2", "--bad", "HEAD", "--host", "box=box.lab", "--build", "true"]
    common += ["--run", "echo 'wall: 5'", "--metric", "wall", "--no-progress"]
    result = run_abstat(
        "bisect", *common, "--artifact", "link", "--store", str(tmp_path / "a.db"), cwd=str(tmp_path), env=env
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"abstat bisect: --artifact 'link' leads outside the tree (to {tmp_path / 'SECRET'}): nothing is copied"
    )
    assert SECRET not in _copied(tmp_path) and not (tmp_path / "ssh.log").exists()
    # a link to a file of the tree is that file (then the box cannot be reached: exit 2, the copy made)
    result = run_abstat(
        "bisect", *common, "--artifact", "inside", "--store", str(tmp_path / "b.db"), cwd=str(tmp_path), env=env
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert _copied(tmp_path) == "kernel 0\n"
