"""Numbers a benchmark prints: ``--metric NAME=REGEX`` and JSON lines."""
from __future__ import annotations

import json
import math
from collections.abc import Iterable

from abstat.runner.model import MetricPattern, check_metric_name


def _number(text: str) -> float | None:
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        value = float(cleaned)
    except ValueError:
        try:
            value = float(int(cleaned, 0))
        except ValueError:
            return None
    return value if math.isfinite(value) else None


def extract_regex_metrics(
    text: str, patterns: Iterable[MetricPattern]
) -> tuple[dict[str, list[float]], list[str]]:
    """Every match of each pattern adds one value (its first group).

    Returns (values by metric, notes).  A pattern that does not match, or
    matches text that is not a finite number, gives a note and no value.
    """
    values: dict[str, list[float]] = {}
    notes: list[str] = []
    for pattern in patterns:
        found: list[float] = []
        for match in pattern.regex.finditer(text):
            raw = match.group(1)
            if raw is None:
                continue
            number = _number(raw)
            if number is None:
                notes.append(f"metric {pattern.name}: matched {raw!r}, which is not a finite number")
                continue
            found.append(number)
        if found:
            values[pattern.name] = found
        else:
            notes.append(f"metric {pattern.name}: pattern {pattern.regex.pattern!r} matched nothing")
    return values, notes


def extract_json_metrics(
    text: str, reserved: Iterable[str] = ()
) -> tuple[dict[str, list[float]], list[str]]:
    """Each line that is a JSON object adds its numeric fields as metrics.

    ``{"cycles": 440, "name": "x"}`` gives ``cycles=[440]``; booleans,
    strings, nested values and non-finite numbers are ignored, as are keys
    that are not valid metric names.  Repeated keys accumulate values.
    Keys in ``reserved`` (the built-in metrics) are skipped with a note.
    """
    values: dict[str, list[float]] = {}
    notes: list[str] = []
    reserved_names = set(reserved)
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        for key, value in obj.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if not math.isfinite(value):
                continue
            try:
                check_metric_name(key)
            except ValueError:
                continue
            if key in reserved_names:
                note = f"JSON field {key!r} ignored: it is a built-in metric name"
                if note not in notes:
                    notes.append(note)
                continue
            values.setdefault(key, []).append(float(value))
    return values, notes
