"""issue 35: when the doctor warned about load, history and bisect say which CPU-time metric resists it.

The machine's real load decides what a run's doctor records, so the tests set it: the stored machine
records' ``doctor.load`` finding is rewritten (history), and the doctor reads a file-system root whose
``/proc/loadavg`` the test writes (bisect's check as it starts)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from abstat.history.load_advice import from_records, now
from support.cli import run_abstat as abstat


def _store(tmp_path, revisions: int = 3) -> str:
    for i in range(revisions):
        done = abstat(
            "run",
            "--label",
            f"rev=r{i}",
            "--experiment",
            "e",
            "-n",
            "2",
            "-v",
            "t=true",
            "--store",
            "s.db",
            "--no-progress",
            cwd=str(tmp_path),
        )
        assert done.returncode == 0, done.stderr
    return str(tmp_path / "s.db")


def _set_load(path: str, statuses: list[str]) -> None:
    """Each invocation's recorded doctor load finding, oldest first."""
    db = sqlite3.connect(path)
    with db:
        ids = [row[0] for row in db.execute("SELECT id FROM invocations ORDER BY id")]
        assert len(ids) == len(statuses)
        for key, status in zip(ids, statuses, strict=True):
            (text,) = db.execute("SELECT machine FROM invocations WHERE id = ?", (key,)).fetchone()
            record = json.loads(text)
            record.setdefault("doctor", {})["load"] = {"status": status, "evidence": "load average 9.0 9.0 9.0"}
            db.execute("UPDATE invocations SET machine = ? WHERE id = ?", (json.dumps(record), key))
    db.close()


def _warnings(tmp_path, *args: str) -> list[dict]:
    done = abstat("history", "e", "--store", "s.db", "--format", "json", *args, cwd=str(tmp_path))
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["warnings"]


def test_history_of_wall_says_cpu_time_resists_the_load_the_doctor_warned_about(tmp_path):
    path = _store(tmp_path)
    _set_load(path, ["ok", "warn", "warn"])
    advice = [w for w in _warnings(tmp_path) if w["code"] == "load"]
    assert len(advice) == 1
    assert "in 2 of the 3 latest invocation(s)" in advice[0]["message"]
    assert "--metric user,sys" in advice[0]["message"]
    text = abstat("history", "e", "--store", "s.db", cwd=str(tmp_path)).stdout
    assert "user and sys CPU time resist it" in text


def test_history_says_nothing_without_a_load_warning_or_for_cpu_time(tmp_path):
    path = _store(tmp_path)
    _set_load(path, ["ok", "ok", "ok"])
    assert not [w for w in _warnings(tmp_path) if w["code"] == "load"]
    _set_load(path, ["warn", "warn", "warn"])
    assert not [w for w in _warnings(tmp_path, "--metric", "user") if w["code"] == "load"]


def test_the_advice_names_only_metrics_the_store_holds():
    loaded = [{"doctor": {"load": {"status": "warn"}}}, {"doctor": {"load": {"status": "ok"}}}, {}]
    assert "(--metric user)" in from_records(loaded, ["wall", "user"]).message
    assert from_records(loaded, ["wall"]) is None  # nothing to switch to
    assert from_records(loaded[1:], ["wall", "user", "sys"]) is None
    assert from_records([{"doctor": "damaged"}], ["wall", "user"]) is None


@pytest.mark.parametrize(
    "loadavg, metric, expected",
    [
        ("9.00 8.00 7.00 5/300 1234", "wall", True),
        ("0.00 0.01 0.05 1/300 1234", "wall", False),
        ("9.00 8.00 7.00 5/300 1234", "cycles", False),
    ],
)
def test_bisect_checks_the_load_as_it_starts(tmp_path, loadavg, metric, expected):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "loadavg").write_text(loadavg + "\n")
    (tmp_path / "sys" / "devices" / "system" / "cpu").mkdir(parents=True)
    (tmp_path / "sys" / "devices" / "system" / "cpu" / "online").write_text("0-1\n")
    advice = now(metric, str(tmp_path))
    assert (advice is not None) == expected
    if expected:
        assert advice.code == "load" and "load average 9.00 8.00 7.00 on 2 CPUs" in advice.message
        assert "--metric user or --metric sys" in advice.message
