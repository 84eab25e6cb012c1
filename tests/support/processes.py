"""The live processes a test started, however they were reparented: found by an entry of their
environment that only this test set (every child inherits it unless told otherwise), so that what
other tests run at the same time (another pytest-xdist worker, another checkout's suite) is never
taken for this test's leftover."""

from __future__ import annotations

import os
import time


def with_environ(entry: str) -> list[tuple[int, str]]:
    """(PID, command line) of the live (not zombie) processes whose environment holds ``entry``
    (``NAME=VALUE``), this process excepted."""
    wanted = entry.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if wanted not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                found.append((int(name), handle.read().replace(b"\0", b" ").decode(errors="replace")))
        except (OSError, IndexError):
            continue
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie is dead, awaiting its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_gone(pids: list[int], timeout: float = 2.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.01)
    return [p for p in pids if alive(p)]
