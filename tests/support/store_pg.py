"""A real PostgreSQL server for the store tests, and the store fixture that
runs each store test once per back end.

``$ABSTAT_TEST_POSTGRES_URL`` (set by .ci/run, which starts a throwaway
cluster) names a server whose user may create databases.  Without it the
first test that needs one starts a cluster itself: ``initdb`` in a temporary
directory, run as an unprivileged user (``nobody`` when we are root, since
PostgreSQL refuses to run as root), listening on 127.0.0.1 and a free port,
stopped when the test session ends.  Only when that truly cannot work do
the PostgreSQL halves skip, with the reason.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile

import pytest
from support import reaper

USER, PASSWORD = "abstat", "s3cret-pw"
_server: dict[str, str] = {}
_counter = itertools.count()
clusters: list[str] = []  # the directories of the clusters start_cluster started (the latest last)


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_cluster() -> tuple[str, object]:
    """(admin URL, stop function) of a fresh cluster; RuntimeError saying why not."""
    initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("initdb/pg_ctl not found (apt-get install postgresql)")
    reaper.ensure()  # the server (pg_ctl starts it in a session of its own) ends with this process, even killed
    base = tempfile.mkdtemp(prefix="abstat-pg-")
    reaper.remove_on_death(base)
    clusters.append(base)
    as_user: dict[str, object] = {}
    if os.getuid() == 0:  # PostgreSQL refuses to run as root
        import pwd

        nobody = pwd.getpwnam("nobody")
        os.chown(base, nobody.pw_uid, nobody.pw_gid)
        as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    data = os.path.join(base, "data")
    pwfile = os.path.join(base, "pw")
    with open(pwfile, "w") as handle:
        handle.write(PASSWORD + "\n")
    if as_user:
        os.chown(pwfile, int(as_user["user"]), int(as_user["group"]))
    env = {**os.environ, "HOME": base, "LC_ALL": "C"}
    run = dict(env=env, cwd=base, capture_output=True, text=True, timeout=120, **as_user)
    done = subprocess.run(
        [initdb, "-D", data, "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"], **run
    )
    if done.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr.strip()[-300:]}")
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={base} -c fsync=off -c max_connections=60"
    )
    done = subprocess.run(
        [pg_ctl, "-D", data, "-o", options, "-l", os.path.join(base, "log"), "-w", "-t", "60", "start"], **run
    )
    if done.returncode != 0:
        log = open(os.path.join(base, "log")).read()[-300:] if os.path.exists(os.path.join(base, "log")) else ""
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-200:]} {log}")
    with open(os.path.join(data, "postmaster.pid")) as handle:  # the postmaster, by pid too: see support/reaper.py
        reaper.kill_on_death(int(handle.readline()))

    def stop() -> None:
        subprocess.run([pg_ctl, "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"], **run)
        shutil.rmtree(base, ignore_errors=True)

    return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres", stop


def server_url() -> str:
    """The admin URL of the test server (started once per session); skips when impossible."""
    if "url" in _server:
        return _server["url"]
    if "error" in _server:
        pytest.skip(_server["error"])
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _server["error"] = "psycopg is not installed (pip install 'abstat[postgres]')"
        pytest.skip(_server["error"])
    url = os.environ.get("ABSTAT_TEST_POSTGRES_URL")
    if not url:
        try:
            url, stop = start_cluster()
        except (RuntimeError, OSError, subprocess.SubprocessError) as err:
            _server["error"] = f"cannot start PostgreSQL: {err}"
            pytest.skip(_server["error"])
        atexit.register(stop)
    _server["url"] = url
    return url


def fresh_database() -> str:
    """The URL of a new, empty database on the test server."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    admin = server_url()
    name = f"abstat_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    from urllib.parse import quote

    return (
        (
            f"postgresql://{quote(params.get('user', ''))}:{quote(params.get('password', ''))}@"
            f"{params.get('host', '127.0.0.1')}:{params.get('port', '5432')}/{name}"
        )
        if params.get("password")
        else f"postgresql://{quote(params.get('user', ''))}@{params.get('host', '127.0.0.1')}:"
        f"{params.get('port', '5432')}/{name}"
    )


def cut_the_server(url: str, proc: subprocess.Popen, *, after_runs: int, comes_back: bool) -> tuple[int, str, str]:
    """Once ``after_runs`` runs are committed in ``url`` (within 60 s), drop every connection to it
    (and with ``comes_back`` False refuse new ones); then wait for ``proc``.  (committed, out, err);
    connections are allowed again whatever happens."""
    import time

    import psycopg

    database, admin = url.rsplit("/", 1)[1], server_url()
    try:
        deadline, committed = time.monotonic() + 60, 0
        while committed < after_runs and time.monotonic() < deadline:
            time.sleep(0.1)
            try:
                with psycopg.connect(url) as db:
                    committed = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            except psycopg.Error:
                committed = 0
        with psycopg.connect(admin, autocommit=True) as db:  # the server drops abstat's connection
            if not comes_back:
                db.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false')
            db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            )
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true')
    return committed, out, err


def password_of(url: str) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    return conninfo_to_dict(url).get("password")


def new_store(kind: str, tmp_path) -> str:
    """A store name of ``kind`` with nothing in it yet."""
    if kind == "sqlite":
        return str(tmp_path / f"s{next(_counter)}.db")
    return fresh_database()


BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    if request.param == "postgresql":
        server_url()
    return request.param


@pytest.fixture
def store_name(backend, tmp_path) -> str:
    """A new, empty store of each back end in turn (a file, then a database URL)."""
    return new_store(backend, tmp_path)
