"""Store edges (issue 23 item 15): a damaged schema version, a read-only role
on an empty database, a full disk under the spool file.  Each is one line,
exit status 2, the store untouched, and what is recorded kept."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from support.store_pg import fresh_database, server_url

from abstat.store import open_store
from support import paths
from support.cli import run_abstat as abstat

MACHINE = {"hostname": "milan", "boot_id": "boot-1"}


def one_line(done, *words):
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def _filled(name: str) -> None:
    with open_store(name) as store:
        inv = store.start_invocation("e", MACHINE, variants=["a"])
        store.add_run(
            inv,
            variant="a",
            command="true",
            iteration=0,
            position=0,
            status="ok",
            exit_code=0,
            started_at=1.0,
            wall=1.0,
            values={"wall": [1.0]},
        )
        store.finish_invocation(inv, "complete")


def test_a_negative_sqlite_schema_version_is_damage_and_left_untouched(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    _filled(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = -3")
    db.close()
    before = open(path, "rb").read()
    for command in (["list"], ["run", "-n", "1", "-v", "a=true", "--experiment", "e"]):
        one_line(abstat(*command, "--store", path), "damaged store", "-3")
    assert open(path, "rb").read() == before


def test_a_postgresql_schema_version_that_is_not_a_number_is_damage(tmp_path) -> None:
    import psycopg

    url = fresh_database()
    _filled(url)
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("ALTER TABLE abstat_schema ALTER COLUMN version TYPE TEXT")
        db.execute("UPDATE abstat_schema SET version = 'two'")
    for command in (["list"], ["show", "e"], ["import", str(tmp_path / "none.db")]):
        if command[0] == "import":
            _filled(command[1])
        one_line(abstat(*command, "--store", url), "damaged store", "'two'")
    with psycopg.connect(url) as db:
        assert db.execute("SELECT version FROM abstat_schema").fetchall() == [("two",)]


def _read_only_role(url: str) -> str:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    role = f"reader_{os.getpid()}"
    with psycopg.connect(server_url(), autocommit=True) as db:
        db.execute(f"DROP ROLE IF EXISTS {role}")
        db.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")  # no CREATE on schema public (PostgreSQL 15)
    with psycopg.connect(url, autocommit=True) as db:
        if int(db.info.server_version) < 150000:
            db.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    return f"postgresql://{role}:pw@{params['host']}:{params['port']}/{params['dbname']}"


def test_a_read_only_role_on_an_empty_database_is_told_so_in_one_line() -> None:
    import psycopg

    url = fresh_database()
    reader = _read_only_role(url)
    for command in (["list"], ["show", "e"], ["run", "-n", "1", "-v", "a=true", "--experiment", "e"]):
        one_line(abstat(*command, "--store", reader), "the store is empty, and read-only for this role")
    with psycopg.connect(url) as db:
        assert db.execute("SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'").fetchone() == (0,)


SPOOL_SCENARIO = textwrap.dedent("""
    import sys
    import psycopg
    from abstat.errors import InputError
    from abstat.store import open_store

    url, admin, directory = sys.argv[1:4]
    notes = []
    store = open_store(url)
    store.spool_on_disconnect(notes.append, directory)
    invocation = store.start_invocation("gone", {"hostname": "h"}, variants=["a"])
    def run(i):
        store.add_run(invocation, variant="a", command="true", iteration=i, position=i, status="ok",
                      exit_code=0, started_at=1.0, wall=1.0, values={"wall": [1.0]})
    run(0)
    run(1)
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute("SELECT pg_terminate_backend(%s)", (store.db.raw.info.backend_pid,))
    try:
        run(2)
    except InputError as err:
        print(err)
        sys.exit(2)
    print("no error; notes:", notes)
""")


def _spool_onto_a_full_disk(tmp_path, prefix: list[str], directory: str) -> subprocess.CompletedProcess:
    url = fresh_database()
    return subprocess.run(
        [*prefix, sys.executable, "-c", SPOOL_SCENARIO, url, server_url(), directory],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([paths.SRC, os.environ.get("PYTHONPATH", "")])},
    )


def _check_spool_failure(done) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    line = done.stdout.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    assert "the store server went away" in line and "the 2 run(s) already committed there are kept" in line
    assert "cannot go to a spool file" in line and "not an abstat store" not in line
    assert "disk is full" in line or "disk I/O error" in line  # what SQLite says of ENOSPC


@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) is not installed")
def test_a_full_disk_under_the_spool_says_the_server_went_away(tmp_path) -> None:
    """A real full disk: a 12 KiB tmpfs, mounted in a mount namespace of the test's own."""
    directory = tmp_path / "full"
    directory.mkdir()
    probe = subprocess.run(
        ["unshare", "--mount", "--map-root-user", "sh", "-c", f"mount -t tmpfs -o size=12k tmpfs {directory}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a user and mount namespace: {probe.stderr.strip()}")
    server_url()
    script = f'mount -t tmpfs -o size=12k tmpfs {directory} && exec "$@"'
    done = _spool_onto_a_full_disk(
        tmp_path, ["unshare", "--mount", "--map-root-user", "sh", "-c", script, "sh"], str(directory)
    )
    _check_spool_failure(done)
