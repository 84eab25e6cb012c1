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

import json
from collections.abc import Iterator, Mapping
from typing import Any

from abstat.errors import InputError

FORMAT = 1
_MAGIC = b'{"abstat_journal":'


def is_journal(path: str) -> bool:
    """Whether ``path`` is a file that starts as a run journal does."""
    try:
        with open(path, "rb") as handle:
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


def read(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, runs) of a journal; a last line cut short by a crash is left out.  InputError naming
    the file when it is not a journal."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise InputError(f"cannot read the journal: {err.strerror or err}", path=path) from None
    lines = data.split(b"\n")
    documents = list(_documents(lines[:-1]))  # what follows the last newline was never whole
    if not documents or not isinstance(documents[0], dict) or documents[0].get("abstat_journal") != FORMAT:
        raise InputError("not an abstat run journal", path=path)
    head, runs = documents[0], documents[1:]
    if not isinstance(head.get("invocation"), str) or not all(isinstance(run, dict) for run in runs):
        raise InputError("not an abstat run journal", path=path)
    return head, runs


def _documents(lines: list[bytes]) -> Iterator[Any]:
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            return  # torn: nothing after it was written whole either


def replay(path: str, store: Any) -> tuple[int, int]:
    """Add the journal's runs that ``store`` lacks to their invocation; (added, already present).
    InputError when the journal or its invocation cannot be found."""
    from abstat.store.records import Invocation
    from abstat.store.write import check_run

    head, runs = read(path)
    found = store.db.execute("SELECT id, experiment_id FROM invocations WHERE uid = ?",
                             (head["invocation"],)).fetchone()
    if found is None:
        raise InputError(f"the store {store.display} has no invocation {head['invocation']} (another store?)",
                         path=path)
    invocation = Invocation(int(found[0]), int(found[1]), str(head.get("experiment", "")), head["invocation"])
    present = {row[0] for row in store.db.execute("SELECT uid FROM runs WHERE invocation_id = ?", (invocation.id,))}
    wanted, skipped = [], 0
    for line, run in enumerate(runs, start=2):  # line 1 is the header
        if run.get("uid") in present:
            skipped += 1
            continue
        try:
            wanted.append(check_run(**run))
        except TypeError:
            raise InputError("not a run of the journal: unknown or missing fields", path=path, line=line) from None
        except InputError as err:
            raise InputError(err.message, path=path, line=line) from None
    if wanted:
        store.add_checked_runs(invocation, wanted)
    return len(wanted), skipped
