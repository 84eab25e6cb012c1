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
