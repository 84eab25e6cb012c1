"""The checks on a run before it is stored (:func:`abstat.store.write.check_run`): every field's type,
finite numbers; InputError, one line, naming the field."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.errors import InputError

_RUN_STATUSES = ("ok", "failed", "timeout")


def _bad(field: str, problem: str) -> InputError:
    return InputError(f"refusing to store a run: {field}: {problem}")


def _finite(value: Any, field: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    return _number(value, field)


def _number(value: Any, field: str) -> float:
    """``value`` as a finite float; InputError naming ``field`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(field, f"not a number ({type(value).__name__})")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise _bad(field, f"{number!r} is not finite")
    return number


def _plain(values: Any, units: Any, notes: Any) -> bool:
    """Whether ``values``, ``units`` and ``notes`` are as the runner hands them over (a dict of lists of
    finite floats, a dict of texts, a list of texts): checked with exact type tests, no ABC look-ups."""
    if type(values) is not dict or (units is not None and type(units) is not dict) or type(notes) is not list:
        return False
    if not all(_plain_numbers(metric, numbers) for metric, numbers in values.items()):
        return False
    return all(type(k) is str and type(u) is str for k, u in (units or {}).items()) and all(
        type(note) is str for note in notes
    )


def _plain_numbers(metric: Any, numbers: Any) -> bool:
    if type(metric) is not str or not metric or type(numbers) is not list:
        return False
    return all(type(value) is float and value - value == 0.0 for value in numbers)  # inf - inf, nan - nan: nan


def _checked_run(
    variant: Any,
    command: Any,
    iteration: Any,
    position: Any,
    status: Any,
    exit_code: Any,
    started_at: Any,
    wall: Any,
    values: Any,
    units: Any,
    notes: Any,
) -> dict[str, Any]:
    """The arguments of :meth:`StoreWriter.add_run`, each checked for its type (what a store holds is
    read back by every command, so nothing malformed goes in: InputError, one line)."""
    _check_run_fields(variant, command, iteration, position, status, exit_code)
    started_at, wall = _number(started_at, "started_at"), _finite(wall, "wall", optional=True)
    if _plain(values, units, notes):
        return dict(
            variant=variant,
            command=command,
            iteration=iteration,
            position=position,
            status=status,
            exit_code=exit_code,
            started_at=started_at,
            wall=wall,
            values={metric: list(numbers) for metric, numbers in values.items()},
            units=dict(units or {}),
            notes=list(notes),
        )
    checked = _checked_values(values)
    units = units or {}
    if not isinstance(units, Mapping) or not all(isinstance(k, str) and isinstance(u, str) for k, u in units.items()):
        raise _bad("units", "not a mapping of metric names to unit texts")
    if isinstance(notes, (str, bytes)) or not isinstance(notes, Sequence) or not all(isinstance(n, str) for n in notes):
        raise _bad("notes", "not a list of texts")
    return dict(
        variant=variant,
        command=command,
        iteration=iteration,
        position=position,
        status=status,
        exit_code=exit_code,
        started_at=started_at,
        wall=wall,
        values=checked,
        units=dict(units),
        notes=list(notes),
    )


def _check_run_fields(variant: Any, command: Any, iteration: Any, position: Any, status: Any, exit_code: Any) -> None:
    """The texts, integers and status of a run."""
    for field, text in (("variant", variant), ("command", command)):
        if not isinstance(text, str) or (field == "variant" and not text):
            raise _bad(field, f"not a text ({type(text).__name__})")
    for field, number in (("iteration", iteration), ("position", position), ("exit_code", exit_code)):
        if not (number is None and field == "exit_code") and (isinstance(number, bool) or not isinstance(number, int)):
            raise _bad(field, f"not an integer ({type(number).__name__})")
    if status not in _RUN_STATUSES:
        raise _bad("status", f"{str(status)[:40]!r} is not one of {', '.join(_RUN_STATUSES)}")


def _checked_values(values: Any) -> dict[str, list[float]]:
    """A mapping of metric names to finite numbers, as lists of floats."""
    if not isinstance(values, Mapping) or not all(isinstance(k, str) and k for k in values):
        raise _bad("values", "not a mapping of metric names to lists of numbers")
    checked = {}
    for metric, numbers in values.items():
        if isinstance(numbers, (str, bytes)) or not isinstance(numbers, Sequence):
            raise _bad(f"values[{metric!r}]", f"not a list of numbers ({type(numbers).__name__})")
        checked[metric] = [_number(v, f"values[{metric!r}][{i}]") for i, v in enumerate(numbers)]
    return checked
