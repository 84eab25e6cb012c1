"""``--metric json:PATH``: one value per run from the JSON document a benchmark prints.

PATH is a JSON path such as ``jobs[0].read.iops`` (fio), ``end.sum_received.bits_per_second``
(iperf3) or ``jobs[0].read.clat_ns.percentile["99.000000"]``: keys separated by ``.``, ``[N]``
indexes a list (``[-1]``: the last item), ``["KEY"]`` a key holding dots or brackets.  The forms:
``--metric json:PATH[:UNIT]`` (the metric is named after the path: ``jobs.0.read.iops``) and
``--metric NAME=json:PATH[:UNIT]``.

The run's output is kept (up to :data:`MAX_DOCUMENT_CHARS`) and read at its end: the first JSON
document in it (lines printed before it skipped; then any document that follows) in which the path
leads to a number, or a string spelling one (perf's ``-j`` counter values), gives the value.
Standard library only: this runs on the test box.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from abstat.box.runner.model import FieldError, MetricPattern, check_metric_name

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

MAX_DOCUMENT_CHARS = 16 << 20  # the output kept for a JSON path; a longer one is named, not read
MAX_PATH_CHARS = 1000
_NEVER = re.compile(r"(?!)()")  # a JSON path is no regular expression: the regex scan finds nothing
_KEY = re.compile(r"[^.\[\]:\"']+")
_INDEX = re.compile(r"\[(-?\d{1,9})\]")
_QUOTED = re.compile(r"\[(\"|')((?:(?!\1).)*)\1\]")
_UNIT = re.compile(r"[A-Za-z%/_][A-Za-z0-9%/_.\-]{0,31}")
_NAMED = re.compile(r"\A([A-Za-z_][A-Za-z0-9_.\-]*)=json:(.*)\Z", re.DOTALL)

if TYPE_CHECKING:
    from typing import Union

    Segment = Union[str, int]  # noqa: UP007 -- the runner also runs on a box's Python 3.8


@dataclass(frozen=True)
class JsonPathPattern(MetricPattern):
    """A metric read from a JSON path (see the module); ``regex`` never matches."""

    path: tuple[Segment, ...] = ()
    text: str = ""


def is_json_metric(spec: str) -> bool:
    """True for ``json:PATH...`` and ``NAME=json:PATH...``."""
    return spec.startswith("json:") or _NAMED.match(spec) is not None


def parse_path(text: str) -> tuple[tuple[Segment, ...], str]:
    """``(segments, the rest)``: the path at the start of ``text``, then what follows it (``:UNIT``)."""
    segments: list[Segment] = []
    position = 0
    while position < len(text) and text[position] != ":":
        if segments and text[position] == ".":
            position += 1
        for regex in (_INDEX, _QUOTED, _KEY):
            match = regex.match(text, position)
            if match:
                break
        else:
            raise ValueError(f"bad JSON path {text!r} at character {position + 1}")
        if regex is _INDEX:
            segments.append(int(match.group(1)))
        elif regex is _QUOTED:
            segments.append(match.group(2))
        else:
            segments.append(match.group(0).strip())
        position = match.end()
    if not segments:
        raise ValueError(f"empty JSON path in {text!r}")
    return tuple(segments), text[position:]


def parse_json_metric(spec: str) -> JsonPathPattern:
    """``json:PATH[:UNIT]`` or ``NAME=json:PATH[:UNIT]`` (ValueError with the user's message)."""
    named = _NAMED.match(spec)
    name, body = (named.group(1), named.group(2)) if named else (None, spec[len("json:") :])
    if len(body) > MAX_PATH_CHARS:
        raise FieldError(f"{{metric}} {spec[:60]!r}...: a JSON path of more than {MAX_PATH_CHARS} characters", "metric")
    path, rest = parse_path(body)
    unit = None
    if rest:
        unit = rest[1:]
        if not _UNIT.fullmatch(unit):
            raise FieldError(f"{{metric}} {spec!r}: bad unit {unit!r} after the JSON path", "metric")
    if name is None:
        name = ".".join(str(segment) for segment in path)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name):
            raise FieldError(
                f"{{metric}} {spec!r}: name the metric: NAME=json:PATH (the path makes no metric name)", "metric"
            )
    check_metric_name(name)
    return JsonPathPattern(name, _NEVER, unit, path=path, text=body[: len(body) - len(rest)])


def resolve(doc: object, path: tuple[Segment, ...]) -> object:
    """What ``path`` leads to in ``doc``; KeyError when it leads nowhere."""
    node = doc
    for segment in path:
        if isinstance(segment, int) and isinstance(node, list) and -len(node) <= segment < len(node):
            node = node[segment]
        elif isinstance(node, dict) and str(segment) in node:
            node = node[str(segment)]
        else:
            raise KeyError(segment)
    return node


def number(value: object) -> float | None:
    """A finite number, or a string spelling one; else None."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        result = float(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def documents(text: str, limit: int = 1000) -> list[object]:
    """The JSON documents (objects, lists) in ``text``, each starting a line, in order."""
    decoder = json.JSONDecoder()
    found: list[object] = []
    position = 0
    while len(found) < limit:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        if start and text[start - 1] != "\n" and text[:start].strip():
            position = start + 1  # not at the start of a line: inside a text line
            continue
        try:
            doc, position = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        found.append(doc)
    return found


def extract(text: str, patterns: list[JsonPathPattern]) -> tuple[dict[str, list[float]], list[str], list[str]]:
    """Values (one per pattern found), problems (a path not found: the run did not print its result)
    and remarks for a run's whole output ``text``."""
    values: dict[str, list[float]] = {}
    notes: list[str] = []
    remarks: list[str] = []
    docs = documents(text)
    for pattern in patterns:
        found: list[object] = []
        for doc in docs:
            try:
                found.append(resolve(doc, pattern.path))
            except KeyError:
                continue
        if not found:
            what = "no JSON document in the output" if not docs else f"not in the output's {len(docs)} JSON document(s)"
            notes.append(f"metric {pattern.name}: JSON path {pattern.text!r}: {what}")
            continue
        value = number(found[0])
        if value is None:
            notes.append(
                f"metric {pattern.name}: JSON path {pattern.text!r} holds {str(found[0])[:60]!r}, not a finite number"
            )
            continue
        values[pattern.name] = [value]
        if len(found) > 1:
            remarks.append(
                f"metric {pattern.name}: JSON path {pattern.text!r} is in {len(found)} documents; the first is taken"
            )
    return values, notes, remarks
