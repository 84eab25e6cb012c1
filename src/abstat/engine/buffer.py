"""How the runs of a local experiment reach the store: at once, or journaled and committed in batches.

A transaction per run costs about 0.1 ms of abstat's time (more with the
caches cold after a command) between two measured commands: for a command
of a millisecond, that is what made abstat's time per run 1.6-1.9x
hyperfine's (issue 26, ``benchmarks/run_overhead.py``).  So while runs are
short, each is appended to a journal file in one ``write`` (:mod:`abstat.store.journal`)
and the store commits every :data:`COMMIT_EVERY_S` seconds in one
transaction; a run longer than that is committed as it completes, as
before.  Ctrl-C, SIGTERM, a failure or the end commit what is pending
first.  If abstat is killed outright, the run's supervisor, which outlives
it, replays the journal into the store (``supervisor.py``): what completed
is kept.  Without a supervisor, or when the journal cannot be written,
every run is committed as it completes.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import time
from typing import Any

from abstat.engine.events import RunDone
from abstat.errors import InputError
from abstat.store import journal
from abstat.store.backend import is_url
from abstat.store.write import check_run

#: The longest a completed run waits for its commit (a run this long or longer is committed at once).
COMMIT_EVERY_S = 0.2
MAX_PENDING = 5000
_PACKAGE_PATH = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RunBuffer:
    """The runs of one invocation on their way to ``store``.  ``guard``: the containment whose
    supervisor replays the journal should abstat die (``watch_journal``); None: no batches."""

    def __init__(self, store: Any, invocation: Any, commands: dict[str, str], guard: Any = None) -> None:
        self.store = store
        self.invocation = invocation
        self.commands = commands
        self.guard = guard
        self.pending: list[dict[str, Any]] = []
        self.path: str | None = None
        self._fd = -1
        self._usable = guard is not None
        self._last = time.monotonic()
        self._header_size = 0
        self._journaled = 0  # how many of the pending runs the journal holds

    def add(self, run: RunDone) -> None:
        """Keep ``run``: journaled and pending, or committed now (InputError: a field the store refuses)."""
        checked = check_run(
            variant=run.variant,
            command=self.commands[run.variant],
            iteration=run.iteration,
            position=run.position,
            status=run.status,
            exit_code=run.exit_code,
            started_at=run.started_at,
            wall=run.wall,
            values=run.values,
            units=run.units,
            notes=list(run.notes),
        )
        now = time.monotonic()
        if (now - self._last >= COMMIT_EVERY_S and not self.pending) or not self._journal(checked):
            self.pending.append(checked)
            self.commit()
            return
        self.pending.append(checked)
        if now - self._last >= COMMIT_EVERY_S or len(self.pending) >= MAX_PENDING:
            self.commit()

    def commit(self) -> None:
        """Commit what is pending, in one transaction, then empty the journal."""
        if self.pending:
            try:
                self.store.add_checked_runs(self.invocation, self.pending)
            except InputError as err:
                if self.path is not None and self._journaled:  # those runs are safe there: say how to add them
                    self.guard.watch_journal(None)  # the supervisor must not remove it
                    raise InputError(
                        f"{err}; the last {self._journaled} run(s) are in {self.path}: "
                        f"`abstat import {self.path} --store {self.store.display}` adds them"
                    ) from None
                raise
            self.pending.clear()
            self._journaled = 0
            if self._fd >= 0:
                os.ftruncate(self._fd, self._header_size)
                os.lseek(self._fd, self._header_size, os.SEEK_SET)
        self._last = time.monotonic()

    def close(self) -> None:
        """Commit what is pending and remove the journal (leave it where a commit failed)."""
        self.commit()
        if self.path is not None:
            self.guard.watch_journal(None)
            os.close(self._fd)
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.path, self._fd = None, -1

    def _journal(self, checked: dict[str, Any]) -> bool:
        """Append ``checked`` to the journal (made at the first run); False when there is none."""
        if (self._fd < 0 and not self._open()) or not self._usable:
            return False
        line = journal.run_line(checked)
        try:
            if os.write(self._fd, line) == len(line):
                self._journaled += 1
                return True
        except OSError:
            pass
        self._usable = False  # a full disk: every run commits at once from now on (this one too)
        return False

    def _open(self) -> bool:
        if not self._usable or not self.guard.supervised():
            return False
        self._usable = False
        try:
            fd, path = tempfile.mkstemp(prefix="abstat-journal-", suffix=".jsonl")
            fcntl.flock(fd, fcntl.LOCK_SH)  # held while abstat lives: a journal left behind is told apart
        except OSError:
            return False
        head = journal.header(self.invocation.uid, self.invocation.experiment)
        try:
            written = os.write(fd, head)
        except OSError:
            written = -1
        name = self.store.db.name
        if not is_url(name):
            name = os.path.abspath(name)
        replay = {"journal": path, "store": name, "python": sys.executable, "path": _PACKAGE_PATH}
        if written != len(head) or not self.guard.watch_journal(replay):
            os.close(fd)
            os.unlink(path)
            return False
        self._fd, self.path, self._header_size, self._usable = fd, path, len(head), True
        return True
