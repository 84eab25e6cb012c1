"""The watchdog that ends a run's processes when abstat itself dies.

Started by :class:`abstat.box.runner.executor.ProcessExecutor` as a separate
Python process (``python -E -s supervisor.py TOKEN``, run by file path,
standard library only).  Its standard input is a pipe whose only writer is
abstat, which never writes to it: end of file means abstat has exited,
however it exited (normal end, exception, or SIGKILL, which no handler can
catch).  What to end is in a file open as descriptor 3 (unlinked), which
abstat rewrites in one ``pwrite`` as it starts and reaps commands: ``cgroup
DIR`` once it has made the run's cgroup, a ``group PGID`` line per live
process group, and ``end CRC``.  Nothing wakes the supervisor while commands run
(a line per command on the pipe would: a process competing with the measured
command for the CPUs).  Lines on the pipe (``group PGID``, ``ended PGID``,
``cgroup DIR``: the first protocol, used when no file could be made) are
still read.  At end of file the
supervisor then kills everything in the run's cgroup (``cgroup.kill``: whatever
the processes' group, session or environment) and removes it, SIGKILLs the
process groups still listed and every process
whose environment carries ``ABSTAT_RUN_TOKEN=TOKEN[.N]``, repeating until
none is left.  If the state names a run journal (``replay HEX``: runs
abstat had not yet committed, see abstat.store.journal), it then adds them
to the store with ``abstat import JOURNAL``, and exits.  It ignores SIGINT, SIGTERM and SIGHUP, which are
meant for abstat.
"""

from __future__ import annotations

import binascii
import os
import signal
import sys
import time

if __package__:
    from abstat.box.runner import cgroup
    from abstat.box.runner.reaper import end_processes, processes_with_token
else:  # run by file path: reaper.py and cgroup.py sit next to this file
    import cgroup  # type: ignore[no-redef]
    from reaper import end_processes, processes_with_token  # type: ignore[no-redef]


STATE_FD = 3
STATE_LIMIT = 1 << 20


def read_state(fd: int) -> list[bytes]:
    """The lines of the state file (written by ``containment.state_text``: the lines, then ``end CRC``,
    the CRC-32 of what precedes it) before its ``end CRC`` line; none when the file is absent or
    torn (a longer state partly overwritten: the CRC of what precedes the first end line differs)."""
    try:
        data = os.pread(fd, STATE_LIMIT, 0)
    except OSError:
        return []
    start = 0
    while (at := data.find(b"end ", start)) >= 0:
        if at == 0 or data[at - 1 : at] == b"\n":
            checksum = data[at + 4 : at + 12]
            if data[at + 12 : at + 13] == b"\n" and checksum == b"%08x" % binascii.crc32(data[:at]):
                return data[:at].splitlines()
            return []
        start = at + 1
    return []


def supervise(token: str, commands: "object", state_fd: int | None = None) -> int:
    groups: set[int] = set()
    directory = None
    replay: list[bytes] = [b""]
    for line in commands:  # type: ignore[attr-defined]  # blocks until abstat is gone
        directory = _apply(line, groups, directory, replay)
    if state_fd is not None:
        replay[0] = b""  # the state file says all there is to say
        for line in read_state(state_fd):
            directory = _apply(line, groups, directory, replay)
        try:
            os.close(state_fd)  # read: not for the replay's process (it may name a store's password)
        except OSError:
            pass
    if directory is not None:
        cgroup.kill(directory)
        cgroup.remove(directory)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    end_processes(lambda: processes_with_token(token), patience=10.0)
    if replay[0]:
        replay_journal(replay[0])
    return 0


REPLAY_WAIT_S = 120.0
# The replay's program: isolated (-I: no current directory, script directory, PYTHON* variable or user
# site on sys.path), in "/", abstat taken from the directory abstat itself ran from, never from where it
# happened to run: an abstat.py planted there must not run (as root), nor make the journal look replayed.
REPLAY_CODE = (
    "import os, sys; os.chdir('/'); sys.path.insert(0, sys.argv[1]); "
    "from abstat.cli import main; sys.exit(main(['import', sys.argv[2]]))"
)


def replay_journal(encoded: bytes) -> None:
    """Add the runs of abstat's journal to its store: ``abstat import JOURNAL`` (:data:`REPLAY_CODE`), the
    store in its environment (a PostgreSQL URL may hold a password: never in an argument list); then
    remove it."""
    import json

    try:
        document = json.loads(binascii.unhexlify(encoded))
        journal, store, python, path = (document[key] for key in ("journal", "store", "python", "path"))
        if not all(isinstance(item, str) and os.path.isabs(item) for item in (journal, python, path)) or not (
            isinstance(store, str) and store
        ):
            return
    except (ValueError, KeyError, TypeError, binascii.Error):
        return
    env = dict(os.environ)
    env["ABSTAT_STORE"] = store
    try:
        pid = os.posix_spawn(
            python,
            [python, "-I", "-c", REPLAY_CODE, path, journal],
            env,
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)],
        )
    except OSError:
        return
    deadline = time.monotonic() + REPLAY_WAIT_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.waitstatus_to_exitcode(status) == 0:
                try:
                    os.unlink(journal)  # every run is in the store
                except OSError:
                    pass
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)  # the journal stays: it can be replayed by hand
    os.waitpid(pid, 0)


def _apply(line: bytes, groups: set[int], directory: str | None, replay: list[bytes] | None = None) -> str | None:
    """One ``cgroup DIR`` / ``group PGID`` / ``ended PGID`` / ``replay HEX`` line; the cgroup directory."""
    if line.startswith(b"cgroup /"):
        return os.fsdecode(line[len(b"cgroup ") :].rstrip(b"\n"))
    if line.startswith(b"replay ") and replay is not None:
        replay[0] = line[len(b"replay ") :].strip().replace(b"-", b"")
        return directory
    words = line.split()
    if len(words) == 2 and words[1].isdigit():
        if words[0] == b"group":
            groups.add(int(words[1]))
        elif words[0] == b"ended":
            groups.discard(int(words[1]))
    return directory


def main(argv: list[str]) -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    flags = argv[1:]
    if not argv or not argv[0] or set(flags) - {"--state-fd-3", "--remove-own-directory"}:
        return 2
    if "--remove-own-directory" in flags:  # a private copy (a runner from a zip): loaded, so removed now
        _remove_own_directory()
    state_fd = STATE_FD if "--state-fd-3" in flags else None
    _say_ready()
    return supervise(argv[0], sys.stdin.buffer, state_fd)


def _say_ready() -> None:
    """One byte on standard output, a pipe abstat reads before it starts the first command (this process's start
    would otherwise compete with that command for the CPUs); then standard output is ``/dev/null``."""
    try:
        os.write(1, b"r")
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


def _remove_own_directory() -> None:
    import shutil

    directory = os.path.dirname(os.path.abspath(__file__))
    if os.path.basename(directory).startswith("abstat-supervisor-"):
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
