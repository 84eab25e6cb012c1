"""attack23 #10c: ``GITHUB_STEP_SUMMARY`` naming a SQLite store (or the store compare reads) had the Markdown
summary appended to it (a store grew by 2.6 kB of text).  compare and report --format github now refuse such a
target in one line, exit 2, leaving the file as it was."""

from __future__ import annotations

from pathlib import Path

from support.store_runs import old_new_store


def _store(path):
    return old_new_store(str(path), 101.0, runs=10, seed=6)


def test_the_step_summary_is_not_appended_to_a_store(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db")
    other = _store(tmp_path / "other.db")
    before = {path: Path(path).read_bytes() for path in (db, other)}
    for summary in (db, other):
        for command in (
            ("compare", "--store", db, "e:old", "e:new", "--metric", "t"),
            ("report", "--store", db, "--metric", "t"),
        ):
            done = abstat_cli(*command, "--format", "github", extra_env={"GITHUB_STEP_SUMMARY": summary})
            assert done.returncode == 2, (command, done.stdout, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and "SQLite database or the store in use" in lines[0], done.stderr
    assert {path: Path(path).read_bytes() for path in (db, other)} == before
    markdown = tmp_path / "summary.md"
    done = abstat_cli(
        "compare", "--store", db, "e:old", "e:new", "--metric", "t", "--format", "github",
        extra_env={"GITHUB_STEP_SUMMARY": str(markdown)},
    )  # fmt: skip
    assert done.returncode == 0 and "e:new" in markdown.read_text(), done.stderr
