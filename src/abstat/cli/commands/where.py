"""``--where rev=PREFIX``: a git revision by any unique prefix of the full one stored.

``history`` prints 12 characters and people paste 7; the store holds the full SHA that
``abstat run --rev`` recorded.  Every command that takes ``--where`` passes its values through
:func:`resolve_revisions` first: a value of ``rev`` (or ``commit``) that is stored as it is stays; a
value that is the prefix of exactly one stored revision becomes it; a prefix of several is a one-line
error naming them (exit status 2); a value that matches nothing is left as given (the command then
says that no run matches).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from abstat.errors import UsageError

REVISION_KEYS = ("rev", "commit")
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
_SHOWN = 4  # candidates named in the error


def resolve_revisions(items: Sequence[str], store_arg: str | None) -> list[str]:
    """``--where`` items with revision prefixes replaced by the stored full revision."""
    wanted = [item for item in items if item.partition("=")[0].strip() in REVISION_KEYS and "=" in item]
    if not wanted:
        return list(items)
    stored = _stored_revisions(store_arg)
    if not stored:
        return list(items)
    resolved = []
    for item in items:
        key, eq, text = item.partition("=")
        if item in wanted:
            item = f"{key}{eq}{','.join(_full(key.strip(), value, stored.get(key.strip(), set())) for value in text.split(','))}"
        resolved.append(item)
    return resolved


def _full(key: str, value: str, stored: set[str]) -> str:
    if value in stored or not _HEX.fullmatch(value):
        return value
    found = sorted(rev for rev in stored if rev.lower().startswith(value.lower()))
    if len(found) > 1:
        named = ", ".join(rev[:12] for rev in found[:_SHOWN]) + (
            f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        )
        raise UsageError(
            f"--where {key}={value}: ambiguous revision prefix, {len(found)} stored revisions start "
            f"with it ({named}); give more characters"
        )
    return found[0] if found else value


def _stored_revisions(store_arg: str | None) -> dict[str, set[str]]:
    """key -> the values stored under it, for the revision keys (nothing when there is no store)."""
    from abstat.errors import AbstatError
    from abstat.store import open_store, resolve_store_path

    try:
        with open_store(resolve_store_path(store_arg), create=False) as store:
            return store.label_values(REVISION_KEYS)
    except (AbstatError, OSError):
        return {}
