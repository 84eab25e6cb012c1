"""A killed test run leaves no test box running (tests/support/reaper.py, through support.testbox.boxes_up).

A pytest started here brings a box up with ``boxes_up`` (as test_testbox.py's fixture does) and is killed with
SIGKILL while the box boots: no teardown runs.  ``abstat testbox up``, the box's supervisor (a session of its
own, made to outlive ``testbox up``) and its QEMU must be gone soon after (polled), and the boxes' directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from support import paths, processes
from support.testbox import missing

REASON = missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"test boxes need QEMU and Debian's tools: {REASON}")

HOLD = """
import pytest
from support.testbox import box_name, boxes_up


def test_hold():
    with boxes_up(pytest, {box_name("killbox"): []}):
        pass
"""


def _box_processes(name: str) -> dict[int, list[str]]:
    """PID -> argv of the processes whose command line names the box (testbox up, the supervisor, QEMU)."""
    found = {}
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                words = handle.read().decode(errors="replace").rstrip("\0").split("\0")
        except (OSError, ValueError):
            continue
        named = any(word == name or word.endswith((f"-{name}", f"/{name}")) for word in words)
        if named and processes.alive(int(pid)):
            found[int(pid)] = words
    return found


def test_a_killed_pytest_leaves_no_test_box(tmp_path):
    test = tmp_path / "test_hold.py"
    test.write_text(HOLD)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(paths.TESTS), paths.SRC, os.environ.get("PYTHONPATH", "")])}
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(test)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    name = f"killbox{inner.pid}"
    seen: dict[int, list[str]] = {}
    try:
        deadline = time.monotonic() + 1800  # an image not cached yet is built first
        while not any(words[0].startswith("qemu-system") for words in seen.values()):
            assert inner.poll() is None and time.monotonic() < deadline, "the inner pytest started no QEMU"
            time.sleep(0.1)
            seen = _box_processes(name)
        supervisor = [words for words in seen.values() if "abstat.lab.testbox.supervisor" in words]
        assert supervisor and any("testbox" in words and "up" in words for words in seen.values()), seen
        boxes = os.path.dirname(supervisor[0][-1])  # the boxes' directory (boxes_up's temporary one)
        assert os.path.isdir(boxes)
        inner.send_signal(signal.SIGKILL)
        inner.wait()
        assert processes.wait_gone(list(seen), timeout=120) == []
        assert _box_processes(name) == {}
        deadline = time.monotonic() + 60
        while os.path.exists(boxes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.exists(boxes)
    finally:
        if inner.poll() is None:
            inner.kill()
            inner.wait()
        for pid in _box_processes(name):
            os.kill(pid, signal.SIGKILL)
