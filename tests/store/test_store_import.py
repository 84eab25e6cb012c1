"""``abstat import`` in bulk: the SQL path (SQLite to SQLite, attached source)
and the generic path (rows through Python, COPY on PostgreSQL) store the same
thing; two imports of one file at once add everything once; a failure keeps
whole invocations and nothing recorded before; a PostgreSQL role that may not
skip foreign-key checks imports the same rows."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.store_pg import backend, fresh_database, server_url, store_name  # noqa: F401  (fixtures)

from abstat.errors import InputError
from abstat.store import open_store, transfer

MACHINE = {"hostname": "milan", "boot_id": "boot-1", "microcode": "0xa0011d1"}


def _fill(name: str) -> dict[str, str]:
    """Two experiments, labels, a variant never declared, a run without samples, a damaged
    sample and a number stored as text; returns the uid of the invocation left running."""
    with open_store(name) as store:
        for experiment in ("hcall", "build"):
            for night in range(3):
                inv = store.start_invocation(
                    experiment,
                    dict(MACHINE, boot_id=f"boot-{night}"),
                    labels={"mode": "pv64", "night": str(night)},
                    variants=["a", "b"],
                )
                for position in range(7):
                    variant = "abc"[position % 3]
                    status = "failed" if position == 6 else "ok"
                    store.add_run(
                        inv,
                        variant=variant,
                        command=f"./{variant}",
                        iteration=position // 3,
                        position=position,
                        status=status,
                        exit_code=0 if status == "ok" else 1,
                        started_at=100.0 + position,
                        wall=0.5 + position,
                        values={"wall": [0.5 + position], "cycles": [440.0, 436.0 + night]},
                        units={"cycles": "cycles"},
                        notes=["peak RSS not recorded"] if position else [],
                    )
                if night < 2:
                    store.finish_invocation(inv, "complete")
        with store.db.transaction():
            store.db.execute("UPDATE samples SET value = 'abc' WHERE run_id = 9 AND metric = 'wall'")
            store.db.execute("UPDATE samples SET value = '2.5' WHERE run_id = 10 AND metric = 'wall'")  # read as 2.5
        running = store.db.execute("SELECT uid FROM invocations WHERE status = 'running' ORDER BY id").fetchone()[0]
    return {"running": running}


def _content(name: str):
    with open_store(name, create=False) as store:
        db = store.db
        invocations = sorted(
            db.execute(
                "SELECT i.uid, e.name, i.started_at, i.ended_at, i.status, i.hostname, i.boot_id, i.machine, i.argv,"
                " i.settings, i.notes FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
            ).fetchall()
        )
        labels = sorted(
            db.execute(
                "SELECT i.uid, l.key, l.value FROM labels l JOIN invocations i ON i.id = l.invocation_id"
            ).fetchall()
        )
        runs = sorted(
            db.execute(
                "SELECT r.uid, i.uid, v.name, r.command, r.iteration, r.position, r.status, r.exit_code, r.started_at,"
                " r.wall, r.notes FROM runs r JOIN invocations i ON i.id = r.invocation_id JOIN variants v"
                " ON v.id = r.variant_id"
            ).fetchall()
        )
        samples = sorted(
            db.execute(
                "SELECT r.uid, s.metric, s.idx, s.value, s.unit FROM samples s JOIN runs r ON r.id = s.run_id"
            ).fetchall()
        )
        variants = sorted(
            db.execute("SELECT e.name, v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id").fetchall()
        )
    return invocations, labels, runs, samples, variants


def _import(source: str, target: str):
    with open_store(target) as into, open_store(source, create=False, read_only=True) as source_store:
        return into.import_from(source_store)


def test_the_sql_path_and_the_generic_path_store_the_same(tmp_path, monkeypatch) -> None:
    source = str(tmp_path / "source.db")
    _fill(source)
    # a target that already holds part of the experiment: one invocation, still running, with 2 of its runs
    partial = str(tmp_path / "partial.db")
    assert _import(source, partial).runs_added == 42
    with open_store(partial) as store, store.db.transaction():
        store.db.execute("DELETE FROM samples WHERE run_id IN (SELECT id FROM runs WHERE id > 2 AND invocation_id = 1)")
        store.db.execute("DELETE FROM runs WHERE id > 2 AND invocation_id = 1")
        store.db.execute("UPDATE invocations SET status = 'running', ended_at = NULL WHERE id = 1")
        store.db.execute("DELETE FROM labels WHERE invocation_id > 1")
        store.db.execute("DELETE FROM samples WHERE run_id IN (SELECT id FROM runs WHERE invocation_id > 1)")
        store.db.execute("DELETE FROM runs WHERE invocation_id > 1")
        store.db.execute("DELETE FROM invocations WHERE id > 1")
    results = {}
    for path in ("sql", "generic"):
        target = str(tmp_path / f"{path}.db")
        with open(partial, "rb") as handle, open(target, "wb") as copy:
            copy.write(handle.read())
        if path == "generic":
            monkeypatch.setattr(transfer, "attach", lambda source, target: False)
        results[path] = _import(source, target)
        again = _import(source, target)
        assert (again.invocations_added, again.runs_added, again.runs_present) == (0, 0, 42)
    sql, generic = results["sql"], results["generic"]
    assert (
        (sql.invocations_added, sql.invocations_updated, sql.runs_added, sql.runs_present)
        == (generic.invocations_added, generic.invocations_updated, generic.runs_added, generic.runs_present)
        == (5, 1, 40, 2)
    )
    assert sql.damage == generic.damage and any("not a number" in note for note in sql.damage)
    assert _content(str(tmp_path / "sql.db")) == _content(str(tmp_path / "generic.db"))
    everything = _content(source)
    imported = _content(str(tmp_path / "sql.db"))
    assert imported[0] == everything[0] and imported[1] == everything[1] and imported[2] == everything[2]
    lost = set(everything[3]) - set(imported[3])
    assert [row[3] for row in lost] == ["abc"]  # left behind, and named
    assert any(row[3] == 2.5 for row in imported[3]) and imported[4] == everything[4]


def test_two_imports_of_one_file_at_once_add_everything_once(store_name, tmp_path) -> None:
    source = str(tmp_path / "source.db")
    _fill(source)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "abstat", "import", source, "--store", store_name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [(process.communicate(timeout=120), process.returncode) for process in processes]
    for (out, err), status in outcomes:
        assert "duplicate key" not in err and "Traceback" not in err
        assert status == (2 if err else 0), err
    # the damaged sample is named by the import that met it
    assert sum("damaged rows were left behind" in err for (_, err), _ in outcomes) >= 1
    added = [int(out.split(" run(s) added")[0].rsplit(" ", 1)[1]) for (out, _), _ in outcomes]
    assert sum(added) == 42
    with open_store(store_name, create=False) as store:
        assert store.db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone() == (42, 42)
        assert store.db.execute("SELECT COUNT(*) FROM invocations").fetchone()[0] == 6


def test_a_failure_keeps_whole_invocations_and_the_next_import_completes(store_name, tmp_path, monkeypatch) -> None:
    source = str(tmp_path / "source.db")
    _fill(source)
    monkeypatch.setattr(transfer, "BATCH_RUNS", 7)  # one invocation a transaction
    monkeypatch.setattr(transfer, "attach", lambda source, target: False)
    with open_store(store_name) as store:  # something recorded before, which must stay
        inv = store.start_invocation("mine", MACHINE, variants=["x"])
        store.add_run(
            inv,
            variant="x",
            command="true",
            iteration=0,
            position=0,
            status="ok",
            exit_code=0,
            started_at=1.0,
            wall=1.0,
            values={"wall": [1.0]},
        )
    calls = []
    original = transfer._Batch._insert_runs

    def failing(self, missing, samples):
        calls.append(1)
        if len(calls) == 3:
            raise self.target.db.errors[0]("disk I/O error")
        return original(self, missing, samples)

    monkeypatch.setattr(transfer._Batch, "_insert_runs", failing)
    with pytest.raises(InputError):
        _import(source, store_name)
    with open_store(store_name, create=False) as store:
        db = store.db
        assert (
            db.execute(
                "SELECT COUNT(*) FROM runs r JOIN invocations i ON i.id = r.invocation_id"
                " JOIN experiments e ON e.id = i.experiment_id WHERE e.name = 'mine'"
            ).fetchone()[0]
            == 1
        )
        per_invocation = db.execute(
            "SELECT i.id, COUNT(r.id) FROM invocations i LEFT JOIN runs r"
            " ON r.invocation_id = i.id GROUP BY i.id ORDER BY i.id"
        ).fetchall()
        assert [count for _, count in per_invocation] == [1, 7, 7]  # whole invocations only
    monkeypatch.setattr(transfer._Batch, "_insert_runs", original)
    result = _import(source, store_name)
    assert (result.invocations_added, result.runs_added, result.runs_present) == (4, 28, 14)


def test_a_role_that_may_not_skip_foreign_key_checks_imports_the_same(tmp_path) -> None:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    admin = server_url()
    url = fresh_database()
    params = conninfo_to_dict(url)
    role = f"plain_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"DROP ROLE IF EXISTS {role}")
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"GRANT ALL ON SCHEMA public TO {role}")
    plain = f"postgresql://{role}:pw@{params['host']}:{params['port']}/{params['dbname']}"
    source = str(tmp_path / "source.db")
    _fill(source)
    result = _import(source, plain)
    assert result.runs_added == 42
    with open_store(plain, create=False) as store:
        assert store.db.execute("SELECT current_setting('session_replication_role')").fetchone()[0] == "origin"
    reference = str(tmp_path / "reference.db")
    _import(source, reference)
    assert _content(plain) == _content(reference)
