"""A killed test run leaves nothing running (tests/support/reaper.py).

A pytest started here uses the simulated lab (two boxes: ``unshare`` + ``sshd`` in sessions of their own) and a
PostgreSQL server of the store fixture's (pg_ctl's postmaster and its backends, a session of their own), says
which processes those are, and is then killed with SIGKILL: no teardown runs.  Every one of those processes,
and the directories they used, must be gone soon after (polled; no assertion on how fast).  The same pytest
ended normally leaves its watchdog to end without killing anything.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from support import lab_sim, paths, processes, store_pg

HOLD = """
import json, os, subprocess, time
from support import lab_sim, reaper, store_pg


def test_hold():
    lab = lab_sim.Lab(["alpha", "beta"])
    lab.start()
    url, stop = store_pg.start_cluster()
    base = store_pg.clusters[-1]
    stray = subprocess.Popen(["sleep", "900"], start_new_session=True)  # no teardown stops it
    report = {
        "unshare": [box.process.pid for box in lab.boxes.values()],
        "root": lab.root,
        "base": base,
        "entry": reaper.ensure(),
        "watchdog": reaper._state["watchdog"].pid,
        "stray": stray.pid,
    }
    with open(os.path.join(base, "data", "postmaster.pid")) as handle:
        report["postmaster"] = int(handle.readline())
    with open(os.environ["HOLD_REPORT"] + ".tmp", "w") as out:
        json.dump(report, out)
    os.replace(os.environ["HOLD_REPORT"] + ".tmp", os.environ["HOLD_REPORT"])
    if os.environ.get("HOLD_END") == "normal":
        lab.close()
        stop()
        return
    time.sleep(900)
"""


def _descendants(roots: list[int]) -> list[int]:
    """``roots`` and every live process below them (by the parent pid in /proc/PID/stat)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    parents[int(name)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        if processes.alive(pid):
            found.append(pid)
        todo += [child for child, parent in parents.items() if parent == pid]
    return found


def _hold(tmp_path, end: str) -> tuple[subprocess.Popen, dict]:
    test = tmp_path / "test_hold.py"
    test.write_text(HOLD)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    report = tmp_path / "report.json"
    env = {**os.environ, "HOLD_REPORT": str(report), "HOLD_END": end}
    env["PYTHONPATH"] = os.pathsep.join([str(paths.TESTS), paths.SRC, env.get("PYTHONPATH", "")])
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(test)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 300
    while not report.exists():
        if inner.poll() is not None or time.monotonic() > deadline:
            inner.kill()
            out = inner.communicate()[0].decode(errors="replace")
            pytest.fail(f"the inner pytest did not start its lab and server: {out[-3000:]}")
        time.sleep(0.1)
    return inner, json.loads(report.read_text())


def _requirements() -> None:
    reason = lab_sim.missing_requirements()
    if reason:
        pytest.skip(reason)
    if not store_pg._tool("initdb") or not store_pg._tool("pg_ctl"):
        pytest.skip("initdb/pg_ctl not found (apt-get install postgresql)")


def test_a_killed_pytest_leaves_no_lab_box_nor_postgres(tmp_path):
    _requirements()
    inner, report = _hold(tmp_path, "kill")
    started = _descendants(report["unshare"] + [report["postmaster"]])
    try:
        # both boxes' unshare and the sshd inside, the postmaster and its backends: alive before the kill
        assert len(started) >= 2 * 2 + 2, started
        assert set(report["unshare"]) | {report["postmaster"]} <= set(started)
        assert report["stray"] in [pid for pid, _ in processes.with_environ(report["entry"])]
        started.append(report["stray"])
        inner.send_signal(signal.SIGKILL)
        inner.wait()
        left = processes.wait_gone(started, timeout=120)
        assert left == [], left
        assert processes.with_environ(report["entry"]) == []
        deadline = time.monotonic() + 60  # the directories go after the processes
        while (os.path.exists(report["root"]) or os.path.exists(report["base"])) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.exists(report["root"]) and not os.path.exists(report["base"])
    finally:
        for pid in processes.wait_gone(started, timeout=0):
            os.kill(pid, signal.SIGKILL)


def test_a_pytest_that_ends_normally_leaves_its_teardown_to_do_the_work(tmp_path):
    """At a normal end the watchdog ends too and kills nothing: what no teardown stopped (here a ``sleep`` in a
    session of its own) stays, for .ci/run's check to list; the lab and the server were stopped by their own."""
    _requirements()
    inner, report = _hold(tmp_path, "normal")
    try:
        out = inner.communicate(timeout=300)[0].decode(errors="replace")
        assert inner.returncode == 0, out
        assert processes.wait_gone([report["watchdog"]], timeout=60) == []
        assert processes.wait_gone([report["postmaster"], *report["unshare"]], timeout=60) == []
        assert processes.alive(report["stray"])
        assert [pid for pid, _ in processes.with_environ(report["entry"])] == [report["stray"]]
    finally:
        if inner.poll() is None:
            inner.kill()
        if processes.alive(report["stray"]):
            os.kill(report["stray"], signal.SIGKILL)
