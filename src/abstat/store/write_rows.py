"""The rows of the store's writer (:mod:`abstat.store.write`, which re-exports
the checks): names, invocations and runs checked before they are stored, and
a run's fields as rows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.store.run_checks import _bad, _checked_run
from abstat.store.schema import new_uid


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_experiment_name(name: str) -> str:
    if not name or ":" in name or name.strip() != name or "\n" in name:
        raise UsageError(f"bad experiment name {name!r}: it must be non-empty, without ':' or surrounding spaces")
    return name


def _check_invocation(experiment: str, machine: Any, labels: Any) -> None:
    """The experiment's name, the machine record (text hostname and boot_id) and the labels (texts)."""
    check_experiment_name(experiment)
    if not isinstance(machine, Mapping) or not all(
        isinstance(machine.get(key), (str, type(None))) for key in ("hostname", "boot_id")
    ):
        raise InputError("refusing to store an invocation: machine: not a record with text hostname and boot_id")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in (labels or {}).items()):
        raise InputError("refusing to store an invocation: labels: not a mapping of texts to texts")


def check_run(
    *,
    variant: Any,
    command: Any,
    iteration: Any,
    position: Any,
    status: Any,
    exit_code: Any,
    started_at: Any,
    wall: Any,
    values: Any,
    units: Any = None,
    notes: Any = (),
    uid: Any = None,
) -> dict[str, Any]:
    """A run as :meth:`StoreWriter.add_checked_runs` takes it: every field checked (InputError, one line),
    and its identity (``uid``, new when None)."""
    checked = _checked_run(
        variant, command, iteration, position, status, exit_code, started_at, wall, values, units, notes
    )
    if uid is not None and (not isinstance(uid, str) or not 0 < len(uid) <= 64):
        raise _bad("uid", "not an identity text")
    checked["uid"] = uid or new_uid()
    return checked


def _run_row(run: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "uid": run["uid"],
        "command": run["command"],
        "iteration": run["iteration"],
        "position": run["position"],
        "status": run["status"],
        "exit_code": run["exit_code"],
        "started_at": run["started_at"],
        "wall": run["wall"],
        "notes": _dumps_list(run["notes"]),
    }


def _samples(run: Mapping[str, Any]) -> list[tuple[str, int, float, str | None]]:
    if run["status"] != "ok":
        return []
    units = run["units"]
    return [
        (metric, index, value, units.get(metric))
        for metric, numbers in run["values"].items()
        for index, value in enumerate(numbers)
    ]


def _dumps_list(items: Sequence[Any]) -> str | None:
    return json.dumps(list(items)) if items else None
