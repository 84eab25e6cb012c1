"""A cgroup v2 per command, where the system lets abstat make one (standard library only).

Layout: ``<abstat's own cgroup>/abstat-<run token>/<spawn number>``.  The
own cgroup is the ``0::`` line of ``/proc/self/cgroup``, found below the
cgroup2 mount (``/sys/fs/cgroup`` on a pure v2 system,
``/sys/fs/cgroup/unified`` on a hybrid one).  It needs write access to that
directory and to its ``cgroup.procs`` (root, or a delegated subtree).

A command is born in its cgroup: abstat moves itself into the new cgroup,
spawns the command (a child starts in its parent's cgroup), and moves itself
back once the command has been waited for.  There is no window in which the
command could fork outside the cgroup, and no code of ours runs between
fork and exec.  Its descendants stay in the cgroup whatever they do
(``setsid``, ``setpgid``, ``env -i``, double forks); only a process with
write access to the hierarchy can leave it.  ``cgroup.kill`` (Linux >= 5.14)
ends them all at once; on older kernels their PIDs are killed until the
cgroup is empty.  docs/processes.md says what is guaranteed where.
"""
from __future__ import annotations

import os
import signal
import time

PREFIX = "abstat-"
EMPTY_WAIT_S = 2.0


def _mount() -> tuple[str, str] | None:
    """(mount point, the hierarchy path it shows) of the cgroup2 file system."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if right.split()[:1] == ["cgroup2"] and len(fields) >= 5:
                    return fields[4].replace("\\040", " "), fields[3]
    except OSError:
        return None
    return None


def own_directory() -> str | None:
    """The directory of this process's cgroup v2, when it is writable here; else None."""
    mount = _mount()
    if mount is None:
        return None
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as handle:
            path = next((line[3:].rstrip("\n") for line in handle if line.startswith("0::")), None)
    except OSError:
        return None
    mount_point, shown = mount
    if path is None or path.endswith(" (deleted)") or not (path + "/").startswith(shown.rstrip("/") + "/"):
        return None
    directory = os.path.join(mount_point, path[len(shown.rstrip("/")):].lstrip("/"))
    procs = os.path.join(directory, "cgroup.procs")
    if not (os.access(directory, os.W_OK) and os.access(procs, os.W_OK)):
        return None
    return directory


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def members(directory: str) -> list[int]:
    """PIDs in ``directory`` and in the cgroups below it."""
    found: list[int] = []
    for current, subdirectories, _ in os.walk(directory):
        try:
            with open(os.path.join(current, "cgroup.procs"), "rb") as handle:
                found.extend(int(word) for word in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def populated(directory: str) -> bool:
    try:
        with open(os.path.join(directory, "cgroup.events"), "rb") as handle:
            return b"populated 1" in handle.read()
    except OSError:
        return False


def kill(directory: str, reap=None) -> list[int]:
    """SIGKILL every process in ``directory`` and below, wait until it is empty
    (bounded); returns the PIDs it held.  ``reap()`` collects dead children
    meanwhile.  Never kills a cgroup this process is in."""
    pids = members(directory)
    if not pids or os.getpid() in pids:
        return [] if not pids else [pid for pid in pids if pid != os.getpid()]
    try:
        _write(os.path.join(directory, "cgroup.kill"), "1")
        has_kill = True
    except OSError:  # Linux < 5.14: no cgroup.kill
        has_kill = False
    deadline = time.monotonic() + EMPTY_WAIT_S
    pause = 0.0002
    while populated(directory) and time.monotonic() < deadline:
        if not has_kill:
            for pid in members(directory):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if reap is not None:
            reap()
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    if reap is not None:
        reap()
    return pids


def remove(directory: str) -> bool:
    """rmdir ``directory`` and the (empty) cgroups below it; False if one is left."""
    removed = True
    for current, _, _ in sorted(os.walk(directory), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(current)
        except FileNotFoundError:
            pass
        except OSError:
            removed = False
    return removed


def leftover_directories(base: str, live_runs) -> list[str]:
    """``abstat-<token>`` cgroups below ``base`` whose run has no live supervisor.

    ``live_runs()`` is asked after the listing: a run starts its supervisor
    before it makes its cgroup, so a run starting meanwhile is not taken for dead."""
    try:
        names = [name for name in sorted(os.listdir(base)) if name.startswith(PREFIX)]
    except OSError:
        return []
    if not names:
        return []
    live = live_runs()
    return [os.path.join(base, name) for name in names
            if name[len(PREFIX):] not in live and os.path.isdir(os.path.join(base, name))]


class RunCgroups:
    """The cgroups of one run: ``abstat-<token>`` below abstat's own cgroup."""

    def __init__(self, home: str, directory: str) -> None:
        self.home = home
        self.directory = directory
        self.usable = True

    @classmethod
    def create(cls, token: str) -> "RunCgroups | None":
        home = own_directory()
        if home is None:
            return None
        directory = os.path.join(home, PREFIX + token)
        try:
            os.mkdir(directory)
        except OSError:
            return None
        return cls(home, directory)

    def new(self, name: str) -> str | None:
        """A new empty cgroup for one command, or None (then the caller falls back)."""
        if not self.usable:
            return None
        path = os.path.join(self.directory, name)
        try:
            os.mkdir(path)
        except OSError:
            return None
        return path

    def enter(self, path: str) -> bool:
        """Move this process into ``path``, so that what it spawns now is born there."""
        try:
            _write(os.path.join(path, "cgroup.procs"), "0")
            return True
        except OSError:
            return False

    def leave(self) -> None:
        """Move this process back home.  If that fails, no cgroup is killed again
        (``kill`` also refuses a cgroup this process is in)."""
        try:
            _write(os.path.join(self.home, "cgroup.procs"), "0")
        except OSError:
            self.usable = False

    def close(self, reap=None) -> list[int]:
        """Kill everything in the run's cgroups and remove them; the PIDs killed."""
        pids = kill(self.directory, reap)
        remove(self.directory)
        return pids
