"""The test watchdog (tests/support/reaper.py) kills a named process's children too: a PostgreSQL postmaster's
backends that a test stopped (SIGSTOP) never see it die, and six such backends were found stopped an hour after a
killed test run (wave 19)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from support import reaper


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_a_stopped_child_of_a_named_process_is_killed_with_it() -> None:
    parent = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        os.kill(child, signal.SIGSTOP)  # as the frozen-server test stops a postmaster's backends
        named = [{"pid": parent.pid, "start": reaper._start_time(parent.pid)}]
        reaper._kill_all(b"ABSTAT_TEST_REAPER=no-such-token", named)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:  # nothing left behind when it fails
        for pid in (parent.pid, child):
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        parent.wait(timeout=10)
