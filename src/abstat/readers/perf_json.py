"""``perf stat -j`` output: one JSON object a line, ``counter-value`` a string (split from
:mod:`abstat.readers.perfstat`)."""

from __future__ import annotations

import math
from typing import Any

from abstat.errors import InputError
from abstat.readers.perf_collect import Collect
from abstat.readers.perf_numbers import json_number
from abstat.readers.sampleset import SampleSet
from abstat.readers.values import decode_json

_NOT_COUNTED = ("<not counted>", "<not supported>")


def _json_lines(text: str) -> list[tuple[int, Any]]:
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            found.append((number, decode_json(line)))
        except ValueError:
            return []
    return found


def is_perf_json_object(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("event"), str) and "counter-value" in obj


def is_json(text: str) -> bool:
    lines = _json_lines("\n".join(text.splitlines()[:200]))
    return (
        bool(lines)
        and all(
            is_perf_json_object(obj) or (isinstance(obj, dict) and "event" not in obj and "metric-value" in obj)
            for _, obj in lines
        )
        and any(is_perf_json_object(obj) for _, obj in lines)
    )


_AGGREGATES = ("cpu", "core", "die", "socket", "node", "thread", "cgroup")


def _json_value(path: str, number: int, obj: dict[str, Any]) -> float | None:
    """The counter value of a ``-j`` line (a string in perf's JSON); None when not counted."""
    raw = obj["counter-value"]
    if isinstance(raw, str):
        value = json_number(raw)
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw) if math.isfinite(raw) else None
    else:
        value = None
    if value is None and not (isinstance(raw, str) and raw.strip() in _NOT_COUNTED):
        raise InputError(f"{obj['event']}: counter-value is not a number: {str(raw)[:40]!r}", path=path, line=number)
    return value


def read_json(path: str, text: str) -> list[SampleSet]:
    got = Collect(path)
    lines = _json_lines(text)
    if not lines:
        raise InputError("perf stat -j: not JSON lines", path=path)
    intervals = False
    for number, obj in lines:
        if not is_perf_json_object(obj):
            continue  # a metric-only line
        name = ".".join([obj["event"], *(str(obj[k]) for k in _AGGREGATES if k in obj)])
        value = _json_value(path, number, obj)
        if value is None:
            got.missing.append(name)
            continue
        intervals = intervals or "interval" in obj
        got.add(name, value, obj["unit"] if isinstance(obj.get("unit"), str) else None, _json_running(obj))
        if "variance" in obj:
            got.note(
                name,
                f"{path}: {name}: a perf stat -r mean (± {obj['variance']}% standard error); "
                "the number of runs is not in the file",
            )
    if intervals:
        got.note_intervals()
    return got.sets("json")


def _json_running(obj: dict[str, Any]) -> float | None:
    """The share of the time the counter ran (``pcnt-running``), when it is a number."""
    running = obj.get("pcnt-running")
    return float(running) if isinstance(running, (int, float)) and not isinstance(running, bool) else None
