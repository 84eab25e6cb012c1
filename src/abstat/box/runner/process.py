"""Process primitives of the runner: spawn into a process group, wait with a timeout, signal groups.

Standard library only (the runner ships to a bare test box).  The executor
(:mod:`abstat.box.runner.executor`) and background loads
(:mod:`abstat.box.runner.background`) are built on these.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import time
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

if TYPE_CHECKING:
    import resource


def describe_status(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit status {code}"


def own_peak_rss_kib() -> int | None:
    """This process's peak RSS (VmHWM) in KiB.

    The kernel starts a child's ``ru_maxrss`` at its parent's peak RSS
    (exec records the old address space's high-water mark), so a measured
    peak at or below this value says nothing about the command itself.
    """
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def tail(data: bytes, lines: int = 3, limit: int = 400) -> str:
    """The last ``lines`` non-blank lines of ``data``, joined with `` | `` (at most ``limit`` characters)."""
    text = data.decode("utf-8", errors="replace").strip()
    joined = " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())
    return joined[-limit:]


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal a process group; True when it still had members."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_alive(pgid: int) -> bool:
    """True while group ``pgid`` has members (orphaned zombies included)."""
    return kill_group(pgid, 0)


def live_group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (from /proc).

    ``kill(-pgid, 0)`` also succeeds while orphaned zombies of the group wait
    for init to reap them, which can take a second; they are already dead.
    """
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [pgid] if group_alive(pgid) else []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def resolve(program: str) -> str:
    """The executable ``program`` names, found on PATH now rather than inside the timed region."""
    if os.sep in program:
        return program
    found = shutil.which(program)
    return found if found is not None else program


def spawn(
    argv: list[str],
    env: Mapping[str, str] | Mapping[bytes, bytes],
    stdout_fd: int,
    stderr_fd: int,
    path: str | None = None,
) -> int:
    """Start ``argv`` in its own process group, stdin from /dev/null.

    A new process group (``setpgid``), not a new session: ``setsid`` would
    also put the command in a new scheduler autogroup, which measurably
    changes its timing on a loaded machine (hyperfine does neither).
    """
    return os.posix_spawnp(
        path or argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
            (os.POSIX_SPAWN_DUP2, stderr_fd, 2),
        ],
        setpgroup=0,
    )


def wait(pid: int, timeout: float | None) -> tuple[int, resource.struct_rusage | None, bool]:
    """Wait for ``pid``; on timeout or interruption kill its whole group.

    Returns (wait status, rusage of that child and its reaped descendants,
    timed out).  ``os.wait4`` gives this child's own usage, not the
    cumulative usage of every child abstat ever waited for.
    """
    try:
        if timeout is None:
            _, status, usage = os.wait4(pid, 0)
            return status, usage, False
        deadline = time.monotonic() + timeout
        pidfd = -1
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        if pidfd >= 0:
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0 or poller.poll(max(1, int(left * 1000) + 1)):
                        break
            finally:
                os.close(pidfd)
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done == pid:
                return status, usage, False
        else:
            pause = 0.001
            while time.monotonic() < deadline:
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done == pid:
                    return status, usage, False
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
        kill_group(pid)
        _, status, usage = os.wait4(pid, 0)
        return status, usage, True
    except BaseException:
        # Ctrl-C (or anything else) while waiting: leave nothing behind.
        kill_group(pid)
        try:
            os.wait4(pid, 0)
        except ChildProcessError:
            pass
        raise


def format_cpus(cpus: Sequence[int]) -> str:
    """``0-3,6``: CPU numbers as the kernel's lists (``Cpus_allowed_list``) write them."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    start = previous = None
    for cpu in [*ordered, None]:
        if previous is not None and cpu == previous + 1:
            previous = cpu
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = cpu
    return ",".join(parts)


def cpus_problem(cpus: Sequence[int]) -> str | None:
    """Why the measured commands cannot be confined to ``cpus`` here (one line), or None."""
    if not cpus:
        return None
    allowed = os.sched_getaffinity(0)
    missing = sorted(set(cpus) - allowed)
    if missing:
        return (
            f"--cpus {format_cpus(cpus)}: CPU {format_cpus(missing)} is not one this machine lets abstat use "
            f"(its CPUs: {format_cpus(sorted(allowed))})"
        )
    return None
