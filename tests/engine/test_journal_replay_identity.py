"""Issue 36, item 18: a duplicate identity and concurrent journal replays were reported as a "damaged
store" with advice to `.recover` it, when nothing was damaged.  A journal run whose identity another
invocation holds is refused in one line naming it (nothing added); replays of one journal at once
add each run once and all succeed; a store write that breaks a uniqueness rule is not called damage."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

from abstat.store import journal, open_store
from support.store_runs import journal_run
from support import paths

SRC = paths.SRC
MACHINE = {"hostname": "h", "boot_id": "b"}


def _abstat(*args: str, cwd: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "ABSTAT_STORE"}
    return subprocess.Popen(
        [sys.executable, "-m", "abstat", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env, PYTHONPATH=SRC),
        stdin=subprocess.DEVNULL,
    )


def _journal(path, invocation, runs) -> str:
    with open(path, "wb") as handle:
        handle.write(journal.header(invocation.uid, invocation.experiment))
        for run in runs:
            handle.write(journal.run_line(run))
    return str(path)


def test_a_journal_run_with_another_invocations_identity_is_refused_in_one_line(tmp_path):
    store_path = str(tmp_path / "s.db")
    with open_store(store_path) as store:
        done = store.start_invocation("e", MACHINE, variants=["a"])
        (taken,) = [store.add_run(done, **{k: v for k, v in journal_run(0).items()})]
        uid = store.db.execute("SELECT uid FROM runs WHERE id = ?", (taken,)).fetchone()[0]
        store.finish_invocation(done, "complete")
        running = store.start_invocation("e", MACHINE, variants=["a"])
    path = _journal(tmp_path / "j.jsonl", running, [journal_run(1), journal_run(2, uid=uid)])
    proc = _abstat("import", path, "--store", store_path, cwd=str(tmp_path))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "damaged" not in err and ".recover" not in err and err.count("\n") == 1, err
    assert f"run {uid} has the identity of a run another invocation of the store holds" in err, err
    with sqlite3.connect(store_path) as db:  # nothing added, the stored run untouched
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        assert db.execute("SELECT invocation_id FROM runs WHERE uid = ?", (uid,)).fetchone()[0] == done.id


def test_replays_of_one_journal_at_once_add_each_run_once(tmp_path):
    store_path = str(tmp_path / "s.db")
    with open_store(store_path) as store:
        running = store.start_invocation("e", MACHINE, variants=["a"])
    path = _journal(tmp_path / "j.jsonl", running, [journal_run(i) for i in range(400)])
    procs = [_abstat("import", path, "--store", store_path, cwd=str(tmp_path)) for _ in range(6)]
    results = [(proc.communicate(timeout=300), proc.returncode) for proc in procs]
    for (_, err), code in results:
        assert code == 0 and "damaged" not in err, err
    added = sorted(
        int(out.split(" run(s) added")[0].rsplit(" ", 1)[-1]) for (out, _), _ in results if " run(s) added" in out
    )
    assert sum(added) == 400, [out for (out, _), _ in results]
    with sqlite3.connect(store_path) as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone() == (400, 400)


def test_a_uniqueness_error_is_not_called_damage(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        error = store.db.error(sqlite3.IntegrityError("UNIQUE constraint failed: runs.uid"))
    assert "damaged" not in error.message and ".recover" not in error.message
    assert "UNIQUE constraint failed: runs.uid" in error.message
