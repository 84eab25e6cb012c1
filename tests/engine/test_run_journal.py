"""Short runs are journaled and committed in batches; nothing that completed is lost (issue 26).

The journal exists so that abstat's time between runs is not a transaction
per run.  What must hold whatever happens: a SIGKILL of abstat loses at most
the run in progress (the supervisor replays the journal), a failed commit
names the journal that still holds its runs, a replay adds nothing twice, and
without a supervisor every run is committed as it completes.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from abstat.engine import buffer as buffer_mod
from abstat.engine.buffer import RunBuffer
from abstat.engine.events import RunDone
from abstat.errors import InputError
from abstat.box.runner import supervisor
from abstat.store import journal, open_store
from support import paths

SRC = paths.SRC
MACHINE = {"hostname": "h", "boot_id": "b"}
UNITS = {"wall": "s", "user": "s"}


class Guard:
    """A containment whose supervisor is live (or not), recording what it was told to replay."""

    def __init__(self, live: bool = True) -> None:
        self.live = live
        self.replay: dict | None = None

    def supervised(self) -> bool:
        return self.live

    def watch_journal(self, replay):
        self.replay = replay
        return self.live


def run(index: int, wall: float = 0.001) -> RunDone:
    return RunDone("a", index, index, "ok", wall, 0, 1.7e9 + index, {"wall": [wall], "user": [wall / 2]}, UNITS, ())


def count(path: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        db.close()


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the journal goes there
    path = str(tmp_path / "s.db")
    opened = open_store(path)
    invocation = opened.start_invocation("e", MACHINE, variants=["a"])
    yield path, opened, invocation
    opened.close()


def test_short_runs_wait_in_the_journal_and_are_committed_together(store):
    path, opened, invocation = store
    guard = Guard()
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=guard)
    for index in range(5):
        buffer.add(run(index))
    assert count(path) == 0 and len(buffer.pending) == 5
    assert guard.replay["journal"] == buffer.path and guard.replay["store"] == path
    head, runs, damaged = journal.read(buffer.path)
    assert head["invocation"] == invocation.uid and [r["iteration"] for _, r in runs] == [0, 1, 2, 3, 4]
    assert damaged == []
    buffer._last -= buffer_mod.COMMIT_EVERY_S  # as if the batch had waited its time
    buffer.add(run(5))
    assert count(path) == 6 and buffer.pending == []
    assert journal.read(buffer.path)[1] == []  # committed: the journal holds nothing more
    journaled = buffer.path
    buffer.add(run(6))
    buffer.close()
    assert count(path) == 7 and not os.path.exists(journaled) and guard.replay is None


def test_a_long_run_is_committed_at_once_and_without_a_supervisor_every_run_is(store):
    path, opened, invocation = store
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard())
    buffer._last -= 1.0  # the run took longer than a batch may wait
    buffer.add(run(0, wall=1.0))
    assert count(path) == 1 and buffer.path is None  # no journal was needed
    unsupervised = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard(live=False))
    unsupervised.add(run(1))
    assert count(path) == 2 and unsupervised.path is None
    RunBuffer(opened, invocation, {"a": "./bench"}, guard=None).add(run(2))
    assert count(path) == 3


def test_a_failed_commit_names_the_journal_that_keeps_its_runs(store, tmp_path):
    path, opened, invocation = store
    guard = Guard()
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=guard)
    buffer.add(run(0))
    buffer.add(run(1))

    def refuse(*args, **kwargs):
        raise InputError("disk full", path=path)

    buffer.store = type("Refusing", (), {"add_checked_runs": refuse, "db": opened.db, "display": path})()
    with pytest.raises(InputError) as caught:
        buffer.close()
    kept = buffer.path
    assert f"the last 2 run(s) are in {kept}: `abstat import {kept} --store {path}`" in str(caught.value)
    assert "disk full" in str(caught.value)
    assert guard.replay is None  # the supervisor must not remove it
    alone = RunBuffer(buffer.store, invocation, {"a": "./bench"}, guard=Guard())
    alone._last -= 1.0  # a long run, committed at once and never journaled: its loss is not hidden
    with pytest.raises(InputError) as caught:
        alone.add(run(9, wall=1.0))
    assert str(caught.value) == f"{path}: disk full"
    for _ in range(2):
        replayed = subprocess.run(
            [sys.executable, "-m", "abstat", "import", kept, "--store", path],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=SRC),
        )
        assert replayed.returncode == 0, replayed.stderr
        assert count(path) == 2 and os.path.exists(kept)
    assert "0 run(s) added from a run journal, 2 already present" in replayed.stdout


def test_a_replay_adds_what_the_store_lacks_once_and_skips_a_torn_line(store, tmp_path):
    path, opened, invocation = store
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard())
    for index in range(4):
        buffer.add(run(index))
    buffer.store.add_checked_runs(invocation, buffer.pending[:1])  # one already committed
    with open(buffer.path, "ab") as handle:
        handle.write(b'{"uid": "cut sh')  # abstat killed inside the write
    copy = str(tmp_path / "copy.jsonl")
    shutil.copy(buffer.path, copy)
    assert journal.replay(copy, opened) == (3, 1, [])
    assert journal.replay(copy, opened) == (0, 4, [])
    assert count(path) == 4
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(DISTINCT run_id) FROM samples").fetchone()[0] == 4
    assert [row[0] for row in db.execute("SELECT iteration FROM runs ORDER BY iteration")] == [0, 1, 2, 3]
    db.close()


def test_replaying_something_else_is_one_line_and_exit_status_2(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as opened:
        invocation = opened.start_invocation("e", MACHINE, variants=["a"])
    good = journal.run_line(
        {
            "uid": "u1",
            "variant": "a",
            "command": "c",
            "iteration": 0,
            "position": 0,
            "status": "ok",
            "exit_code": 0,
            "started_at": 1.0,
            "wall": 1.0,
            "values": {"wall": [1.0]},
            "units": {"wall": "s"},
            "notes": [],
        }
    )
    poisoned = tmp_path / "poisoned.jsonl"
    poisoned.write_bytes(
        journal.header(invocation.uid, "e")
        + good
        + good.replace(b'"u1"', b'"u2"').replace(b'"notes":[]', b'"notes":"abc"')
    )
    missing = tmp_path / "missing-fields.jsonl"
    missing.write_bytes(journal.header(invocation.uid, "e") + b'{"uid": "u3"}\n')
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_bytes(journal.header("0" * 36, "e")[:30] + b"\n")
    other = tmp_path / "other.jsonl"
    other.write_bytes(journal.header("0" * 36, "e"))
    for target, expected in (
        (bogus, "not an abstat run journal"),
        (other, "has no invocation"),
        (tmp_path / "missing.jsonl", "no such store to import"),
        (poisoned, "poisoned.jsonl:3: refusing to store a run: notes: not a list of texts"),
        (missing, "missing-fields.jsonl:2: not a run of the journal: unknown or missing"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "abstat", "import", str(target), "--store", path],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=SRC),
        )
        assert done.returncode == 2 and expected in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert count(path) == 0  # nothing of a journal with a poisoned run is added


def test_the_supervisor_reads_the_replay_line_and_its_withdrawal():
    replay = [b""]
    encoded = b"replay " + '{"journal": "/tmp/j"}'.encode().hex().encode() + b"\n"
    supervisor._apply(encoded, set(), None, replay)
    assert bytes.fromhex(replay[0].decode()) == b'{"journal": "/tmp/j"}'
    supervisor._apply(b"replay -\n", set(), None, replay)
    assert replay[0] == b""


@pytest.mark.slow
def test_sigkill_loses_at_most_the_run_in_progress_though_runs_wait_for_their_commit(tmp_path):
    """A batch that would wait a minute: every completed run is in the store once the supervisor replayed
    the journal (without the replay, all of them would be lost)."""
    path, counter = str(tmp_path / "s.db"), str(tmp_path / "counter")
    code = (
        "import sys, abstat.engine.buffer as b; b.COMMIT_EVERY_S = 60.0\n"
        "from abstat.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = dict(os.environ, PYTHONPATH=SRC, TMPDIR=str(tmp_path))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "-n",
            "100000",
            "--shell",
            "--no-progress",
            "--store",
            path,
            "-v",
            f"a=echo x >> {counter}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not os.path.exists(counter) or os.path.getsize(counter) < 200):
        time.sleep(0.05)
    assert count(path) == 0  # all wait for their commit, in the journal
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(n.startswith("abstat-journal-") for n in os.listdir(tmp_path)):
        time.sleep(0.05)
    assert not any(n.startswith("abstat-journal-") for n in os.listdir(tmp_path)), "the journal was not replayed"
    with open(counter) as handle:
        started = len(handle.readlines())
    stored = count(path)
    assert started - 1 <= stored <= started and stored >= 100
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(DISTINCT run_id) FROM samples").fetchone()[0] == stored
    assert db.execute("SELECT status FROM invocations").fetchone()[0] == "running"
    assert sorted(row[0] for row in db.execute("SELECT position FROM runs")) == list(range(stored))
    db.close()


def test_without_a_writable_temporary_directory_every_run_is_committed_at_once(store, tmp_path, monkeypatch):
    path, opened, invocation = store
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "gone"))  # no journal can be made there
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard())
    for index in range(3):
        buffer.add(run(index))
        assert count(path) == index + 1
    assert buffer.path is None
    buffer.close()
