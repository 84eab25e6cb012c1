"""Input read only from files has no record of change points unless ``--state`` is given (there is no
store to keep ``STORE.changepoints.json`` beside), so ``--exit-code`` reports the same change as new on
every run.  newcomer22's item 8: that happened silently; now one line on stderr says no record is kept
and to give ``--state FILE``, and nothing says so when a record is kept or ``--no-state`` was asked."""

from __future__ import annotations

import pytest

NOTE = "give --state FILE"


@pytest.fixture
def csv(tmp_path):
    rows = "rev,ns\n" + "".join(f"r{i:03d},{100 + (i >= 30) * 5 + (i % 3) * 0.1}\n" for i in range(60))
    (tmp_path / "h.csv").write_text(rows)
    return tmp_path


def test_files_without_state_say_no_record_is_kept(abstat_cli, csv):
    for _ in range(2):
        run = abstat_cli("history", "--input", "h.csv", "--metric", "ns", "--exit-code")
        assert run.returncode == 1, run.stderr
        assert " new" in run.stdout
        (note,) = run.stderr.splitlines()
        assert note.startswith("abstat history: note: no record") and NOTE in note and "--exit-code 1" in note
    assert not list(csv.glob("*.json"))


def test_a_record_kept_or_refused_says_nothing(abstat_cli, csv):
    first = abstat_cli("history", "--input", "h.csv", "--metric", "ns", "--exit-code", "--state", "cp.json")
    again = abstat_cli("history", "--input", "h.csv", "--metric", "ns", "--exit-code", "--state", "cp.json")
    assert (first.returncode, again.returncode) == (1, 0), again.stderr
    assert "kept" in again.stdout
    none = abstat_cli("history", "--input", "h.csv", "--metric", "ns", "--no-state")
    for run in (first, again, none):
        assert NOTE not in run.stderr, run.stderr


def test_help_says_files_have_no_default_record(abstat_cli):
    text = " ".join(abstat_cli("history", "--help", extra_env={"COLUMNS": "200"}).stdout.split())
    assert "input read only from files has none unless this is given" in text
