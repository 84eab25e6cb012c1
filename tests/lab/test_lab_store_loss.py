"""A lab run whose PostgreSQL server goes away spools as a local run does (issue 23, item 12).

The hosts are this machine through tests/support/local_ssh.py (the real shipped runner and protocol, no sshd).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from support.store_pg import backend, cut_the_server, fresh_database, password_of  # noqa: F401  (fixtures)

from abstat.store import open_store
from support import paths, processes

HERE = str(paths.TESTS)
SRC = os.path.join(os.path.dirname(HERE), "src")


@pytest.mark.parametrize("comes_back", [True, False], ids=["server-back", "server-still-away"])
def test_a_lab_run_whose_server_goes_away_spools_and_every_run_is_kept(tmp_path, comes_back):
    psycopg = pytest.importorskip("psycopg")
    url = fresh_database()
    env = dict(
        os.environ,
        ABSTAT_SSH_COMMAND=f"{sys.executable} {os.path.join(HERE, 'support', 'local_ssh.py')}",
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        ABSTAT_TEST_OWNER=str(tmp_path),
    )  # inherited by this run's local_ssh.py processes
    runs = 60
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "--host",
            "h1",
            "--host",
            "h2",
            "-n",
            str(runs),
            "--shell",
            "-v",
            "a=sleep 0.01",
            "-v",
            "b=sleep 0.01",
            "--experiment",
            "blip",
            "--store",
            url,
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    committed, out, err = cut_the_server(url, proc, after_runs=20, comes_back=comes_back)
    assert committed >= 20
    assert password_of(url) not in err + out and "Traceback" not in err and "internal error" not in err, err
    went = [line for line in err.splitlines() if "went away" in line]
    assert went and all("abstat import" in line for line in went), err
    spools = list(tmp_path.glob("abstat-spool-*.db"))
    assert len(spools) == 1 and spools[0].name in went[0]
    total = 2 * 2 * runs
    if comes_back:
        assert proc.returncode == 0, err
        assert "spooled run(s) imported" in err
    else:
        assert proc.returncode == 2, err
        with psycopg.connect(url) as db:
            kept = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        spooled = sqlite3.connect(spools[0]).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        assert kept + spooled >= total
        done = subprocess.run(
            [sys.executable, "-m", "abstat", "import", str(spools[0]), "--store", url],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    with open_store(url, create=False) as store:
        assert store.db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone() == (total, total)
        statuses = sorted((i["labels"]["host"], i["status"]) for i in store.invocations("blip"))
    assert statuses == [("h1", "complete"), ("h2", "complete")]
    mine = processes.with_environ(f"ABSTAT_TEST_OWNER={tmp_path}")  # not another test's at the same time
    assert not [command for _, command in mine if "local_ssh.py" in command], mine  # no master left behind
