"""cgroup v2 for a run's processes, where the system lets abstat make one (standard library only).

Layout, below abstat's own cgroup (the ``0::`` line of ``/proc/self/cgroup``,
under the cgroup2 mount: ``/sys/fs/cgroup`` on a pure v2 system,
``/sys/fs/cgroup/unified`` on a hybrid one)::

    abstat-<run token>/run      abstat itself while the run lasts, and the measured commands
    abstat-<run token>/<n>      one per hook and per background load

It needs write access to the own cgroup's directory and ``cgroup.procs``
(root, or a delegated subtree).  A child starts in its parent's cgroup, so a
command is *born* in its cgroup: no window in which it could fork outside,
and no code of ours between fork and exec.  Its descendants stay there
whatever they do (``setsid``, ``setpgid``, ``env -i``, double forks); only
a process with write access to the hierarchy can leave.

abstat moves itself into ``run`` once, not around every measured command:
each move takes the kernel's cgroup_threadgroup_rwsem for writing, which
waits for an RCU grace period (milliseconds on a loaded machine).  After
each measured command, every process in ``run`` other than abstat is what
that command left behind; they get SIGKILL until none is left.  A hook or a
background load must outlive its own command, so it gets a cgroup of its
own (abstat moves there for its spawn, and back).  At the end, and in the
supervisor after a SIGKILL of abstat, ``cgroup.kill`` (Linux >= 5.14) ends
everything below ``abstat-<run token>``; older kernels get a kill loop.
"""

from __future__ import annotations

import fcntl
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
    directory = os.path.join(mount_point, path[len(shown.rstrip("/")) :].lstrip("/"))
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


def _listed(directory: str) -> list[int]:
    """PIDs as ``cgroup.procs`` of ``directory`` and below show them here: a process
    outside this PID namespace shows as 0."""
    found: list[int] = []
    for current, subdirectories, _ in os.walk(directory):
        try:
            with open(os.path.join(current, "cgroup.procs"), "rb") as handle:
                found.extend(int(word) for word in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def members(directory: str) -> list[int]:
    """PIDs in ``directory`` and in the cgroups below it that this PID namespace sees
    (never 0: ``kill(0, ...)`` would signal our own process group)."""
    return [pid for pid in _listed(directory) if pid > 0]


def hides_processes(directory: str) -> bool:
    """True when ``directory`` (or below) holds processes outside this PID namespace."""
    return 0 in _listed(directory)


def hold(directory: str) -> int | None:
    """Lock ``directory`` (flock) for as long as the returned descriptor is open: the
    sign that its run is alive, seen from any PID namespace.  None if it cannot be locked."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by commands
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def held(directory: str) -> bool:
    """True while a live run holds ``directory``'s lock (see :func:`hold`)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def populated(directory: str) -> bool:
    try:
        with open(os.path.join(directory, "cgroup.events"), "rb") as handle:
            return b"populated 1" in handle.read()
    except OSError:
        return False


def _repeat(step, reap, patience: float) -> None:
    """Run ``step()`` (then ``reap()``) with a growing pause until it returns False or time is up."""
    deadline = time.monotonic() + patience
    pause = 0.0002
    while step() and time.monotonic() < deadline:
        if reap is not None:
            reap()
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    if reap is not None:
        reap()


def end_members(directory: str, keep=(), reap=None, patience: float = EMPTY_WAIT_S) -> None:
    """SIGKILL every process in ``directory`` (and below) except this one and ``keep``,
    until none is left (bounded)."""
    me = os.getpid()

    def step() -> bool:
        found = [pid for pid in members(directory) if pid != me and pid not in keep]
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return bool(found)

    _repeat(step, reap, patience)


def kill(directory: str, reap=None) -> list[int]:
    """SIGKILL every process in ``directory`` and below, wait until it is empty
    (bounded); returns the PIDs it held.  ``reap()`` collects dead children
    meanwhile.  Never kills a cgroup this process is in."""
    pids = members(directory)
    if not pids or os.getpid() in pids:
        return [pid for pid in pids if pid != os.getpid()]
    try:
        _write(os.path.join(directory, "cgroup.kill"), "1")
    except OSError:  # Linux < 5.14: no cgroup.kill
        end_members(directory, (), reap)
    else:
        _repeat(lambda: populated(directory), reap, EMPTY_WAIT_S)
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
    """``abstat-<token>`` cgroups below ``base`` whose run is gone.

    A run is alive while its abstat holds the directory's lock (:func:`hold`), or
    while its supervisor shows in ``live_runs()``.  ``live_runs()`` scans /proc,
    which shows only this PID namespace: a run in another one (a container that
    shares the cgroup file system) is told by its lock, and a cgroup that holds
    processes this namespace cannot see is never taken for a leftover.
    ``live_runs()`` is asked after the listing: a run starts its supervisor
    before it makes its cgroup, so a run starting meanwhile is not taken for dead."""
    try:
        names = [name for name in sorted(os.listdir(base)) if name.startswith(PREFIX)]
    except OSError:
        return []
    if not names:
        return []
    live = live_runs()
    paths = [os.path.join(base, name) for name in names if name[len(PREFIX) :] not in live]
    return [path for path in paths if os.path.isdir(path) and not held(path) and not hides_processes(path)]


_active: list[str] = []  # run cgroups this process is in: one at a time


class RunCgroups:
    """The cgroups of one run: ``abstat-<token>`` below abstat's own cgroup."""

    def __init__(self, home: str, directory: str) -> None:
        self.home = home
        self.directory = directory
        self.run = os.path.join(directory, "run")
        self.usable = True
        self._lock: int | None = None
        self._procs = self._stat = -1  # run/cgroup.procs and run/cgroup.stat, kept open (see run_members)

    @classmethod
    def create(cls, token: str) -> "RunCgroups | None":
        """Make the run's cgroups and move this process into ``run``; None where that
        cannot be done, or while another run of this process has cgroups."""
        home = own_directory()
        if home is None or _active:
            return None
        directory = os.path.join(home, PREFIX + token)
        try:
            os.mkdir(directory)
        except OSError:
            return None
        cgroups = cls(home, directory)
        cgroups._lock = hold(directory)
        try:
            os.mkdir(cgroups.run)
            _write(os.path.join(cgroups.run, "cgroup.procs"), "0")
        except OSError:
            cgroups._unlock()
            remove(directory)
            return None
        _active.append(directory)
        try:
            cgroups._procs = os.open(os.path.join(cgroups.run, "cgroup.procs"), os.O_RDONLY)
            cgroups._stat = os.open(os.path.join(cgroups.run, "cgroup.stat"), os.O_RDONLY)
        except OSError:
            cgroups._close_files()
        return cgroups

    def run_members(self) -> list[int]:
        """:func:`members` of ``run``, as after each measured command: two reads of files kept open
        (3 µs, against 24 for a walk of the directory) while ``run`` has no cgroup below it."""
        if self._stat >= 0:
            try:
                if b"nr_descendants 0\n" in os.pread(self._stat, 4096, 0):
                    listed = os.pread(self._procs, 65536, 0)
                    if len(listed) < 65536:  # else more than a read holds: the walk reads it whole
                        return [pid for pid in map(int, listed.split()) if pid > 0]
            except (OSError, ValueError):
                pass
        return members(self.run)

    def _close_files(self) -> None:
        for fd in (self._procs, self._stat):
            if fd >= 0:
                os.close(fd)
        self._procs = self._stat = -1

    def new(self, name: str) -> str | None:
        """A new empty cgroup for a hook or a background load, or None (then the caller falls back)."""
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
        """Move this process back into ``run``.  If that fails, no new cgroup is
        made (``kill`` also refuses a cgroup this process is in)."""
        try:
            _write(os.path.join(self.run, "cgroup.procs"), "0")
        except OSError:
            self.usable = False

    def close(self, reap=None) -> list[int]:
        """Move this process home, kill everything in the run's cgroups and remove them;
        the PIDs killed."""
        try:
            _write(os.path.join(self.home, "cgroup.procs"), "0")
        except OSError:
            pass
        if self.directory in _active:
            _active.remove(self.directory)
        self._close_files()
        pids = kill(self.directory, reap)
        remove(self.directory)
        self._unlock()
        return pids

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
