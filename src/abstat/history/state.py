"""Change points reported before: kept in a JSON sidecar so that none moves silently.

The sidecar (``STORE.changepoints.json`` by default) maps a series key to
the revisions of the change points last reported for it.  Comparing a new
analysis with it gives, per change point, ``new``, ``kept`` or
``moved from REV``, and per old one that is gone, ``withdrawn``.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.errors import InputError

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


def load(path: str) -> dict[str, list[dict[str, Any]]]:
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the change-point record: {err}", path=path) from None
    if not isinstance(document, dict) or document.get("version") != VERSION or not isinstance(
            document.get("series"), dict):
        raise InputError("not an abstat change-point record", path=path)
    return document["series"]


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


def reconcile(previous: Sequence[Mapping[str, Any]], current_revs: Sequence[str], order: Sequence[str],
              near: int) -> tuple[dict[str, str], list[str]]:
    """Status of each current change point (rev -> "new" | "kept" | "moved from REV") and
    notes on old ones that are gone.  ``order`` is the series' revisions in order; an old change
    point within ``near`` positions of a new one has moved there."""
    position = {rev: i for i, rev in enumerate(order)}
    old_revs = [str(entry["rev"]) for entry in previous if entry.get("rev") in position]
    status: dict[str, str] = {}
    unmatched = [rev for rev in current_revs if rev not in old_revs]
    for rev in current_revs:
        if rev in old_revs:
            status[rev] = "kept"
    notes: list[str] = []
    for old in old_revs:
        if old in current_revs:
            continue
        candidates = [rev for rev in unmatched if abs(position[rev] - position[old]) <= near]
        if candidates:
            target = min(candidates, key=lambda rev: abs(position[rev] - position[old]))
            unmatched.remove(target)
            status[target] = f"moved from {old[:12]}"
            notes.append(f"change point moved: reported at {old[:12]} before, now at {target[:12]}")
        else:
            notes.append(f"change point withdrawn: reported at {old[:12]} before, no longer found")
    for rev in unmatched:
        status[rev] = "new"
    return status, notes


def record(change_points: Sequence[Any], order: Sequence[str]) -> list[dict[str, Any]]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return [{"rev": order[c.index], "shift": c.shift, "p_value": c.p_value, "provisional": c.provisional,
             "recorded_at": now} for c in change_points]
