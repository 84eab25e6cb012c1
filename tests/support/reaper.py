"""What a test process started ends with it, also when it is killed and no teardown runs.

A pytest process killed from outside (SIGKILL of an xdist worker, ``timeout``'s SIGTERM) runs no fixture
teardown, and what the fixtures started in sessions of their own outlives it for hours: the simulated lab
boxes (``unshare`` + ``sshd``, tests/support/lab_sim.py), the PostgreSQL server (pg_ctl puts it in a session of
its own), the test boxes' supervisors and QEMU (tests/support/testbox.py).  A parent-death signal
(``PR_SET_PDEATHSIG``) does not cover them: it is sent when the *thread* that started the child ends (the lab
restarts a box's sshd from a short-lived thread at each reboot), it is not inherited across fork (pg_ctl's
postmaster, the testbox supervisor's QEMU), and the testbox supervisor is made to outlive ``testbox up``.

:func:`ensure` starts, once per process, a watchdog (this file run as a script, in a session of its own)
whose standard input is a pipe from this process, and puts ``ABSTAT_TEST_REAPER=TOKEN`` in this process's
environment: every process started from then on, and their children, carry it.  When this process ends
without saying so (the pipe reaches end of file, or the watchdog's parent is no longer this process), the
watchdog kills (SIGKILL) every process whose environment holds that entry, and the processes named to it
(:func:`kill_on_death`: a PostgreSQL postmaster, whose backends rewrite their environment area with their
``ps`` titles and end with it), until none is left, then removes the directories named to it.  At a normal
exit (``atexit``: the teardowns have run) it is told so and ends without killing anything, so that what a
teardown failed to stop stays visible (.ci/run lists it).

Standard library only; the watchdog wakes once a second (besides the pipe) to look at its parent.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time

ENV = "ABSTAT_TEST_REAPER"
_state: dict[str, object] = {}


def ensure() -> str:
    """The watchdog of this process (started on the first call); returns the environment entry its processes carry."""
    if _state.get("owner") != os.getpid():
        token = secrets.token_hex(8)
        env = {key: value for key, value in os.environ.items() if key != ENV}
        read, write = os.pipe()
        try:
            watchdog = subprocess.Popen(
                [sys.executable, "-S", os.path.abspath(__file__), token, str(os.getpid())],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd="/",
                start_new_session=True,  # not in the process group a ``timeout`` or a terminal signals
            )
        finally:
            os.close(read)
        _state.update(owner=os.getpid(), pipe=write, watchdog=watchdog, entry=f"{ENV}={token}")
        os.environ[ENV] = token
        atexit.register(_normal_exit, os.getpid())
    return str(_state["entry"])


def _tell(message: dict) -> None:
    ensure()
    with contextlib.suppress(OSError):  # a watchdog killed from outside: the test goes on without it
        os.write(int(str(_state["pipe"])), (json.dumps(message) + "\n").encode())


def kill_on_death(pid: int) -> None:
    """Kill ``pid`` too if this process dies (only while it is the process it is now: its start time is kept)."""
    _tell({"pid": pid, "start": _start_time(pid)})


def remove_on_death(path: str) -> None:
    """Remove the directory ``path`` (after the kills) if this process dies."""
    _tell({"remove": path})


def _normal_exit(owner: int) -> None:
    if os.getpid() != owner:  # a forked child's exit is not ours
        return
    try:
        os.write(int(str(_state["pipe"])), b'{"exit": true}\n')
        os.close(int(str(_state["pipe"])))
    except OSError:
        return
    watchdog = _state["watchdog"]
    if isinstance(watchdog, subprocess.Popen):
        try:
            watchdog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            watchdog.kill()


# --- the watchdog ---


def _start_time(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in (b"Z", b"X") else int(fields[19])


def _marked(entry: bytes) -> list[int]:
    """The live processes whose environment holds ``entry`` (:func:`support.processes.with_environ`)."""
    try:
        from support.processes import with_environ
    except ImportError:  # run as the watchdog script: this folder is the first on the path
        from processes import with_environ
    return [pid for pid, _ in with_environ(entry.decode())]


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _children(parents: set[int]) -> list[dict]:
    """The live children of ``parents`` (pid and start time): a postmaster's backends, which a test may have
    stopped (SIGSTOP, tests/store/test_store_frozen_server.py) and which then never see it die."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and _parent_of(int(name)) in parents:
            found.append({"pid": int(name), "start": _start_time(int(name))})
    return found


def _kill_all(entry: bytes, named: list[dict]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        live = {
            item["pid"] for item in named if item.get("start") is not None and _start_time(item["pid"]) == item["start"]
        }
        named = named + [child for child in _children(live) if child not in named]  # before their parent dies
        victims = _marked(entry) + [
            item["pid"] for item in named if item.get("start") is not None and _start_time(item["pid"]) == item["start"]
        ]
        if not victims:
            return
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def watch(token: str, parent: int) -> int:
    named: list[dict] = []
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], 1.0)
        if ready:
            data = os.read(0, 65536)
            if not data:
                break  # the parent is gone (or closed the pipe without saying it is done)
            pending += data
            *lines, pending = pending.split(b"\n")
            messages = [json.loads(line) for line in lines if line.strip()]
            if any(message.get("exit") for message in messages):
                return 0
            named += messages
        if os.getppid() != parent:
            break
    _kill_all(f"{ENV}={token}".encode(), [item for item in named if "pid" in item])
    for item in named:
        if "remove" in item:
            shutil.rmtree(item["remove"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for pytest, which then exits normally
    sys.exit(watch(sys.argv[1], int(sys.argv[2])))
