"""A PostgreSQL store whose server freezes (issue 36, item 11): a real throwaway cluster of this
module's own, SIGSTOPped with its backends while abstat waits on it, and a loopback listener that
accepts and never answers.  Ctrl-C and SIGTERM end abstat soon (psycopg used to wait on its own
cancel request to the frozen server, and `run` held the signals around every commit), every wait
is bounded without a signal too, the error is one line, and no completed run is lost: those the
server did not confirm are in the spool file the line names."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from support import store_pg

_cluster: dict[str, object] = {}


@pytest.fixture(scope="module")
def cluster():
    """(admin URL, freeze(stop: bool)) of a cluster only this module uses (the shared one is never frozen)."""
    pytest.importorskip("psycopg")
    try:
        url, stop = store_pg.start_cluster()
    except (RuntimeError, OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot start PostgreSQL: {err}")
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        data = db.execute("SHOW data_directory").fetchone()[0]
    with open(os.path.join(data, "postmaster.pid")) as handle:
        postmaster = int(handle.readline())

    def freeze(stopped: bool) -> None:
        """SIGSTOP (or SIGCONT) the postmaster and every backend: the kernel still accepts connections."""
        children = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _parent(int(pid)) == postmaster]
        for pid in [postmaster, *children]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP if stopped else signal.SIGCONT)

    try:
        yield url, freeze
    finally:
        freeze(False)
        stop()


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return admin.rsplit("/", 1)[0] + "/" + name


def _count(url: str) -> int:
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as db:
        return int(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def _start_run(url: str, tmp_path, runs: int, seconds: float = 0.2) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            str(runs),
            "-v",
            f"a=sleep {seconds}",
            "--experiment",
            "frozen",
            "--store",
            url,
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


def _wait_for_runs(url: str, proc: subprocess.Popen, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if _count(url) >= count:
                return
        except Exception:  # the schema is not there yet
            pass
        time.sleep(0.1)
    raise AssertionError(f"{count} runs were not committed within 60 s")


def _all_runs_kept(url: str, tmp_path, done: int, spooled_runs: bool = True) -> None:
    """Every run ``abstat run`` said was done is in the store once its spool file is imported."""
    spools = list(tmp_path.glob("abstat-spool-*.db"))
    assert len(spools) == 1
    spooled = sqlite3.connect(spools[0]).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert spooled >= 1 if spooled_runs else spooled == 0  # the runs whose commit the signal cut, if any
    imported = subprocess.run(
        [sys.executable, "-m", "abstat", "import", str(spools[0]), "--store", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert _count(url) == done
    with sqlite3.connect(spools[0]) as spool:  # the invocation's end was recorded there
        assert spool.execute("SELECT status FROM invocations").fetchall() == [("interrupted",)]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("during", ["commit", "run"])
def test_a_stop_signal_ends_a_run_whose_store_server_froze(cluster, tmp_path, signum, during):
    """The signal comes while a commit waits on the frozen server, or while a run is measured (then the
    teardown's commit of the invocation's end waits on it)."""
    admin, freeze = cluster
    url = _database(admin, f"frozen_{signum.name.lower()}_{during}")
    proc = _start_run(url, tmp_path, 300, 0.2 if during == "commit" else 4)
    try:
        _wait_for_runs(url, proc, 3 if during == "commit" else 1)
        freeze(True)
        time.sleep(1.0)  # the run in progress ends and its commit waits on the frozen server, or runs on
        sent = time.monotonic()
        proc.send_signal(signum)
        try:  # it used to wait until the server came back: here, forever
            out, err = proc.communicate(timeout=60)
        finally:
            took = time.monotonic() - sent
            freeze(False)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    print(f"{signum.name} during a {during}: abstat ended {took:.2f} s after the signal")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "internal error" not in err and store_pg.PASSWORD not in err + out
    # cut for the signal, not after the 15 s a wait without one is given
    assert f"stopped by {signum.name} while waiting for the store server" in err, err
    assert "query not terminated" not in err and "cancellation" not in err  # psycopg's own cancel never ran
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(
            "runs done; no report: the store is not read back after the signal"
            " cut a wait on its server (the runs are kept as said above)"
        )
    ), err
    done = int(re.search(r"interrupted: (\d+) of 300 runs done", err).group(1))
    _all_runs_kept(url, tmp_path, done, spooled_runs=during == "commit")


def test_a_frozen_server_without_a_signal_is_given_up_with_one_line(cluster, tmp_path):
    """No Ctrl-C: the wait is cut once a new connection to the server gets no answer either; the run
    goes on into its spool file and the line at the end names it (exit status 2).  A read waiting on the
    same frozen server at the same time (its database's own, in another process) is bounded too: both
    wait out the watchdog's time at once."""
    admin, freeze = cluster
    url = _database(admin, "frozen_alone")
    read_url = _database(admin, "frozen_read_0")
    # 40 runs of 0.2 s: the freeze comes while runs remain (ci47, at a load average of 16: with 12 every run
    # was committed before the freeze took hold, so only the end's report read met it, and no spool was needed)
    proc = _start_run(url, tmp_path, 40)
    reader = _reader(read_url)
    try:
        assert reader.stdout.readline() == "ready\n"
        _wait_for_runs(url, proc, 3)
        freeze(True)
        try:
            reader.stdin.write("go\n")
            reader.stdin.flush()
            out, err = proc.communicate(timeout=120)
            read_out, read_err = reader.communicate(timeout=60)
        finally:
            freeze(False)
    finally:
        for process in (proc, reader):
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert read_err == ""  # psycopg's warnings of a cancel that the frozen server never answered are gone too
    assert reader.returncode == 2 and "the store server did not answer for" in read_out, read_out + read_err
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "internal error" not in err
    last = err.strip().splitlines()[-1]
    assert "the store server did not answer for" in last and "abstat import ./abstat-spool-" in last, err
    spools = list(tmp_path.glob("abstat-spool-*.db"))
    assert len(spools) == 1
    imported = subprocess.run(
        [sys.executable, "-m", "abstat", "import", str(spools[0]), "--store", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert _count(url) == 40


_READ_AFTER_FREEZE = """
import sys
from abstat.store import open_store
from abstat.errors import InputError
store = open_store(sys.argv[1], create=False)
print("ready", flush=True)
sys.stdin.readline()
try:
    store.experiments()
except InputError as err:
    print(f"InputError: {err}", flush=True)
    sys.exit(2)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(130)
"""


def _reader(url: str) -> subprocess.Popen:
    """A process that opens the store at ``url`` (two runs stored first), says ``ready``, and reads it once told."""
    subprocess.run(
        [sys.executable, "-m", "abstat", "run", "-n", "2", "-v", "a=true", "--store", url, "--no-progress"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return subprocess.Popen(
        [sys.executable, "-c", _READ_AFTER_FREEZE, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_read_from_a_frozen_server_is_bounded_and_ctrl_c_ends_it(cluster, tmp_path):
    """Ctrl-C during a read from the frozen server (without a signal: the test above)."""
    admin, freeze = cluster
    proc = _reader(_database(admin, "frozen_read_1"))
    try:
        assert proc.stdout.readline() == "ready\n"
        freeze(True)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            freeze(False)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert err == ""  # psycopg's warnings of a cancel that the frozen server never answered are gone too
    assert (proc.returncode, out) == (130, "KeyboardInterrupt\n"), err


@pytest.fixture
def silent_server():
    """A loopback listener that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"postgresql://abstat:pw@127.0.0.1:{listener.getsockname()[1]}/db"
    finally:
        stop.set()
        thread.join()
        for sock in held:
            sock.close()
        listener.close()


def test_a_server_that_never_answers_is_one_line_and_ctrl_c_works(silent_server, tmp_path):
    pytest.importorskip("psycopg")
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--store", silent_server],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PGCONNECT_TIMEOUT": "2"},
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot connect to the store" in done.stderr, done.stderr
    assert ":***@" in done.stderr and ":pw@" not in done.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "abstat", "run", "-n", "2", "-v", "a=true", "--store", silent_server, "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    time.sleep(3)  # abstat waits for the server's answer to its startup packet
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, err
