"""attack18 M3: a rev label holding a newline made ``git cat-file --batch-check`` answer twice for it, so
every later rev got the next rev's sha (history named the wrong commit).  Such labels are now refused with
one line naming them.  Reference: a real git repository made here, and ``git rev-parse`` on each rev."""

from __future__ import annotations

import csv
import os
import subprocess

import pytest

from abstat.errors import InputError
from abstat.history.revision import resolve
from support.cli import run_abstat

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    path = str(tmp_path / "repo")
    os.makedirs(path)
    _git(path, "init", "-q")
    shas = []
    for i in range(6):
        with open(os.path.join(path, "f"), "w") as handle:
            handle.write(f"{i}\n")
        _git(path, "add", "f")
        _git(path, "commit", "-q", "-m", f"c{i}")
        shas.append(_git(path, "rev-parse", "HEAD"))
    return path, shas


def test_clean_revs_resolve_as_git_rev_parse(repo):
    path, shas = repo
    revs = [sha[:10] for sha in shas] + ["nosuchrev"]
    assert resolve(revs, path) == {**{sha[:10]: sha for sha in shas}, "nosuchrev": None}


@pytest.mark.parametrize("bad", ["{1}\n{0}", "{1}\r", "{1}\x1b[2J", "{1}\x00"])
def test_a_rev_with_a_control_character_is_refused_not_shifted(repo, bad):
    path, shas = repo
    forged = bad.format(*[sha[:10] for sha in shas])
    with pytest.raises(InputError) as err:
        resolve([shas[0][:10], forged, *[sha[:10] for sha in shas[2:]]], path)
    assert repr(forged) in err.value.message


def test_history_cli_names_the_label_in_one_line(repo, tmp_path):
    path, shas = repo
    rows = [(sha[:10], 10 + (2 if i >= 3 else 0) + 0.01 * k) for i, sha in enumerate(shas) for k in range(5)]
    forged = shas[1][:10] + "\n" + shas[0][:10]
    with open(tmp_path / "hg.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rev", "wall"])
        writer.writerows((forged if rev == shas[1][:10] else rev, v) for rev, v in rows)
    run = run_abstat("history", "--input", tmp_path / "hg.csv", "--repo", path, "--no-state", "--min-segment", "2")
    assert run.returncode == 2, run.stdout
    assert (
        len(run.stderr.strip().splitlines()) == 1 and shas[1][:10] in run.stderr and "control character" in run.stderr
    )
