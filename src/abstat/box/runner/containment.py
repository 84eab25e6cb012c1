"""Containment of one executor's processes: tokens, sweeps, the supervisor.

Every command gets ``ABSTAT_RUN_TOKEN=<run>.<n>`` (see
:mod:`abstat.box.runner.reaper`) and, where cgroup v2 is writable, a cgroup of
its own (:mod:`abstat.box.runner.cgroup`).  :meth:`Containment.sweep` ends what one
command left behind; :meth:`Containment.close` ends everything the run
started and stops the supervisor (:mod:`abstat.box.runner.supervisor`), which
would otherwise do the same when abstat dies.
"""

from __future__ import annotations

import binascii
import fcntl
import os
import signal
import sys
import tempfile
import time
from collections.abc import Mapping

from abstat.box.runner import cgroup, reaper, signals

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")
SUPERVISOR_MODULES = ("supervisor.py", "reaper.py", "cgroup.py")
PRIVATE_PREFIX = "abstat-supervisor-"


def _supervisor_sources() -> dict[str, bytes] | None:
    """None when ``supervisor.py`` is a file Python can run.  Shipped to a test box the runner is
    imported from a zip that is deleted once loaded (lab/bundle.py): the supervisor and the two
    modules it imports are then read now, while the zip is still readable, and written to a private
    directory for each supervisor, which removes it once it has loaded them (the runner ends with
    ``os._exit``: nothing of abstat's may wait for an exit handler to be removed from the box)."""
    if os.path.isfile(HERE):
        return None
    import pkgutil

    try:
        sources = {name: pkgutil.get_data(__name__.rpartition(".")[0], name) for name in SUPERVISOR_MODULES}
    except OSError:
        return None  # not runnable: the executor then runs without a supervisor
    return None if any(data is None for data in sources.values()) else sources  # type: ignore[return-value]


def _supervisor_script() -> tuple[str, bool] | None:
    """(the supervisor's path, whether it is a private copy it removes), or None: no supervisor."""
    if _SOURCES is None:
        return (SUPERVISOR_PATH, False) if os.path.isfile(SUPERVISOR_PATH) else None
    try:
        directory = tempfile.mkdtemp(prefix=PRIVATE_PREFIX)
    except OSError:
        return None
    try:
        for name, data in _SOURCES.items():
            with open(os.path.join(directory, name), "wb") as handle:
                handle.write(data)
    except OSError:
        _remove_private(directory)
        return None
    return os.path.join(directory, "supervisor.py"), True


def _remove_private(directory: str) -> None:
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


def state_text(lines: list[str]) -> bytes:
    """The supervisor's state file: the lines, then ``end CRC`` (the CRC-32 of what precedes it), as
    ``supervisor.read_state`` reads it.  (Not imported from supervisor.py: Python 3.8's zip import,
    on a test box, runs that module without its package.)"""
    body = os.fsencode("".join(line + "\n" for line in lines))
    return body + b"end %08x\n" % binascii.crc32(body)


def _state_file() -> int:
    """A file in memory (or else an unlinked one) for the supervisor's state, not inherited by
    commands, or -1: a pwrite to it costs no disk journal inside a measured command's time."""
    try:
        fd = os.memfd_create("abstat-supervisor")  # close-on-exec
    except (AttributeError, OSError):
        try:
            fd = os.dup(tempfile.TemporaryFile(prefix="abstat-supervisor-", buffering=0).fileno())
        except OSError:
            return -1
    try:  # above 3, where the supervisor finds it: a dup2 onto itself would keep close-on-exec
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    except OSError:
        return -1
    finally:
        os.close(fd)


_SOURCES = _supervisor_sources()
SUPERVISOR_PATH = HERE
SUPERVISOR_WAIT_S = 12.0  # it gives up after 10 s of processes that will not die
SUPERVISOR_READY_S = 60.0  # for its start (a loaded TCG guest: seconds)


def _await_ready(fd: int) -> None:
    """Wait (at most ``SUPERVISOR_READY_S``) for the supervisor's byte that says it has started and waits on its
    pipe, then close ``fd``.  Its start is Python's (0.7 s of a TCG test box's one CPU): run beside the first
    measured command, it made that run 1.7 times dearer (``getppid`` 4,692 cycles a call against 2,718 on a box
    whose clock counts instructions, 127 involuntary context switches against 24; docs/lab.md, "Cycles that count
    instructions").  A supervisor that never says so (it failed to start) is no reason to stop: the run goes on."""
    import select

    try:
        select.select([fd], [], [], SUPERVISOR_READY_S)  # its byte, or end of file (it died), or the time is up
    finally:
        os.close(fd)


class Containment:
    def __init__(self, *, subreaper: bool = True, supervise: bool = True, cgroups: bool = True) -> None:
        """``cgroups``: the run's processes in cgroup v2 where possible; only with a supervisor."""
        self.token = os.urandom(8).hex()  # secrets.token_hex(8), without importing hmac and hashlib
        self._want_cgroups = cgroups
        self.cgroups: cgroup.RunCgroups | None = None
        self.subreaper = reaper.become_subreaper() if subreaper else False
        self.keep: set[int] = set()  # children waited for elsewhere (background loads, the supervisor)
        self._count = 0
        self._supervise = supervise
        self._pipe = -1
        self._state: int = -1  # the supervisor's state file (see supervisor.py), rewritten in one pwrite
        self._groups: set[int] = set()
        self._replay = ""  # the supervisor's `replay` line: the run journal to add to the store should abstat die
        self._supervisor: int | None = None
        self._private = ""  # the supervisor's private copy (a runner from a zip), which it removes
        self._closed = False

    def environment(self, base: Mapping[str, str]) -> tuple[dict[str, str], str]:
        """``base`` plus a fresh spawn token; (environment, token)."""
        token = self.next_token(base)
        env = dict(base)
        env[reaper.TOKEN_VARIABLE] = token
        return env, token

    def next_token(self, base: Mapping[str, str]) -> str:
        """A fresh spawn token, for the environment of the next command (``base``: abstat's own
        environment, for the supervisor, started at the first command)."""
        self._count += 1
        if self._supervise and self._supervisor is None and not self._closed:
            self._start_supervisor(base)
        return f"{self.token}.{self._count}"

    def _start_supervisor(self, base: Mapping[str, str]) -> None:
        env = {k: v for k, v in base.items() if k != reaper.TOKEN_VARIABLE}
        script = _supervisor_script()
        if script is None:
            self._supervise = False  # no watchdog (and so no cgroups): the sweeps still run
            return
        path, private = script
        state = _state_file()
        read_end, write_end = os.pipe()  # not inherited by commands: EOF exactly when abstat is gone
        ready_read, ready_write = os.pipe()  # the supervisor's one byte once started (_await_ready)
        argv = (
            [sys.executable, "-E", "-s", path, self.token]
            + (["--state-fd-3"] if state >= 0 else [])
            + (["--remove-own-directory"] if private else [])
        )
        actions = [
            (os.POSIX_SPAWN_DUP2, read_end, 0),
            (os.POSIX_SPAWN_DUP2, ready_write, 1),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ]
        if state >= 0:
            actions.append((os.POSIX_SPAWN_DUP2, state, 3))
        try:
            # setpgroup: Ctrl-C on the terminal is abstat's to handle, not the supervisor's
            pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setpgroup=0)
        except OSError:
            os.close(write_end)
            os.close(ready_read)
            if state >= 0:
                os.close(state)
            if private:
                _remove_private(os.path.dirname(path))
            self._supervise = False
            return
        finally:
            os.close(read_end)
            os.close(ready_write)
        self._pipe, self._state, self._supervisor = write_end, state, pid
        self._private = os.path.dirname(path) if private else ""
        self.keep.add(pid)
        _await_ready(ready_read)  # after the bookkeeping: a Ctrl-C while waiting still ends it as usual

    def _publish(self) -> None:
        """Tell the supervisor what to end should abstat die: the state file in one
        pwrite (no wake-up), or a line on the pipe without one."""
        if self._state < 0:
            return
        lines = [f"cgroup {self.cgroups.directory}"] if self.cgroups is not None else []
        lines.extend(f"group {pgid}" for pgid in sorted(self._groups))
        if self._replay:
            lines.append(self._replay)
        try:
            os.pwrite(self._state, state_text(lines), 0)
        except OSError:  # no memory (or a full disk): the pipe then, and no stale state left in the file
            try:
                os.ftruncate(self._state, 0)
            except OSError:
                pass
            os.close(self._state)
            self._state = -1
            self._tell("".join(line + "\n" for line in lines))

    def supervised(self) -> bool:
        """True while a supervisor watches this process (see :meth:`watch_journal`)."""
        return self._supervisor is not None and self._pipe >= 0 and not self._closed

    def watch_journal(self, replay: dict[str, str] | None) -> bool:
        """Have the supervisor replay a run journal into the store should abstat die: ``replay`` names
        ``journal``, ``store``, ``python`` and ``path`` (where the abstat package is); None: no more.
        False when no supervisor can (see supervisor.py)."""
        import json

        line = "" if replay is None else "replay " + json.dumps(replay).encode("utf-8").hex()  # one line, always
        if line and not self.supervised():
            return False
        self._replay = line
        if self._state >= 0:
            self._publish()
        else:
            self._tell((line or "replay -") + "\n")
        return self._pipe >= 0

    def _tell(self, line: str) -> None:
        if self._pipe < 0:
            return
        try:
            os.write(self._pipe, os.fsencode(line))
        except OSError:  # the supervisor died: the sweeps below still run
            os.close(self._pipe)
            self._pipe = -1

    def started(self, pgid: int) -> None:
        self._groups.add(pgid)
        if self._state >= 0:
            self._publish()
        else:
            self._tell(f"group {pgid}\n")

    def ended(self, pgid: int) -> None:
        self._groups.discard(pgid)
        if self._state >= 0:
            self._publish()
        else:
            self._tell(f"ended {pgid}\n")

    def _cgroups(self) -> cgroup.RunCgroups | None:
        """The run's cgroups, made at the first command once the supervisor runs: a live
        supervisor is what tells another abstat that these cgroups are not leftovers."""
        if self._want_cgroups and not self._closed and self._supervisor is not None:
            self._want_cgroups = False
            self.cgroups = cgroup.RunCgroups.create(self.token)
            if self.cgroups is not None:
                if self._state >= 0:
                    self._publish()
                else:
                    self._tell(f"cgroup {self.cgroups.directory}\n")
        return self.cgroups

    def in_cgroup(self) -> bool:
        """True when a measured command spawned now is born in the run's cgroup."""
        return self._cgroups() is not None

    def end_command(self, pgid: int) -> int:
        """Kill what a measured command left in the run's cgroup; how many had left group ``pgid``."""
        assert self.cgroups is not None
        me = os.getpid()
        left = [pid for pid in self.cgroups.run_members() if pid != me and pid not in self.keep]
        if not left:  # the usual case: one read of cgroup.procs, then collect re-parented zombies
            self._reap()
            return 0
        outside = sum(reaper.outside_group(pid, pgid) for pid in left)
        cgroup.end_members(self.cgroups.run, self.keep, self._reap)
        return outside

    def enter_own_cgroup(self) -> str | None:
        """Move abstat into a new cgroup for the hook or background load it spawns next; the cgroup or None.
        Call :meth:`leave` after the spawn."""
        cgroups = self._cgroups()
        path = cgroups.new(str(self._count)) if cgroups is not None else None
        if cgroups is None or path is None:
            return None
        if cgroups.enter(path):
            return path
        cgroup.remove(path)
        return None

    def leave(self, path: str | None) -> None:
        if path is not None and self.cgroups is not None:
            self.cgroups.leave()

    def end_cgroup(self, path: str, pgid: int) -> int:
        """Kill all of a cgroup of its own and remove it; how many processes had left group ``pgid``."""
        outside = sum(reaper.outside_group(pid, pgid) for pid in cgroup.members(path))
        cgroup.kill(path, self._reap)
        cgroup.remove(path)
        return outside

    def _reap(self) -> None:
        reaper.reap_zombie_children(self.keep)

    def _left(self, token: str) -> list[int]:
        return [
            pid
            for pid in reaper.descendants(os.getpid(), exclude=(self._supervisor or 0,))
            if reaper.carries(reaper.token_of(pid), token) and not reaper.is_zombie(pid)
        ]

    def sweep(self, token: str) -> int:
        """SIGKILL every live descendant carrying ``token`` (a command's, or the run's):
        those that left the command's process group with setsid/setpgid too."""
        return reaper.end_processes(lambda: self._left(token), keep=self.keep)

    def _kill_supervisor(self) -> None:
        """Stop the supervisor once abstat has done its work (see :meth:`close`)."""
        assert self._supervisor is not None
        os.close(self._state)
        self._state = -1
        try:
            os.kill(self._supervisor, signal.SIGKILL)  # it ignores SIGTERM
            os.waitpid(self._supervisor, 0)  # dies at once
        except (ProcessLookupError, ChildProcessError):
            pass
        self.keep.discard(self._supervisor)
        self._supervisor = None
        if self._private:  # killed, perhaps before it had removed its copy
            _remove_private(self._private)
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1

    def close(self) -> None:
        """End every process of the run and stop the supervisor; a second
        Ctrl-C or SIGTERM meanwhile waits until this is done."""
        if self._closed:
            return
        self._closed = True
        with signals.deferred():
            if self.cgroups is not None:
                self.cgroups.close(self._reap)  # all descendants, whatever their group or environment
            self.sweep(self.token)
            for pid in self.keep - {self._supervisor}:  # background loads nobody stopped
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            if self._supervisor is None or self._state >= 0:
                # What the supervisor would do at end of file, done here: all of /proc, not only
                # descendants.  Then the supervisor is not needed, and abstat need not wait for it to
                # start, sweep /proc again and exit (hundreds of ms on a loaded machine).
                reaper.end_processes(lambda: reaper.processes_with_token(self.token))
            if self._supervisor is None:
                return
            if self._state >= 0:
                self._kill_supervisor()
                return
            if self._pipe >= 0:
                os.close(self._pipe)  # end of file: the supervisor sweeps all of /proc and exits
                self._pipe = -1
            deadline = time.monotonic() + SUPERVISOR_WAIT_S
            while True:
                done, _ = os.waitpid(self._supervisor, os.WNOHANG)
                if done or time.monotonic() > deadline:
                    break
                signals.wait_for_signal(0.002)
            self.keep.discard(self._supervisor)
            self._supervisor = None
