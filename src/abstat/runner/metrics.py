"""Numbers a benchmark prints: ``--metric NAME=REGEX`` and JSON lines.

A run's whole output is scanned, in blocks of whole lines of about
:data:`BLOCK_BYTES`, so memory stays constant however much it prints
(:func:`scan_output`).  A ``--metric`` match that spans a line break exactly
where one block ends and the next begins is not seen; every match within a
line, and every JSON line, is.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from abstat.runner.model import MetricPattern, check_metric_name

BLOCK_BYTES = 1 << 20
KEPT_OUTPUT_BYTES = 64 * 1024  # the start of the output kept on the measurement
_MAX_NOTES_PER_KIND = 3


def _number(text: str) -> float | None:
    """The finite number ``text`` spells (decimal, or an integer with a 0x/0o/0b prefix), else None."""
    if not text.isascii():  # float() takes Arabic-Indic digits and Unicode spaces; a benchmark prints ASCII
        return None
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        value = float(cleaned)
    except ValueError:
        try:
            value = float(int(cleaned, 0))
        except (ValueError, OverflowError):  # not a number; or beyond the float range
            return None
    return value if math.isfinite(value) else None


def _json_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        return None
    return number if math.isfinite(number) else None


class MetricScanner:
    """Collects metric values from text fed to it block by block."""

    def __init__(self, patterns: Iterable[MetricPattern] = (), *, json_lines: bool = False,
                 reserved: Iterable[str] = ()) -> None:
        self.patterns = tuple(patterns)
        self.json_lines = json_lines
        self.reserved = set(reserved)
        self.regex_values: dict[str, list[float]] = {}
        self.json_values: dict[str, list[float]] = {}
        self._bad: dict[str, list[str]] = {}        # pattern -> first matches that were not numbers
        self._bad_count: dict[str, int] = {}
        self._json_notes: list[str] = []

    def feed(self, text: str) -> None:
        for pattern in self.patterns:
            for match in pattern.regex.finditer(text):
                raw = match.group(1)
                if raw is None:
                    continue
                number = _number(raw)
                if number is None:
                    self._bad_count[pattern.name] = self._bad_count.get(pattern.name, 0) + 1
                    kept = self._bad.setdefault(pattern.name, [])
                    if len(kept) < _MAX_NOTES_PER_KIND:
                        kept.append(raw[:200])
                    continue
                self.regex_values.setdefault(pattern.name, []).append(number)
        if self.json_lines:
            self._feed_json(text)

    def _feed_json(self, text: str) -> None:
        for line in text.splitlines():
            line = line.strip()
            if not (line.startswith("{") and line.endswith("}")):
                continue
            try:
                obj = json.loads(line)
            except ValueError:  # not JSON, or an integer beyond Python's digit limit
                continue
            if not isinstance(obj, dict):
                continue
            for key, value in obj.items():
                number = _json_number(value)
                if number is None:
                    continue
                try:
                    check_metric_name(key)
                except ValueError:
                    continue
                if key in self.reserved:
                    note = f"JSON field {key!r} ignored: it is a built-in metric name"
                    if note not in self._json_notes:
                        self._json_notes.append(note)
                    continue
                self.json_values.setdefault(key, []).append(number)

    def regex_notes(self) -> list[str]:
        notes: list[str] = []
        for pattern in self.patterns:
            for raw in self._bad.get(pattern.name, []):
                notes.append(f"metric {pattern.name}: matched {raw!r}, which is not a finite number")
            extra = self._bad_count.get(pattern.name, 0) - len(self._bad.get(pattern.name, []))
            if extra > 0:
                notes.append(f"metric {pattern.name}: {extra} more match(es) that are not finite numbers")
            if pattern.name not in self.regex_values:
                notes.append(f"metric {pattern.name}: pattern {pattern.regex.pattern!r} matched nothing")
        return notes

    def json_notes(self) -> list[str]:
        return list(self._json_notes)


def iter_blocks(handle: BinaryIO, block_bytes: int = BLOCK_BYTES) -> Iterator[str]:
    """The stream as text, in blocks that end at a line break (a line longer
    than a block is cut).  At most two blocks are held at a time."""
    carry = b""
    while True:
        chunk = handle.read(block_bytes)
        if not chunk:
            break
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) >= block_bytes:
            cut = len(data)
        carry = data[cut:]
        if cut:
            yield data[:cut].decode("utf-8", errors="replace")
    if carry:
        yield carry.decode("utf-8", errors="replace")


def scan_output(handle: BinaryIO, scanner: MetricScanner, block_bytes: int = BLOCK_BYTES) -> str:
    """Feed all of ``handle`` to ``scanner``; return the start of the output (for display)."""
    kept = ""
    for block in iter_blocks(handle, block_bytes):
        if len(kept) < KEPT_OUTPUT_BYTES:
            kept += block[: KEPT_OUTPUT_BYTES - len(kept)]
        scanner.feed(block)
    return kept


def extract_regex_metrics(
    text: str, patterns: Iterable[MetricPattern]
) -> tuple[dict[str, list[float]], list[str]]:
    """Every match of each pattern adds one value (its first group).

    Returns (values by metric, notes).  A pattern that does not match, or
    matches text that is not a finite number, gives a note and no value.
    """
    scanner = MetricScanner(patterns)
    scanner.feed(text)
    return scanner.regex_values, scanner.regex_notes()


def extract_json_metrics(
    text: str, reserved: Iterable[str] = ()
) -> tuple[dict[str, list[float]], list[str]]:
    """Each line that is a JSON object adds its numeric fields as metrics.

    ``{"cycles": 440, "name": "x"}`` gives ``cycles=[440]``; booleans,
    strings, nested values and non-finite numbers are ignored, as are keys
    that are not valid metric names.  Repeated keys accumulate values.
    Keys in ``reserved`` (the built-in metrics) are skipped with a note.
    """
    scanner = MetricScanner(json_lines=True, reserved=reserved)
    scanner.feed(text)
    return scanner.json_values, scanner.json_notes()
