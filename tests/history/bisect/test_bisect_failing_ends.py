"""abstat bisect on a real git repository whose benchmark stops working at the bad end after its first run (a
regression that crashes the benchmark, a disk that fills): the search spends its budget re-running that end and
ends inconclusive; the report says how many of the end's runs failed and why, not only that no commit won."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path


def _repo(path: Path, marker: Path) -> None:
    """Four commits: the level 100 then 110 from the third on; the last one's benchmark fails after its first run."""
    path.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "test")
    for number, level in enumerate((100, 100, 110, 110), start=1):
        once = f"[ -e {marker} ] && exit 1; touch {marker}\n" if number == 4 else ""
        (path / "bench.sh").write_text(f"{once}echo ops: {level}  # {number}\n")
        git("add", "-A")
        git("commit", "-qm", f"commit {number}")


def test_a_bad_end_whose_runs_fail_is_said_with_its_count(tmp_path: Path, abstat_cli) -> None:
    _repo(tmp_path / "repo", tmp_path / "ran-once")
    args = ["--repo", "repo", "--good", "HEAD~3", "--bad", "HEAD", "--run", "sh bench.sh"]
    proc = abstat_cli(
        "bisect", *args, "--metric", "ops=ops: ([0-9]+)", "--store", "s.db", "--budget", "24", "--format", "json"
    )
    assert proc.returncode == 3, proc.stderr  # inconclusive: the budget went on the failing end
    report = json.loads(proc.stdout)
    counts = dict(  # the bad end's runs as the store holds them: (failed, all)
        sqlite3.connect(tmp_path / "s.db").execute(
            "SELECT r.status, count(*) FROM runs r JOIN labels l ON l.invocation_id = r.invocation_id"
            " WHERE l.key = 'role' AND l.value = 'bad' GROUP BY r.status"
        )
    )
    assert counts["ok"] == 1 and counts["failed"] >= 5, counts
    warnings = [w for w in report["warnings"] if w["code"] == "reference-failures"]
    assert [w["message"].split()[:3] for w in warnings] == [[str(counts["failed"]), "of", str(sum(counts.values()))]]
    assert "at the bad revision" in warnings[0]["message"] and "exit status 1" in warnings[0]["message"]
