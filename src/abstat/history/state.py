"""Change points reported before: kept in a JSON sidecar so that none moves silently.

The sidecar (``STORE.changepoints.json`` by default) maps a series key to
the revisions of the change points last reported for it.  Comparing a new
analysis with it gives, per change point, ``new``, ``kept`` or
``moved from REV``, and per old one that is gone, ``withdrawn``.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.errors import InputError
from abstat.stats.warnings import StatWarning

VERSION = 1


def sidecar_path(store_path: str) -> str:
    """Beside a store file; for a PostgreSQL store (a URL), in the current
    directory, named after the database (its password never appears)."""
    if "://" in store_path:
        from urllib.parse import urlsplit

        parts = urlsplit(store_path)
        name = "-".join(x for x in (parts.hostname, parts.path.strip("/")) if x) or "postgresql"
        return f"abstat-{''.join(c if c.isalnum() or c in '-_.' else '_' for c in name)}.changepoints.json"
    return store_path + ".changepoints.json"


MAX_RECORD_BYTES = 64 << 20
MAX_REV_CHARS = 1024


def load(path: str) -> dict[str, list[dict[str, Any]]]:
    """The record at ``path`` ({} when there is none), read as untrusted: a regular file, bounded in
    size and depth, every entry checked (InputError naming the first damaged one: nothing is guessed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise InputError(f"cannot read the change-point record: {err.strerror}", path=path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory, a FIFO, a device: never read
        os.close(fd)
        raise InputError("not a regular file, so not a change-point record", path=path)
    with open(fd, "rb") as handle:
        try:
            raw = handle.read(MAX_RECORD_BYTES + 1)
        except OSError as err:
            raise InputError(f"cannot read the change-point record: {err.strerror}", path=path) from None
    if len(raw) > MAX_RECORD_BYTES:
        raise InputError(f"not an abstat change-point record (over {MAX_RECORD_BYTES >> 20} MiB)", path=path)
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        why = "nested too deeply" if isinstance(err, RecursionError) else str(err)[:200]
        raise InputError(f"cannot read the change-point record: {why}", path=path) from None
    if (
        not isinstance(document, dict)
        or type(document.get("version")) is not int
        or document["version"] != VERSION
        or not isinstance(document.get("series"), dict)
    ):
        raise InputError("not an abstat change-point record", path=path)
    for key, entries in document["series"].items():
        problem = _damage(entries)
        if problem:
            raise InputError(
                f"damaged change-point record: series {key[:200]!r}: {problem} (remove the file to start a new record)",
                path=path,
            )
    return document["series"]


def _damage(entries: Any) -> str | None:
    """What is wrong with one series' recorded change points, if anything."""
    if not isinstance(entries, list):
        return "not a list of change points"
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            return f"change point {number} is not a record"
        rev = entry.get("rev")
        if not isinstance(rev, str) or not rev or len(rev) > MAX_REV_CHARS:
            return f"change point {number} has no revision (rev)"
        if not isinstance(entry.get("provisional", False), bool):
            return f"change point {number}: provisional is not true or false"
    return None


def save(path: str, series: Mapping[str, list[dict[str, Any]]]) -> None:
    """Write atomically (a reader never sees half a file)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".changepoints.", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"version": VERSION, "series": dict(series)}, out, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def keep(path: str, series: Mapping[str, list[dict[str, Any]]]) -> None:
    """:func:`save`, a failure to write as an :class:`InputError` naming the record."""
    try:
        save(path, series)
    except OSError as err:
        raise InputError(f"cannot record the change points: {err.strerror or err}", path=path) from None


def reconcile(
    previous: Sequence[Mapping[str, Any]], current_revs: Sequence[str], order: Sequence[str], near: int
) -> tuple[dict[str, str], list[StatWarning]]:
    """Status of each current change point (rev -> "new" | "kept" | "moved from REV") and
    notes on old ones that are gone.  ``order`` is the series' revisions in order; an old change
    point within ``near`` positions of a new one has moved there."""
    wanted = {entry.get("rev") for entry in previous} | set(current_revs)
    position = {rev: i for i, rev in enumerate(order) if rev in wanted} if previous else {}
    old_revs = [str(entry["rev"]) for entry in previous if entry.get("rev") in position]
    status: dict[str, str] = {}
    unmatched = [rev for rev in current_revs if rev not in old_revs]
    for rev in current_revs:
        if rev in old_revs:
            status[rev] = "kept"
    notes: list[StatWarning] = []
    for old in old_revs:
        if old in current_revs:
            continue
        candidates = [rev for rev in unmatched if abs(position[rev] - position[old]) <= near]
        if candidates:
            target = min(candidates, key=lambda rev: abs(position[rev] - position[old]))
            unmatched.remove(target)
            status[target] = f"moved from {old[:12]}"
            notes.append(
                StatWarning(
                    "change-point-moved", f"change point moved: reported at {old[:12]} before, now at {target[:12]}"
                )
            )
        else:
            notes.append(
                StatWarning(
                    "change-point-withdrawn", f"change point withdrawn: reported at {old[:12]} before, no longer found"
                )
            )
    for rev in unmatched:
        status[rev] = "new"
    return status, notes


def record(change_points: Sequence[Any], order: Sequence[str]) -> list[dict[str, Any]]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return [
        {
            "rev": order[c.index],
            "shift": c.shift,
            "p_value": c.p_value,
            "provisional": c.provisional,
            "recorded_at": now,
        }
        for c in change_points
    ]
