"""Numbers a benchmark prints: ``--metric NAME=REGEX`` and JSON lines.

A run's whole output is scanned as a stream, in blocks of
:data:`BLOCK_BYTES` (:func:`scan_output`), so memory stays bounded however
much it prints.  Where one block ends does not change what is found:

* ``--metric``: each block is scanned together with the text carried over
  from the previous one.  A match that ends within the last
  :data:`OVERLAP_CHARS` characters of what has arrived is not taken yet: it
  may grow, or a better one may start there, once more text arrives.  So
  every match (lookarounds included) of up to :data:`OVERLAP_CHARS`
  characters is found exactly as in the whole output at once, also one that
  spans a line break at a block boundary.  A longer match may be cut.
  :data:`CONTEXT_CHARS` characters before the resume point are kept for
  ``^``, ``\\b`` and lookbehinds.
* JSON lines: the partial last line is carried into the next block.  A line
  longer than :data:`MAX_JSON_LINE_CHARS` is skipped without being held.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Iterable, Iterator

from abstat.box.runner import jsonpath
from abstat.box.runner.model import MetricPattern, check_metric_name

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import BinaryIO

BLOCK_BYTES = 1 << 20
KEPT_OUTPUT_BYTES = 64 * 1024  # the start of the output kept on the measurement
OVERLAP_CHARS = 64 * 1024  # a --metric match up to this long is found wherever blocks end
CONTEXT_CHARS = 4096  # text kept before where a search resumes, for ^, \b and lookbehinds
MAX_JSON_LINE_CHARS = 1 << 20  # a longer line is not read as JSON, and never held whole
_MAX_NOTES_PER_KIND = 3
_PERF_AGGREGATES = ("cpu", "core", "die", "socket", "node", "thread", "cgroup")
# Commas that group thousands, told by the number itself: two groups at least (1,234,567) or a decimal point
# after them (1,234.5).  `1,234` alone may be a decimal comma (de_DE's 1,234 is 1.234): not read, as 0,41 is not.
_GROUPED = re.compile(r"[+-]?[1-9]\d{0,2}(?:(?:,\d{3}){2,}(?:\.\d+)?|,\d{3}\.\d+)")
COMMA_NOTE = "a decimal comma or a thousands separator? print numbers with '.' as the decimal point (LC_ALL=C)"


def _number(text: str) -> float | None:
    """The finite number ``text`` spells (decimal, or an integer with a 0x/0o/0b prefix), else None.

    A comma is read only as a thousands separator between groups of three digits (``1,234,567.5``);
    ``0,41``, ``12,5``, ``1.234,5`` and ``1,234`` are no number (never 41, 125, 1.2345 or 1234)."""
    if not text.isascii():  # float() takes Arabic-Indic digits and Unicode spaces; a benchmark prints ASCII
        return None
    cleaned = text.strip()
    if "," in cleaned:
        if not _GROUPED.fullmatch(cleaned):
            return None
        cleaned = cleaned.replace(",", "")
    cleaned = cleaned.replace("_", "")
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
    """Collects metric values from text fed to it piece by piece; call :meth:`finish` at the end."""

    def __init__(
        self,
        patterns: Iterable[MetricPattern] = (),
        *,
        json_lines: bool = False,
        reserved: Iterable[str] = (),
        overlap: int = OVERLAP_CHARS,
    ) -> None:
        patterns = tuple(patterns)
        self.json_paths = [p for p in patterns if isinstance(p, jsonpath.JsonPathPattern)]
        self.patterns = tuple(p for p in patterns if not isinstance(p, jsonpath.JsonPathPattern))
        self.json_lines = json_lines
        self.json_units: dict[str, str] = {}  # perf stat -j lines: the event's unit
        self._document: list[str] = []  # the output kept for JSON paths
        self._document_chars = 0
        self._path_notes: list[str] = []
        self.reserved = set(reserved)
        self.overlap = overlap
        self.regex_values: dict[str, list[float]] = {}
        self.json_values: dict[str, list[float]] = {}
        self._bad: dict[str, list[str]] = {}  # pattern -> first matches that were not numbers
        self._bad_count: dict[str, int] = {}
        self._json_notes: list[str] = []
        self._unreadable = 0  # JSON lines nested too deeply to decode
        self._text = ""  # unscanned text, after context kept for lookbehind
        self._resume = [0] * len(self.patterns)  # per pattern: where its next search starts in _text
        self._line: list[str] = []  # the JSON line that has not ended yet
        self._line_chars = 0
        self._finished = False

    def feed(self, text: str) -> None:
        """Scan the next piece of the output."""
        if self.patterns:
            self._scan(self._text + text, final=False)
        if self.json_lines:
            self._feed_lines(text)
        if self.json_paths and self._document_chars >= 0:
            self._document_chars += len(text)
            if self._document_chars > jsonpath.MAX_DOCUMENT_CHARS:
                self._document, self._document_chars = [], -1
            else:
                self._document.append(text)

    def finish(self) -> None:
        """The output has ended: take what was held back."""
        if self._finished:
            return
        self._finished = True
        if self.patterns:
            self._scan(self._text, final=True)
        if self.json_lines and self._line:
            line, self._line = "".join(self._line), []
            self._feed_json(line)
        if self.json_paths:
            self._read_paths()

    def _read_paths(self) -> None:
        if self._document_chars < 0:
            limit = jsonpath.MAX_DOCUMENT_CHARS >> 20
            self._path_notes.extend(
                f"metric {p.name}: the output is longer than {limit} MiB: its JSON path is not read"
                for p in self.json_paths
            )
            return
        values, problems, remarks = jsonpath.extract("".join(self._document), self.json_paths)
        self._document = []
        self.regex_values.update(values)
        self._path_notes.extend(problems)
        self._json_notes.extend(remarks)

    def _scan(self, text: str, *, final: bool) -> None:
        settled = len(text) if final else len(text) - self.overlap  # a match ending later may change
        for index, pattern in enumerate(self.patterns):
            position = self._resume[index]
            for match in pattern.regex.finditer(text, position):
                if match.end() > settled and match.start() >= settled - self.overlap:
                    position = match.start()  # scanned again with more text
                    break
                self._take(pattern, match.group(1))
                position = match.end() if match.end() > match.start() else match.end() + 1
            else:
                position = max(position, settled)
            self._resume[index] = min(position, len(text))
        if final:
            self._text = ""
            return
        cut = max(0, min(self._resume, default=len(text)) - CONTEXT_CHARS)
        self._text = text[cut:]
        self._resume = [position - cut for position in self._resume]

    def _take(self, pattern: MetricPattern, raw: str | None) -> None:
        if raw is None:
            return
        number = _number(raw)
        if number is None:
            self._bad_count[pattern.name] = self._bad_count.get(pattern.name, 0) + 1
            kept = self._bad.setdefault(pattern.name, [])
            if len(kept) < _MAX_NOTES_PER_KIND:
                kept.append(raw[:200])
            return
        self.regex_values.setdefault(pattern.name, []).append(number)

    def _feed_lines(self, text: str) -> None:
        cut = text.rfind("\n") + 1
        if cut:
            head = text[:cut]
            if self._line:
                first = head.index("\n") + 1
                self._hold(head[:first])
                line, self._line = "".join(self._line), []
                self._line_chars = 0
                if line:
                    self._feed_json(line)
                head = head[first:]
            self._feed_json(head)
        self._hold(text[cut:])

    def _hold(self, text: str) -> None:
        """Keep ``text`` as part of the unfinished line, unless the line is too long to be JSON we read."""
        if not text or self._line_chars < 0:
            return
        self._line_chars += len(text)
        if self._line_chars > MAX_JSON_LINE_CHARS:
            self._line, self._line_chars = [""], -1  # skipped until its end: "" keeps the state "in a line"
        else:
            self._line.append(text)

    def _feed_json(self, text: str) -> None:
        for line in text.splitlines():
            line = line.strip()
            if not (line.startswith("{") and line.endswith("}")):
                continue
            try:
                obj = json.loads(line)
            except ValueError:  # not JSON, or an integer beyond Python's digit limit
                continue
            except RecursionError:  # JSON nested deeper than Python decodes: the run's output is unreadable
                self._unreadable += 1
                continue
            if not isinstance(obj, dict):
                continue
            if isinstance(obj.get("event"), str) and "counter-value" in obj:
                self._perf_json(obj)
            else:
                self._json_fields(obj)

    def _json_fields(self, obj: dict[str, object]) -> None:
        """A JSON line's numeric fields named as metrics may be, each one value."""
        for key, value in obj.items():
            number = _json_number(value)
            if number is None:
                continue
            try:
                check_metric_name(key)
            except ValueError:
                continue
            if key in self.reserved:
                self._json_note(f"JSON field {key!r} ignored: it is a built-in metric name")
                continue
            self.json_values.setdefault(key, []).append(number)

    def _perf_json(self, obj: dict[str, object]) -> None:
        """A ``perf stat -j`` line: the event is the metric, ``counter-value`` (a string) its value."""
        event = str(obj["event"])
        name = ".".join([event, *(str(obj[k]) for k in _PERF_AGGREGATES if k in obj)])
        value = jsonpath.number(obj["counter-value"])
        try:
            check_metric_name(name)
        except ValueError:
            name = "perf." + "".join(c if c.isalnum() or c in "_.-" else "_" for c in name)
        if value is None:
            self._json_note(f"perf stat -j: {name} not counted ({str(obj['counter-value'])[:40]})")
            return
        if name in self.reserved:
            self._json_note(f"perf stat -j: event {name!r} ignored: it is a built-in metric name")
            return
        self.json_values.setdefault(name, []).append(value)
        if isinstance(obj.get("unit"), str) and obj["unit"]:
            self.json_units[name] = str(obj["unit"])
        running = jsonpath.number(obj.get("pcnt-running"))
        if running is not None and running < 100.0:
            self._json_note(
                f"perf stat -j: {name} counted {running:g}% of the time (multiplexed counters): perf scaled the count"
            )

    def _json_note(self, note: str) -> None:
        if note not in self._json_notes:
            self._json_notes.append(note)

    def regex_notes(self) -> list[str]:
        notes: list[str] = list(self._path_notes)
        for pattern in self.patterns:
            for raw in self._bad.get(pattern.name, []):
                why = COMMA_NOTE if "," in raw else "which is not a finite number"
                notes.append(f"metric {pattern.name}: matched {raw!r}, {why}")
            extra = self._bad_count.get(pattern.name, 0) - len(self._bad.get(pattern.name, []))
            if extra > 0:
                notes.append(f"metric {pattern.name}: {extra} more match(es) that are not finite numbers")
            if pattern.name not in self.regex_values and not self._bad_count.get(pattern.name, 0):
                notes.append(f"metric {pattern.name}: pattern '{pattern.regex.pattern}' matched nothing")
        return notes

    def json_notes(self) -> list[str]:
        return list(self._json_notes)

    def json_errors(self) -> list[str]:
        """What makes the run's output unreadable: its JSON lines nested too deeply to decode."""
        if not self._unreadable:
            return []
        return [f"{self._unreadable} JSON output line(s) nested too deeply to read: the run's values are not known"]


def iter_blocks(handle: BinaryIO, block_bytes: int = BLOCK_BYTES) -> Iterator[str]:
    """The stream as text, ``block_bytes`` at a time (a UTF-8 character split
    between two blocks is decoded whole; invalid bytes become U+FFFD)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = handle.read(block_bytes)
        text = decoder.decode(chunk, final=not chunk)
        if text:
            yield text
        if not chunk:
            break


def scan_output(handle: BinaryIO, scanner: MetricScanner, block_bytes: int = BLOCK_BYTES) -> str:
    """Feed all of ``handle`` to ``scanner`` and finish it; return the start of the output (for display)."""
    kept = ""
    for block in iter_blocks(handle, block_bytes):
        if len(kept) < KEPT_OUTPUT_BYTES:
            kept += block[: KEPT_OUTPUT_BYTES - len(kept)]
        scanner.feed(block)
    scanner.finish()
    return kept


def extract_regex_metrics(text: str, patterns: Iterable[MetricPattern]) -> tuple[dict[str, list[float]], list[str]]:
    """Every match of each pattern adds one value (its first group).

    Returns (values by metric, notes).  A pattern that does not match, or
    matches text that is not a finite number, gives a note and no value.
    """
    scanner = MetricScanner(patterns)
    scanner.feed(text)
    scanner.finish()
    return scanner.regex_values, scanner.regex_notes()


def extract_json_metrics(text: str, reserved: Iterable[str] = ()) -> tuple[dict[str, list[float]], list[str]]:
    """Each line that is a JSON object adds its numeric fields as metrics.

    ``{"cycles": 440, "name": "x"}`` gives ``cycles=[440]``; booleans,
    strings, nested values and non-finite numbers are ignored, as are keys
    that are not valid metric names.  Repeated keys accumulate values.
    Keys in ``reserved`` (the built-in metrics) are skipped with a note.
    """
    scanner = MetricScanner(json_lines=True, reserved=reserved)
    scanner.feed(text)
    scanner.finish()
    return scanner.json_values, scanner.json_notes()
