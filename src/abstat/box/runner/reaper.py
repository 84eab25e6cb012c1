"""Finding and ending every process a run started (standard library only).

Where cgroup v2 is writable, :mod:`abstat.box.runner.cgroup` holds every
process of a run.  Elsewhere, and as a second line, three mechanisms are
used together (docs/processes.md says what each guarantees):

* **Process groups.**  Every command starts in its own group; the group is
  killed when the command ends, times out or is interrupted.
* **A token in the environment.**  Every command abstat starts gets
  ``ABSTAT_RUN_TOKEN=<run>.<spawn>``; its descendants inherit it, even
  those that call ``setsid`` or ``setpgid`` to leave the group.  Processes
  are matched by reading ``/proc/PID/environ``.
* **Child subreaper** (Linux ``PR_SET_CHILD_SUBREAPER``).  Orphans of the
  commands re-parent to abstat instead of init, so the process tree below
  abstat holds everything it started (token or not) while abstat lives.

When abstat itself is killed with SIGKILL, :mod:`abstat.box.runner.supervisor`
(a separate small process) ends everything that carries the run's token.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable

TOKEN_VARIABLE = "ABSTAT_RUN_TOKEN"
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError, ImportError):
        return False


def _stat_fields(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name (state is [0], ppid [1])."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def is_zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] in (b"Z", b"X")


def outside_group(pid: int, pgid: int) -> bool:
    """True when ``pid`` is alive and not in process group ``pgid``."""
    try:
        return os.getpgid(pid) != pgid and not is_zombie(pid)
    except ProcessLookupError:
        return False


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc/PID/task/*/children, else a /proc scan)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    try:
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.extend(int(word) for word in handle.read().split())
        return found
    except FileNotFoundError:
        pass
    except OSError:
        return found
    # Kernels without CONFIG_PROC_CHILDREN: scan every process's parent.
    for entry in _all_pids():
        fields = _stat_fields(entry)
        if fields is not None and len(fields) > 1 and int(fields[1]) == pid:
            found.append(entry)
    return found


def descendants(pid: int, exclude: Iterable[int] = ()) -> list[int]:
    """Every process below ``pid`` in the tree, skipping the subtrees of ``exclude``."""
    skip = set(exclude)
    found: list[int] = []
    queue = [child for child in children(pid) if child not in skip]
    seen = set(queue)
    while queue:
        current = queue.pop()
        found.append(current)
        for child in children(current):
            if child not in seen and child not in skip:
                seen.add(child)
                queue.append(child)
    return found


def _all_pids() -> list[int]:
    try:
        return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []


def token_of(pid: int) -> str | None:
    """The ``ABSTAT_RUN_TOKEN`` a process started with, if readable."""
    prefix = TOKEN_VARIABLE.encode() + b"="
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    environ = b"\0" + environ  # the first NAME=value entry, found without splitting the whole block
    at = environ.find(b"\0" + prefix)
    if at < 0:
        return None
    start = at + 1 + len(prefix)
    end = environ.find(b"\0", start)
    return environ[start : end if end >= 0 else len(environ)].decode("ascii", "replace")


def carries(token: str | None, wanted: str) -> bool:
    """True when ``token`` is ``wanted`` or a spawn token below it (``wanted.N``)."""
    return token is not None and (token == wanted or token.startswith(wanted + "."))


def processes_with_token(wanted: str, among: Iterable[int] | None = None) -> list[int]:
    """Live processes whose environment carries ``wanted`` (all of /proc unless ``among``)."""
    me = os.getpid()
    pids = _all_pids() if among is None else among
    return [pid for pid in pids if pid != me and carries(token_of(pid), wanted) and not is_zombie(pid)]


def kill(pids: Iterable[int], sig: int = signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def reap_zombie_children(keep: Iterable[int] = ()) -> None:
    """Collect the exit status of dead children nobody else waits for
    (orphans that re-parented to this process), except ``keep``."""
    try:  # one system call in the usual case: no child has died (WNOWAIT: only a look, nothing reaped)
        if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return
    except ChildProcessError:
        return
    except (AttributeError, OSError):  # no waitid here: look at every child
        pass
    kept = set(keep)
    for child in children(os.getpid()):
        if child in kept or not is_zombie(child):
            continue
        try:
            os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            pass


def end_processes(find, keep: Iterable[int] = (), patience: float = 2.0) -> int:
    """SIGKILL what ``find()`` returns until it returns nothing (bounded by
    ``patience`` seconds); reap the dead children among them.  Returns how many
    processes were signalled.  A process that forks while this runs is found
    by the next round."""
    kept = list(keep)
    killed: set[int] = set()
    deadline = time.monotonic() + patience
    pause = 0.001
    while True:
        pids = find()
        if not pids:
            break
        kill(pids)
        killed.update(pids)
        reap_zombie_children(kept)
        if time.monotonic() > deadline:
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    reap_zombie_children(kept)
    return len(killed)


def _argv(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:
        return []


def live_runs() -> set[str]:
    """Tokens of the runs whose supervisor (``supervisor.py TOKEN``) is alive."""
    live: set[str] = set()
    for pid in _all_pids():
        argv = _argv(pid)
        for index, word in enumerate(argv[:-1]):
            if word.endswith(b"supervisor.py"):
                live.add(argv[index + 1].decode("ascii", "replace"))
    return live


def leftovers() -> dict[str, list[int]]:
    """Live processes that carry the token of a run whose abstat is gone: run token -> PIDs.

    A run is alive while its supervisor (``supervisor.py TOKEN``) is.  What is left
    had both abstat and its supervisor killed (or came from a run without /proc access).
    """
    by_run: dict[str, list[int]] = {}
    me = os.getpid()
    for pid in _all_pids():
        if pid == me:
            continue
        token = token_of(pid)
        if token and not is_zombie(pid):
            by_run.setdefault(token.split(".", 1)[0], []).append(pid)
    if not by_run:  # the usual case: no second scan of /proc
        return {}
    # Asked after the scan: a run's supervisor starts before its first command carries its token.
    live = live_runs()
    return {run: pids for run, pids in by_run.items() if run not in live}


def describe(pid: int) -> str:
    """``PID (name)`` for a note."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as handle:
            return f"{pid} ({handle.read().strip().decode('utf-8', 'replace')})"
    except OSError:
        return str(pid)
