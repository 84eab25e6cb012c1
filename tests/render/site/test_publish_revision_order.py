"""The site names (and uses) the revision order as ``abstat history`` does (issue 35): with ``--repo`` the
series are in git's topological order on both, and both pages and CLI say "git topological order";
without a repository both say "commit time, then first seen"."""

from __future__ import annotations

import re

from support.bisect_repos import git, make_repo
from support.cli import run_abstat as abstat

from abstat.store import open_store


def _store(path: str, shas: list[str]) -> None:
    with open_store(path) as store:
        for number, sha in enumerate(shas):
            invocation = store.start_invocation("nightly", {"hostname": "ci"}, labels={"rev": sha}, variants=["build"])
            for i in range(3):
                value = 12.0 * (1.10 if number >= 4 else 1.0) + 0.01 * i
                store.add_run(
                    invocation,
                    variant="build",
                    command="make",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=5000.0 + 10 * number + i,
                    wall=value,
                    values={"wall": [value]},
                    units={"wall": "s"},
                )
            store.finish_invocation(invocation, "complete")


def _order(text: str) -> str:
    found = re.search(r"revisions in ([^;<]+)", text)
    assert found, text[:2000]
    return found.group(1).strip()


def test_pages_and_cli_name_the_revision_order_alike(tmp_path):
    repo = str(tmp_path / "repo")
    make_repo(repo, commits=8)
    shas = git(repo, "rev-list", "--reverse", "HEAD").split()
    store = str(tmp_path / "s.db")
    _store(store, shas)
    for with_repo, expected in ((True, "git topological order"), (False, "commit time, then first seen")):
        where = ["--repo", repo] if with_repo else ["--repo", str(tmp_path)]  # tmp_path: no git repository
        cli = abstat("history", "nightly", "--store", store, *where, cwd=str(tmp_path))
        assert cli.returncode in (0, 1), cli.stderr
        site = tmp_path / f"site-{with_repo}"
        done = abstat("publish", "--store", store, str(site), *where, cwd=str(tmp_path))
        assert done.returncode == 0, done.stderr
        pages = [p.read_text() for p in (site / "series").glob("*.html")]
        assert pages and all(_order(page) == expected for page in pages)
        assert _order(cli.stdout) == expected
