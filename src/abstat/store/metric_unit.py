"""The stored unit of a metric, for variants named ``EXP:VARIANT`` on a command line."""

from __future__ import annotations

from typing import Any

from abstat.errors import InputError


def stored_metric(store_arg: str | None, metric: str, variants: Any) -> tuple[str | None, str | None]:
    """The metric and its unit when the variants come from the store (``EXP:VARIANT``): the
    lines then say ``wall  1.842 ms -> ...``, as ``run`` and ``show`` do; (None, None) for files."""
    refs = [source[len("store:") :] for v in variants for source in v.sources if source.startswith("store:")]
    if not refs:
        return None, None
    read = {getattr(v, "unit", None) for v in variants if any(s.startswith("store:") for s in v.sources)}
    if None not in read:  # the units the variants were read in
        return metric, read.pop() if len(read) == 1 else None
    from abstat.store import open_store, resolve_store_path

    try:
        with open_store(resolve_store_path(store_arg), create=False) as store:
            units = {store.unit(ref.rsplit(":", 1)[0], metric) for ref in refs}
    except InputError:  # the variants were read; a store gone since only costs the unit
        units = set()
    return metric, units.pop() if len(units) == 1 else None


def stored_unit(store_arg: str | None, metric: str, ref: str) -> str | None:
    """The unit of ``metric`` in the stored experiment of ``ref`` (``EXPERIMENT:VARIANT``), None if unknown."""
    from abstat.store import open_store, resolve_store_path

    try:
        with open_store(resolve_store_path(store_arg), create=False) as store:
            return store.unit(ref.rsplit(":", 1)[0], metric)
    except InputError:
        return None
