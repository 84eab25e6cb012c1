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
    try:
        value = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise InputError(f"{what}: not a finite number: {shown(value)}", path=path, line=line) from None
    if not math.isfinite(value):
        raise InputError(f"{what}: not a finite number: {value!r}", path=path, line=line)
    return value


class HugeInteger(ValueError):
    """A JSON integer beyond a double's range: no value abstat reads can be one."""

    def __init__(self, digits: str) -> None:
        super().__init__(f"an integer of {len(digits)} digits, beyond a double's range")
        self.digits = digits


def _json_int(digits: str) -> int:
    number = int(digits)
    if len(digits) > 300:
        try:
            float(number)
        except OverflowError:
            raise HugeInteger(digits) from None
    return number


#: The JSON decoder of every reader: refuses an integer no double can hold (HugeInteger, a ValueError).
DECODER = json.JSONDecoder(parse_int=_json_int)


def decode_json(text: str) -> Any:
    """The JSON document in ``text``; ValueError for bad JSON, an integer beyond a double's range,
    or nesting too deep to decode."""
    try:
        return DECODER.decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def json_error_line(err: ValueError, text: str, start: int = 0) -> int:
    """The line of ``text`` that ``err`` (from the JSON decoder) is about."""
    if isinstance(err, HugeInteger):
        found = text.find(err.digits, start)
        return text.count("\n", 0, found if found >= 0 else start) + 1
    return text.count("\n", 0, getattr(err, "pos", start)) + 1


def load_json(path: str, text: str) -> Any:
    """The JSON document in ``text``; InputError naming ``path`` and the line."""
    try:
        return decode_json(text)
    except ValueError as err:
        line = json_error_line(err, text) if hasattr(err, "pos") or isinstance(err, HugeInteger) else None
        raise InputError(f"bad JSON: {getattr(err, 'msg', err)}", path=path, line=line) from None
