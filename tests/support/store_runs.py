"""One successful run written into a store, as the tests that build stores by hand need it (the fields
abstat run would fill, fixed: position 0, exit code 0, started at 1.0, 10 ms of wall time)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def add_ok_run(
    store: Any,
    invocation: Any,
    variant: str,
    iteration: int,
    values: Mapping[str, Sequence[float]],
    units: Mapping[str, str] | None = None,
    command: str = "true",
) -> int:
    return store.add_run(
        invocation,
        variant=variant,
        command=command,
        iteration=iteration,
        position=0,
        status="ok",
        exit_code=0,
        started_at=1.0,
        wall=0.01,
        values=values,
        units=units,
    )


def add_revision_run(
    store: Any,
    invocation: Any,
    variant: str,
    iteration: int,
    revision: int,
    values: Mapping[str, Sequence[float]],
    units: Mapping[str, str],
    ok: bool = True,
) -> int:
    """Run ``iteration`` of ``make`` at revision ``revision`` of a history (started at ``100 r + i``, its wall
    time the first ``wall`` value), failed (exit 1) unless ``ok``."""
    return store.add_run(
        invocation,
        variant=variant,
        command="make",
        iteration=iteration,
        position=iteration,
        status="ok" if ok else "failed",
        exit_code=0 if ok else 1,
        started_at=100.0 * revision + iteration,
        wall=values["wall"][0],
        values=values,
        units=units,
    )


def journal_run(index: int, uid: str | None = None) -> dict:
    """A checked run of variant ``a`` (``./bench``, one value ``t`` = 1 + ``index`` seconds), as a journal holds it."""
    from abstat.store.write import check_run

    return check_run(
        variant="a",
        command="./bench",
        iteration=index,
        position=index,
        status="ok",
        exit_code=0,
        started_at=1.7e9 + index,
        wall=0.01,
        values={"t": [1.0 + index]},
        units={"t": "s"},
        notes=[],
        uid=uid,
    )


def old_new_store(path: str, new_centre: float, *, runs: int, seed: int, settings: dict | None = None) -> str:
    """A store at ``path`` with experiment ``e``: variants old (centre 100) and new (``new_centre``), ``runs`` runs
    each of one value of ``t`` (1% noise, ``random.Random(seed)``), interleaved; ``settings`` as stored with the
    invocation (e.g. a spec's analysis).  Returns ``path``."""
    import random

    from abstat.store import open_store

    rng = random.Random(seed)
    with open_store(path) as store:
        invocation = store.start_invocation("e", {"hostname": "h"}, settings=settings or {}, variants=["old", "new"])
        for i in range(runs):
            for variant, centre in (("old", 100.0), ("new", new_centre)):
                add_ok_run(store, invocation, variant, i, {"t": [centre * rng.gauss(1, 0.01)]})
        store.finish_invocation(invocation, "complete")
    return path
