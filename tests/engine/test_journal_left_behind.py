"""Issue 36, item 14: a run journal left after abstat and its supervisor were both killed is mentioned
again: ``list``, ``show`` and the next ``run`` name it and the command that adds its runs (and stop once
they are added); the journal of a live abstat is not mentioned."""

from __future__ import annotations

import fcntl
import os
import subprocess

from abstat.engine.buffer import RunBuffer
from abstat.engine.events import RunDone
from support import paths
from support.cli import run_abstat

SRC = paths.SRC


class Guard:
    def supervised(self) -> bool:
        return True

    def watch_journal(self, replay) -> bool:
        return True


def _abstat(*args: str, cwd: str, tmp: str) -> subprocess.CompletedProcess[str]:
    return run_abstat(*args, cwd=cwd, extra_env={"TMPDIR": tmp})


def test_a_journal_left_behind_is_named_with_its_import_command(tmp_path, monkeypatch):
    from abstat.store import open_store

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temporary))
    store = str(tmp_path / "s.db")
    opened = open_store(store)
    invocation = opened.start_invocation("e", {"hostname": "h", "boot_id": "b"}, variants=["a"])
    buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard())
    for index in range(3):
        buffer.add(RunDone("a", index, index, "ok", 0.001, 0, 1.7e9 + index, {"wall": [0.001]}, {"wall": "s"}, ()))
    journal_path = buffer.path
    # abstat is alive (it holds its journal): nothing to say
    live = _abstat("list", "--store", store, cwd=str(tmp_path), tmp=str(temporary))
    assert live.returncode == 0 and "run journal" not in live.stderr, live.stderr
    # killed, with its supervisor: the lock is gone, the journal stays, the invocation shows running
    left = os.open(journal_path, os.O_RDONLY)
    os.close(buffer._fd)
    opened.close()
    try:
        fcntl.flock(left, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no one holds it now
        fcntl.flock(left, fcntl.LOCK_UN)
    finally:
        os.close(left)
    for command in (("list",), ("show", "e")):
        told = _abstat(*command, "--store", store, cwd=str(tmp_path), tmp=str(temporary))
        assert f"its last runs wait in the run journal {journal_path}" in told.stderr, told.stderr
        assert f"abstat import {journal_path} --store {store}" in told.stderr, told.stderr
    ran = _abstat(
        "run",
        "-n",
        "1",
        "-v",
        "b=true",
        "--experiment",
        "next",
        "--store",
        store,
        "--no-progress",
        cwd=str(tmp_path),
        tmp=str(temporary),
    )  # the next run says so too
    assert ran.returncode == 0, ran.stderr
    assert (
        f"note: experiment 'e' is still shown running: its last runs wait in the run journal {journal_path};"
        f" add them with: abstat import {journal_path} --store {store}\n"
    ) in ran.stderr, ran.stderr
    imported = _abstat("import", journal_path, "--store", store, cwd=str(tmp_path), tmp=str(temporary))
    assert imported.returncode == 0 and "3 run(s) added" in imported.stdout, imported.stderr
    for command in (("list",), ("run", "-n", "1", "-v", "b=true", "--experiment", "next", "--no-progress")):
        after = _abstat(*command, "--store", store, cwd=str(tmp_path), tmp=str(temporary))
        assert after.returncode == 0 and "run journal" not in after.stderr, after.stderr
