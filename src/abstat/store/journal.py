"""The run journal: runs of one invocation written to a file at once, committed to the store later.

Committing a run costs a transaction (about 0.1 ms with SQLite, a round
trip with PostgreSQL) between two measured commands.  When runs are short,
the engine (:mod:`abstat.engine.buffer`) commits them in batches instead,
and appends each run to its journal first, in one ``write``: a file of JSON
lines, a header naming the invocation, then one run per line with its
``uid``.  If abstat is killed (SIGKILL, the OOM killer), the run's
supervisor replays the journal into the store (:func:`replay`, run as
``abstat import JOURNAL`` with the store in ``ABSTAT_STORE``), so what
completed is kept as it was when every run was its own transaction.
Replaying twice adds nothing: a run whose ``uid`` is in the store is
skipped.  By hand, should the supervisor have died too: ``abstat import
JOURNAL --store STORE``.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator, Mapping
from typing import Any

from abstat.errors import InputError

FORMAT = 1
_MAGIC = b'{"abstat_journal":'


MAX_JOURNAL_BYTES = 1 << 30
# one run's line (its values, units and notes) stays well below this; a longer line is damaged, and is skipped a
# chunk at a time rather than held whole.  Parsed, a line of numbers takes at most ~8 times its size...
MAX_LINE_BYTES = 32 << 20
# ... but one of empty objects or strings ('{},' '"",') 20-25 times: a run has a few containers and strings per
# metric (its name, unit, list), so a line with more than this many is damaged and never parsed (attack20 A8)
MAX_ITEMS = 1_000_000


def _open_regular(path: str) -> Any:
    """``path`` opened for reading if it is a regular file (a FIFO is never waited on); OSError else."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    handle = open(descriptor, "rb")  # noqa: SIM115 - returned open
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        handle.close()
        raise OSError(errno.EINVAL, "not a regular file")
    return handle


def is_journal(path: str) -> bool:
    """Whether ``path`` is a regular file that starts as a run journal does."""
    try:
        with _open_regular(path) as handle:
            return handle.read(len(_MAGIC)) == _MAGIC
    except OSError:
        return False


def header(invocation_uid: str, experiment: str) -> bytes:
    return _line({"abstat_journal": FORMAT, "invocation": invocation_uid, "experiment": experiment})


def run_line(run: Mapping[str, Any]) -> bytes:
    """One checked run (:func:`abstat.store.write.check_run`) as a journal line."""
    return _line(dict(run))


def _line(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"


def read(path: str) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]], list[int]]:
    """(header, (line number, run) of each whole run, the numbers of damaged lines) of a journal; a last
    line cut short by a crash is left out.  A damaged line in the middle (not JSON, nested too deeply,
    a number of thousands of digits, a run without its identity) is named, and the runs after it are
    still read.  InputError naming the file when it is not a journal."""
    with _open_journal(path) as handle:
        head = _header(handle, path)
        lines = list(_lines(handle, path))
    runs = [(number, run) for number, run in lines if run is not None]
    return head, runs, [number for number, run in lines if run is None]


def _open_journal(path: str) -> Any:
    try:
        handle = _open_regular(path)
    except OSError as err:
        raise InputError(f"cannot read the journal: {err.strerror or err}", path=path) from None
    if os.fstat(handle.fileno()).st_size > MAX_JOURNAL_BYTES:
        handle.close()
        raise InputError(f"larger than {MAX_JOURNAL_BYTES >> 20} MiB: not a journal abstat wrote", path=path)
    return handle


def _header(handle: Any, path: str) -> dict[str, Any]:
    line = handle.readline(1 << 20)
    head = _document(line) if line.endswith(b"\n") else None
    if (
        not isinstance(head, dict)
        or head.get("abstat_journal") != FORMAT
        or not isinstance(head.get("invocation"), str)
    ):
        raise InputError("not an abstat run journal", path=path)
    return head


def _lines(handle: Any, path: str) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, the run, or None for a damaged line) of each whole line after the header, one at a time
    (a journal is read as it is checked: a bad run stops the reading at its line); a line longer than
    MAX_LINE_BYTES is damaged and never held whole."""
    total, number = 0, 1
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if total > MAX_JOURNAL_BYTES:  # it grew since it was opened
            raise InputError(f"larger than {MAX_JOURNAL_BYTES >> 20} MiB: not a journal abstat wrote", path=path)
        if len(line) > MAX_LINE_BYTES:
            whole, total = _skip_line(handle, total, path)
            if not whole:
                return
            yield number, None
            continue
        if not line.endswith(b"\n"):
            return  # what follows the last newline was never whole
        run = _document(line) if _items(line) <= MAX_ITEMS else None
        yield number, (run if isinstance(run, dict) and isinstance(run.get("uid"), str) else None)


def _items(line: bytes) -> int:
    """An upper bound of the containers and strings a JSON line holds (what takes memory beyond its numbers)."""
    return line.count(b"{") + line.count(b"[") + line.count(b'"') // 2


def _skip_line(handle: Any, total: int, path: str) -> tuple[bool, int]:
    """Read past the rest of an overlong line; (whether it ended with a newline, bytes read so far)."""
    while True:
        chunk = handle.readline(1 << 20)
        total += len(chunk)
        if total > MAX_JOURNAL_BYTES:
            raise InputError(f"larger than {MAX_JOURNAL_BYTES >> 20} MiB: not a journal abstat wrote", path=path)
        if not chunk:
            return False, total
        if chunk.endswith(b"\n"):
            return True, total


def _document(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _checked(run: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    from abstat.store.write import check_run

    try:
        return check_run(**run)
    except TypeError:
        raise InputError("not a run of the journal: unknown or missing fields", path=path, line=line) from None
    except InputError as err:
        raise InputError(err.message, path=path, line=line, fields=err.fields) from None
    except (ValueError, OverflowError) as err:
        raise InputError(f"not a run of the journal: {err}", path=path, line=line) from None


def experiment_of(path: str, store: Any) -> str:
    """The name, in ``store``, of the experiment of the invocation the journal's header names (the header's own
    ``experiment`` is a claim, not read); InputError when the journal or its invocation cannot be found."""
    with _open_journal(path) as handle:
        return _invocation(store, _header(handle, path), path)[2]


def _invocation(store: Any, head: dict[str, Any], path: str) -> tuple[int, int, str]:
    """(id, experiment id, experiment name) of the invocation the header ``head`` names, in ``store``."""
    found = store.db.execute(
        "SELECT i.id, i.experiment_id, e.name FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
        " WHERE i.uid = ?",
        (head["invocation"],),
    ).fetchone()
    if found is None:
        raise InputError(
            f"the store {store.display} has no invocation {head['invocation']} (another store?)", path=path
        )
    return int(found[0]), int(found[1]), str(found[2])


def replay(path: str, store: Any) -> tuple[int, int, list[int]]:
    """Add the journal's runs that ``store`` lacks to their invocation; (added, already present, the
    numbers of its damaged lines, left out).  InputError when the journal or its invocation cannot be
    found, or a run cannot be stored (nothing added).  The journal is read a line at a time, each run
    checked as read: a bad one stops the reading, at its line."""
    from abstat.store.records import Invocation

    with _open_journal(path) as handle:
        head = _header(handle, path)
        found = _invocation(store, head, path)
        wanted, seen, damaged, repeated = [], set(), [], 0
        for line, run in _lines(handle, path):
            if run is None:
                damaged.append(line)
            elif run["uid"] in seen:
                repeated += 1
            else:
                wanted.append(_checked(run, path, line))
                seen.add(run["uid"])
    if not wanted:
        return 0, 0, damaged
    invocation = Invocation(int(found[0]), int(found[1]), str(head.get("experiment", "")), head["invocation"])
    try:  # the store's uniqueness decides, in one transaction: concurrent replays add each run once
        added, present = store.add_missing_runs(invocation, wanted)
    except OverflowError as err:
        raise InputError(f"a run of the journal cannot be stored: {err}", path=path) from None
    except InputError as err:
        raise InputError(err.message, path=path, fields=err.fields) from None
    return added, present + repeated, damaged


def left_behind(store: Any, directory: str | None = None) -> list[tuple[str, str]]:
    """(journal, experiment) of every run journal in the temporary directory that no live abstat holds
    (its writer holds a shared lock while it runs) and whose invocation ``store`` still shows
    running: a journal left when abstat and its supervisor were both killed.  Its runs are not in
    the store; ``abstat import JOURNAL`` adds them."""
    import fcntl
    import tempfile

    directory = directory or tempfile.gettempdir()
    try:
        names = sorted(n for n in os.listdir(directory) if n.startswith("abstat-journal-") and n.endswith(".jsonl"))
    except OSError:
        return []
    found = []
    for name in names[:1000]:
        path = os.path.join(directory, name)
        try:
            with _open_regular(path) as handle:
                if os.fstat(handle.fileno()).st_uid != os.geteuid():
                    continue
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # a live abstat writes it
                head = _document(handle.readline(65536))
        except OSError:
            continue
        if isinstance(head, dict) and head.get("abstat_journal") == FORMAT and isinstance(head.get("invocation"), str):
            row = store.db.execute(
                "SELECT e.name, i.id FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
                " WHERE i.uid = ? AND i.status = 'running'",
                (head["invocation"],),
            ).fetchone()
            if row is not None and _missing_runs(path, store, row[1]):
                found.append((path, str(row[0])))
    return found


def _missing_runs(path: str, store: Any, invocation: int) -> bool:
    """Whether the journal holds a run the store lacks (imported already: nothing to say)."""
    try:
        _, runs, _ = read(path)
    except InputError:
        return False
    present = {row[0] for row in store.db.execute("SELECT uid FROM runs WHERE invocation_id = ?", (invocation,))}
    return any(run["uid"] not in present for _, run in runs)


def left_behind_notes(store: Any) -> list[str]:
    """One line per journal :func:`left_behind` finds, naming the command that adds its runs."""
    import shlex

    return [
        f"note: experiment {experiment!r} is still shown running: its last runs wait in the run journal "
        f"{path}; add them with: abstat import {shlex.quote(path)} --store {shlex.quote(store.display)}"
        for path, experiment in left_behind(store)
    ]
