"""Checks on the values read from peers' files, shared by their readers: numbers, finite numbers,
a value shown in an error message, a JSON document whose errors name the line."""

from __future__ import annotations

import json
import math
from typing import Any

from abstat.errors import InputError


def is_number(field: str) -> bool:
    """A finite number."""
    try:
        value = float(field)
    except ValueError:
        return False
    return math.isfinite(value)


def looks_numeric(field: str) -> bool:
    """A number, finite or not: a column of them holds values, not labels
    (a ``nan`` in it is then reported on its line, not taken for a label)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def shown(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def finite(value: Any, path: str, what: str, line: int | None = None) -> float:
    """``value`` as a float; InputError naming ``what`` when it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what}: not a number: {shown(value)}", path=path, line=line)
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{what}: not a finite number: {value!r}", path=path, line=line)
    return value


def load_json(path: str, text: str) -> Any:
    """The JSON document in ``text``; InputError naming ``path`` and the line."""
    try:
        return json.loads(text)
    except ValueError as err:
        line = getattr(err, "lineno", None)
        raise InputError(f"bad JSON: {getattr(err, 'msg', err)}", path=path, line=line) from None
    except RecursionError:
        raise InputError("bad JSON: nested too deeply", path=path) from None
