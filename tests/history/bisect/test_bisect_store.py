"""abstat bisect when its PostgreSQL store server stops mid-bisection: the store's own spool (as
``abstat run`` uses it) keeps every run, the bisection goes on to its answer, and the spool comes
home (at the end when the server is back, else with ``abstat import``).

A throwaway cluster of the test's own (tests/support/store_pg.py's start_cluster), stopped with
``pg_ctl stop -m immediate`` and started again, so the suite's shared server is not disturbed.
The server is stopped at a chosen moment: the benchmark, at its first run of the second commit
under test, asks the test to stop it and waits until it has.  The first store write after that is
the start of that commit's invocation, the case the spool must cover besides an interrupted run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from support import store_pg  # noqa: E402
from support.bisect_repos import BUILD, METRIC, RUN, make_repo, noise_env  # noqa: E402
from support import paths

SRC = paths.SRC

# the benchmark wrapper: at the first run of the second distinct commit under test, stop the server
WRAPPER = r"""#!/bin/sh
set -e
control="$1"
if [ "$ABSTAT_VARIANT" = test ]; then
    head=$(git rev-parse HEAD)
    grep -qx "$head" "$control/seen" 2>/dev/null || echo "$head" >> "$control/seen"
    if [ "$(wc -l < "$control/seen")" -ge 2 ] && [ ! -e "$control/asked" ]; then
        touch "$control/asked"
        while [ ! -e "$control/stopped" ]; do sleep 0.05; done
    fi
fi
exec ./bench
"""


@pytest.fixture
def cluster():
    """(URL of a fresh database, stop(), start()) on a cluster of this test's own."""
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'abstat[postgres]')")
    try:
        admin, remove = store_pg.start_cluster()
    except (RuntimeError, OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot start PostgreSQL: {err}")
    try:
        with psycopg.connect(admin, autocommit=True) as db:
            data = db.execute("SHOW data_directory").fetchone()[0]
            db.execute('CREATE DATABASE "bisect"')
        as_user = {}
        if os.getuid() == 0:  # as start_cluster runs it
            import pwd

            nobody = pwd.getpwnam("nobody")
            as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        pg_ctl = store_pg._tool("pg_ctl")

        def ctl(*args: str) -> None:
            done = subprocess.run(
                [pg_ctl, "-D", data, "-w", "-t", "60", *args],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=os.path.dirname(data),
                env={**os.environ, "LC_ALL": "C"},
                **as_user,
            )
            assert done.returncode == 0, done.stdout + done.stderr

        yield (
            admin.rsplit("/", 1)[0] + "/bisect",
            lambda: ctl("-m", "immediate", "stop"),
            lambda: ctl("-l", os.path.join(os.path.dirname(data), "log"), "restart"),
        )  # with its last options
    finally:
        remove()


def _runs_in(url: str) -> tuple[int, int, set[str]]:
    import psycopg

    with psycopg.connect(url) as db:
        count, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone()
        statuses = {row[0] for row in db.execute("SELECT status FROM invocations")}
    return count, distinct, statuses


@pytest.mark.parametrize("comes_back", [True, False], ids=["server-back", "server-still-away"])
def test_bisect_goes_on_when_the_store_server_stops_and_keeps_every_run(tmp_path, cluster, comes_back):
    url, stop, start = cluster
    repo = str(tmp_path / "repo")
    shas = make_repo(repo, commits=32, slow_at=20)
    control = tmp_path / "control"
    control.mkdir()
    wrapper = tmp_path / "bench.sh"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    counter = tmp_path / "counter"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--good",
            shas[0],
            "--bad",
            shas[-1],
            "--build",
            BUILD,
            "--run",
            f"{wrapper} {control}",
            "--metric",
            METRIC,
            "--store",
            url,
            "--confidence",
            "99",
            "--format",
            "json",
            "--experiment",
            "gone",
            "--repo",
            repo,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, **noise_env(str(counter), 7)},
    )
    events: dict[str, int] = {}

    def server() -> None:  # stop when the benchmark asks; start again 8 runs later (server-back)
        deadline = time.monotonic() + 240
        while not (control / "asked").exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        if not (control / "asked").exists():
            return
        events["committed"] = _runs_in(url)[0]
        stop()
        events["stopped_at"] = int(counter.read_text() or 0)
        (control / "stopped").touch()
        if comes_back:
            while int(counter.read_text() or 0) < events["stopped_at"] + 8 and process.poll() is None:
                time.sleep(0.05)
            start()
            events["started"] = 1

    watcher = threading.Thread(target=server)
    watcher.start()
    try:
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
        watcher.join(timeout=120)
    assert "committed" in events, err
    assert process.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "found" and result["culprit"] == shas[19], out
    assert "Traceback" not in err and "internal error" not in err
    assert store_pg.PASSWORD not in out + err
    went = [line for line in err.splitlines() if "went away" in line]
    assert len(went) == 1 and went[0].startswith("abstat bisect: postgresql://abstat:***@"), err
    assert "the runs already committed there are kept" in went[0]
    spools = list(tmp_path.glob("abstat-spool-*.db"))
    assert len(spools) == 1 and spools[0].name in went[0]
    spooled = sqlite3.connect(spools[0]).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert spooled > 0
    if comes_back:  # brought home at the end: the server holds every run the bisection made
        assert events.get("started") and len([line for line in err.splitlines() if "answers again" in line]) == 1
        assert any(w["code"] == "store" and "answers again" in w["message"] for w in result["warnings"])
    else:  # the answer says where the runs are; `abstat import` brings them
        assert any(
            w["code"] == "store" and "abstat import" in w["message"] and spools[0].name in w["message"]
            for w in result["warnings"]
        ), result["warnings"]
        start()
        assert _runs_in(url)[0] < result["runs"]
        done = subprocess.run(
            [sys.executable, "-m", "abstat", "import", str(spools[0]), "--store", url],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": SRC},
        )
        assert done.returncode == 0, done.stderr
    count, distinct, statuses = _runs_in(url)
    assert count == distinct == result["runs"] == int(counter.read_text())  # every run once, none lost
    assert count >= events["committed"] and statuses == {"complete"}
