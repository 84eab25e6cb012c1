"""The watchdog that ends a run's processes when abstat itself dies.

Started by :class:`abstat.runner.executor.ProcessExecutor` as a separate
Python process (``python -E -s supervisor.py TOKEN``, run by file path,
standard library only).  Its standard input is a pipe whose only writer is
abstat; abstat writes ``group PGID`` / ``ended PGID`` lines as it starts and
reaps commands, and ``cgroup DIR`` once it has made the run's cgroup.  End of file means abstat has exited, however it exited
(normal end, exception, or SIGKILL, which no handler can catch): the
supervisor then kills everything in the run's cgroup (``cgroup.kill``: whatever
the processes' group, session or environment) and removes it, SIGKILLs the
process groups still listed and every process
whose environment carries ``ABSTAT_RUN_TOKEN=TOKEN[.N]``, repeating until
none is left, and exits.  It ignores SIGINT, SIGTERM and SIGHUP, which are
meant for abstat.
"""
from __future__ import annotations

import os
import signal
import sys

if __package__:
    from abstat.runner import cgroup
    from abstat.runner.reaper import end_processes, processes_with_token
else:  # run by file path: reaper.py and cgroup.py sit next to this file
    import cgroup  # type: ignore[import-not-found,no-redef]
    from reaper import end_processes, processes_with_token  # type: ignore[import-not-found,no-redef]


def supervise(token: str, commands: "object") -> int:
    groups: set[int] = set()
    directory = None
    for line in commands:  # type: ignore[attr-defined]
        if line.startswith(b"cgroup /"):
            directory = os.fsdecode(line[len(b"cgroup "):].rstrip(b"\n"))
            continue
        words = line.split()
        if len(words) == 2 and words[1].isdigit():
            if words[0] == b"group":
                groups.add(int(words[1]))
            elif words[0] == b"ended":
                groups.discard(int(words[1]))
    if directory is not None:
        cgroup.kill(directory)
        cgroup.remove(directory)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    end_processes(lambda: processes_with_token(token), patience=10.0)
    return 0


def main(argv: list[str]) -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    if len(argv) != 1 or not argv[0]:
        return 2
    return supervise(argv[0], sys.stdin.buffer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
