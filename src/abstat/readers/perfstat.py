"""``perf stat`` output: the text perf prints, ``-x,`` CSV and ``-j`` JSON lines.

Every event is a metric (label ``metric``: the event name) with perf's unit
(``msec`` for task-clock, none for counts).  A file holding several runs
(``perf stat --append -o``, or one invocation's output after another) gives
one value per occurrence of each event; ``-I`` interval lines are values of
a time series (noted).

* Text with ``(N runs)`` (``perf stat -r N``) holds the mean of the N runs and
  ``( +- x% )``: the standard error of the mean relative to it (perf's
  ``rel_stddev_stats``), so the standard deviation of the runs is
  ``x/100 * mean * sqrt(N)``.  Such a block becomes summary statistics
  (N, mean, that standard deviation); ``m +- s seconds time elapsed`` gives
  the standard error ``s`` directly.
* ``-x,`` CSV rows are ``[prefix,]value,unit,event[,variance%],run-time,pcnt-running,metric,unit``
  (prefix: the ``-I`` time stamp, the ``-A``/``--per-core`` CPU...); the
  first row is data, never a header.
* ``-j`` lines hold ``counter-value`` as a string.

An event counted only part of the time (``pcnt-running`` below 100: the
counters were multiplexed and perf scaled the count) keeps that percentage
as a note, and says so as a warning.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.summary import Summary

_NOT_COUNTED = ("<not counted>", "<not supported>")
_NUM = r"[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"  # unambiguous: no backtracking blow-up
HEADER = re.compile(r"^\s*Performance counter stats for (?P<what>.+?)(?:\s*\((?P<runs>\d+) runs\))?:\s*$")
# "     0.68 msec task-clock   # 0.501 CPUs utilized   ( +-  6.77% )  (50.00%)"
COUNTER = re.compile(
    rf"^\s*(?:(?P<ts>\d+\.\d+)\s+)?(?P<value>{_NUM}|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|usec|nsec|sec|Joules|MiB|Watts|ms|ns|us|s)\s+)?"
    r"(?P<event>[A-Za-z_][\w.:/=,@\-\[\]{}]*)"
    r"(?P<rest>.*)$"
)
NOISE = re.compile(r"\(\s*\+-\s*(?P<pct>[\d.]+)%\s*\)")
RUNNING = re.compile(r"(?:\((?P<pct>[\d.]+)%\)|\[\s*(?P<old>[\d.]+)%\s*\])\s*$")  # old perf: [ 50.01%]
ELAPSED = re.compile(rf"^\s*(?P<value>{_NUM})\s*(?:\+-\s*(?P<se>{_NUM})\s*)?seconds (?P<what>time elapsed|user|sys)")
_CSV_FIELDS_MIN = 3


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class _Collect:
    """Values, units and notes per metric name, in the order first seen."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[str, list[float]] = {}
        self.units: dict[str, str | None] = {}
        self.notes: dict[str, list[str]] = {}
        self.summaries: dict[str, Summary] = {}
        self.missing: list[str] = []
        self.running: dict[str, list[float | None]] = {}

    def add(self, event: str, value: float, unit: str | None, running: float | None = None) -> None:
        self.values.setdefault(event, []).append(value)
        self.units.setdefault(event, unit or None)
        self.running.setdefault(event, []).append(running)
        if running is not None and running < 100.0:
            note = (
                f"{self.path}: {event}: counted {running:g}% of the time (multiplexed counters): perf scaled the count"
            )
            kept = self.notes.setdefault(event, [])
            if note not in kept:
                kept.append(note)

    def note(self, event: str, text: str) -> None:
        kept = self.notes.setdefault(event, [])
        if text not in kept:
            kept.append(text)

    def sets(self, fmt: str) -> list[SampleSet]:
        if not self.values:
            what = f"; not counted: {', '.join(dict.fromkeys(self.missing))}" if self.missing else ""
            raise InputError(f"perf stat {fmt}: no counter values{what}", path=self.path)
        found = []
        for event, values in self.values.items():
            notes = list(self.notes.get(event, []))
            summary = self.summaries.get(event)
            found.append(
                SampleSet(
                    labels={"metric": event},
                    runs=[] if summary else [values],
                    source=self.path,
                    unit=self.units.get(event),
                    notes=notes,
                    summary=summary,
                    extra={"format": f"perf-stat-{fmt}", "pcnt_running": self.running[event]},
                )
            )
        if self.missing:
            found[0].notes.append(f"{self.path}: not counted: {', '.join(dict.fromkeys(self.missing))}")
        return found


# --------------------------------------------------------------------------
# text


def parse_counter_line(line: str) -> tuple[str, float | None, str | None, float | None, float | None] | None:
    """``(event, value or None when not counted, unit, relative SE %, running %)`` of a counter line."""
    match = COUNTER.match(line)
    if match is None or match.group("event") in ("seconds",):
        return None
    rest = match.group("rest")
    if rest and not rest[:1].isspace():
        return None
    raw = match.group("value")
    value = None if raw in _NOT_COUNTED else _number(raw)
    if value is None and raw not in _NOT_COUNTED:
        return None
    noise = NOISE.search(rest)
    running = RUNNING.search(rest.split("#", 1)[-1] if "#" in rest else rest)
    return (
        match.group("event"),
        value,
        match.group("unit"),
        float(noise.group("pct")) if noise else None,
        float(running.group("pct") or running.group("old")) if running else None,
    )


def read_text_blocks(text: str) -> list[dict[str, Any]]:
    """Each ``Performance counter stats for ...`` block: ``what``, ``runs``, ``counters``
    (``[(event, value, unit, rel_se_pct, running_pct, line)]``) and ``elapsed`` lines."""
    blocks: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = HEADER.match(line)
        if header:
            runs = int(header.group("runs")) if header.group("runs") else 1
            current = {
                "what": header.group("what").strip(),
                "runs": runs,
                "counters": [],
                "elapsed": [],
                "line": number,
            }
            blocks.append(current)
            continue
        if current is None:
            continue
        elapsed = ELAPSED.match(line)
        if elapsed:
            se = _number(elapsed.group("se")) if elapsed.group("se") else None
            current["elapsed"].append((elapsed.group("what"), _number(elapsed.group("value")), se, number))
            continue
        counter = parse_counter_line(line)
        if counter is not None:
            current["counters"].append((*counter, number))
    return blocks


def is_text(text: str) -> bool:
    return any(HEADER.match(line) for line in text.splitlines()[:200])


def read_text(path: str, text: str) -> list[SampleSet]:
    blocks = [b for b in read_text_blocks(text) if b["counters"] or b["elapsed"]]
    if not blocks:
        raise InputError("perf stat text: no counter lines after 'Performance counter stats for'", path=path)
    got = _Collect(path)
    for block in blocks:
        _add_block(got, block)
    if len(blocks) == 1 and blocks[0]["runs"] > 1:
        _summaries(got, blocks[0])
    elif any(b["runs"] > 1 for b in blocks):
        for event in got.values:
            got.note(event, f"{path}: {event}: each value is the mean of a perf stat -r block's runs")
    return got.sets("text")


def _add_block(got: _Collect, block: dict[str, Any]) -> None:
    """A block's counters (those not counted listed as missing) and its elapsed times, as ``seconds-...``."""
    for event, value, unit, _pct, running, _line in block["counters"]:
        if value is None:
            got.missing.append(event)
        else:
            got.add(event, value, unit, running)
    for what, value, _se, _line in block["elapsed"]:
        if value is not None:
            got.add(f"seconds-{what.replace(' ', '-')}", value, "s")


def _summaries(got: _Collect, block: dict[str, Any]) -> None:
    """A ``-r N`` block: (N, mean, sd) per event, the sd from perf's standard error of the mean."""
    n = block["runs"]
    for event, value, _unit, pct, _running, _line in block["counters"]:
        if value is None or event not in got.values:
            continue
        sd = abs(value) * (pct or 0.0) / 100.0 * math.sqrt(n)
        got.summaries[event] = Summary(n, value, sd)
        got.note(
            event,
            f"{got.path}: {event}: mean of {n} runs; perf's ± {pct or 0:g}% is the standard error "
            f"of the mean, so the standard deviation is ± x sqrt({n}) = {sd:.6g}",
        )
    for what, value, se, _line in block["elapsed"]:
        if value is not None and se is not None:
            event = f"seconds-{what.replace(' ', '-')}"
            got.summaries[event] = Summary(n, value, se * math.sqrt(n))


# --------------------------------------------------------------------------
# -x, CSV


def _csv_row(fields: list[str]) -> tuple[int, bool] | None:
    """``(offset of the value field, has a variance field)`` when ``fields`` is a perf stat CSV row."""
    for offset in range(4):
        if len(fields) < offset + _CSV_FIELDS_MIN:
            return None
        value, unit, event = fields[offset], fields[offset + 1].strip(), fields[offset + 2].strip()
        if not (value.strip() in _NOT_COUNTED or _number(value) is not None):
            continue
        if _number(unit) is not None or not event or _number(event) is not None:
            continue
        if offset and not all(f.strip() for f in fields[:offset]):
            continue
        variance = len(fields) > offset + 3 and fields[offset + 3].strip().endswith("%")
        return offset, variance
    return None


def _csv_lines(text: str) -> list[tuple[int, list[str]]]:
    return [
        (n, line.split(","))
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def is_csv(text: str) -> bool:
    """Every line a perf stat ``-x,`` row (comments aside), and one at least."""
    lines = _csv_lines(text)
    shapes = [_csv_row(fields) for _, fields in lines[:200]]
    return bool(shapes) and all(s is not None for s in shapes)


def read_csv(path: str, text: str) -> list[SampleSet]:
    got = _Collect(path)
    intervals = False
    for number, fields in _csv_lines(text):
        shape = _csv_row(fields)
        if shape is None:
            raise InputError("not a perf stat -x, row (value,unit,event,...)", path=path, line=number)
        offset, variance = shape
        raw, unit, event = fields[offset].strip(), fields[offset + 1].strip(), fields[offset + 2].strip()
        name, interval = _csv_name(fields[:offset], event)
        intervals = intervals or interval
        if raw in _NOT_COUNTED:
            got.missing.append(name)
            continue
        rest = fields[offset + 3 + int(variance) :]
        running = _number(rest[1]) if len(rest) > 1 and rest[1].strip() else None
        got.add(name, float(_number(raw) or 0.0), unit or None, running)
        if variance:
            got.note(
                name,
                f"{path}: {name}: a perf stat -r mean (± {fields[offset + 3].strip()} standard error); "
                "the number of runs is not in the file",
            )
    if intervals:
        _note_intervals(got)
    return got.sets("csv")


def _csv_name(prefix_fields: list[str], event: str) -> tuple[str, bool]:
    """A CSV row's name: the event, with the aggregation fields in front of the value (``-A``, ``--per-core``)
    after a dot; and whether the first of them is an interval's time stamp (``-I``), which is left out."""
    prefix = [f.strip() for f in prefix_fields]
    interval = bool(prefix) and _number(prefix[0]) is not None
    if interval:
        prefix = prefix[1:]
    return (f"{event}.{'.'.join(prefix)}" if prefix else event), interval


def _note_intervals(got: _Collect) -> None:
    for name in got.values:
        got.note(name, f"{got.path}: {name}: perf stat -I interval counts: a time series, not independent runs")


# --------------------------------------------------------------------------
# -j JSON lines


def _json_lines(text: str) -> list[tuple[int, Any]]:
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            found.append((number, json.loads(line)))
        except (ValueError, RecursionError):
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
        value = _number(raw)
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw) if math.isfinite(raw) else None
    else:
        value = None
    if value is None and not (isinstance(raw, str) and raw.strip() in _NOT_COUNTED):
        raise InputError(f"{obj['event']}: counter-value is not a number: {str(raw)[:40]!r}", path=path, line=number)
    return value


def read_json(path: str, text: str) -> list[SampleSet]:
    got = _Collect(path)
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
        _note_intervals(got)
    return got.sets("json")


def _json_running(obj: dict[str, Any]) -> float | None:
    """The share of the time the counter ran (``pcnt-running``), when it is a number."""
    running = obj.get("pcnt-running")
    return float(running) if isinstance(running, (int, float)) and not isinstance(running, bool) else None


def detect(text: str) -> str | None:
    """``perf-stat``, ``perf-stat-csv`` or ``perf-stat-json`` when ``text`` is perf stat output."""
    if is_text(text):
        return "perf-stat"
    stripped = text.lstrip()
    if stripped.startswith("{") and is_json(text):
        return "perf-stat-json"
    if "," in text and is_csv(text):
        return "perf-stat-csv"
    return None


def read(path: str, fmt: str, text: str) -> list[SampleSet]:
    reader = {"perf-stat": read_text, "perf-stat-csv": read_csv, "perf-stat-json": read_json}[fmt]
    return reader(path, text)
