"""attack23 #5: ``abstat import --experiment pr JOURNAL`` replayed a run journal into whatever invocation its
header named, a saved baseline's frozen copy (``baseline@main``) included, ignoring ``--experiment``.  A
journal never adds to a saved baseline; with ``--experiment`` only to an invocation of an experiment named
(with ``--merge``); else exit 2 in one line naming the journal and the experiment, nothing added.  The
supervisor's ``abstat import JOURNAL`` (no --experiment) still replays into a plain experiment."""

from __future__ import annotations

import sqlite3

from abstat.store import journal, open_store
from abstat.store.baselines import save_baseline
from support.cli import run_abstat
from support.store_runs import add_ok_run, journal_run

MACHINE = {"hostname": "h", "boot_id": "b"}


def _store(tmp_path) -> str:
    """main: one finished invocation of 3 runs, saved as baseline@main."""
    path = str(tmp_path / "gate.db")
    with open_store(path) as store:
        invocation = store.start_invocation("main", MACHINE, variants=["a"])
        for i in range(3):
            add_ok_run(store, invocation, "a", i, {"t": [1.0]})
        store.finish_invocation(invocation, "complete")
    save_baseline(path, "main", "main")
    return path


def _uid(path: str, experiment: str) -> str:
    with sqlite3.connect(path) as db:
        query = "SELECT i.uid FROM invocations i JOIN experiments e ON e.id = i.experiment_id WHERE e.name = ?"
        return db.execute(query, (experiment,)).fetchone()[0]


def _journal(tmp_path, uid: str, claimed: str = "pr") -> str:
    path = tmp_path / "pr.db"  # an artifact named as a store, holding a journal
    path.write_bytes(journal.header(uid, claimed) + b"".join(journal.run_line(journal_run(10 + i)) for i in range(4)))
    return str(path)


def _counts(path: str) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT e.name, COUNT(*) FROM runs r JOIN invocations i ON i.id = r.invocation_id "
            "JOIN experiments e ON e.id = i.experiment_id GROUP BY 1"
        ).fetchall()
    return dict(rows)


def _refused(tmp_path, store: str, *args: str) -> str:
    done = run_abstat("import", "--store", store, *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert _counts(store) == {"main": 3, "baseline@main": 3}
    return done.stderr


def test_a_journal_never_adds_to_a_saved_baselines_frozen_copy(tmp_path):
    store = _store(tmp_path)
    artifact = _journal(tmp_path, _uid(store, "baseline@main"))
    for args in (["--experiment", "pr"], [], ["--baselines"], ["--experiment", "baseline@main", "--merge"]):
        err = _refused(tmp_path, store, *args, artifact)
        assert "pr.db" in err and "'baseline@main'" in err and "frozen copy" in err


def test_with_experiment_a_journal_adds_only_to_an_experiment_named(tmp_path):
    store = _store(tmp_path)
    artifact = _journal(tmp_path, _uid(store, "main"))  # its header claims experiment 'pr'
    err = _refused(tmp_path, store, "--experiment", "pr", artifact)
    assert "pr.db" in err and "experiment 'main', not named with --experiment" in err
    err = _refused(tmp_path, store, "--experiment", "main", artifact)
    assert "pr.db" in err and "'main'" in err and "--merge" in err
    done = run_abstat("import", "--store", store, "--experiment", "main", "--merge", artifact, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _counts(store) == {"main": 7, "baseline@main": 3}


def test_without_experiment_the_supervisors_replay_still_adds_to_its_invocation(tmp_path):
    store = _store(tmp_path)
    done = run_abstat("import", "--store", store, _journal(tmp_path, _uid(store, "main"), "main"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "4 run(s) added from a run journal" in done.stdout
    assert _counts(store) == {"main": 7, "baseline@main": 3}
