"""``perf stat`` output: the text perf prints, ``-x,`` CSV and ``-j`` JSON lines.

Every event is a metric (label ``metric``: the event name) with perf's unit (``msec`` for task-clock,
none for counts).  A file holding several runs (``perf stat --append -o``, or one output after another)
gives one value per occurrence of each event; ``-I`` interval lines are a time series (noted).  Text
numbers are read in the locale perf printed them in (:mod:`abstat.readers.perf_numbers`: de_DE's
``1.224.637`` and ``0,41``), refused when perf's layout does not tell it.

* Text with ``(N runs)`` (``perf stat -r N``) holds the mean of the N runs and ``( +- x% )``: the
  standard error of the mean relative to it (perf's ``rel_stddev_stats``), so the standard deviation
  of the runs is ``x/100 * mean * sqrt(N)``: such a block becomes summary statistics (N, mean, that
  sd); ``m +- s seconds time elapsed`` gives the standard error ``s`` directly.
* ``-x,`` CSV rows are ``[prefix,]value,unit,event[,variance%],run-time,pcnt-running,metric,unit``
  (prefix: the ``-I`` time stamp, the ``-A``/``--per-core`` CPU...); the first row is data.
* ``-j`` lines hold ``counter-value`` as a string (:mod:`abstat.readers.perf_json`).

An event counted only part of the time (``pcnt-running`` below 100: multiplexed counters, the count
scaled by perf) keeps that percentage as a note, and says so as a warning.
"""

from __future__ import annotations

import math
import re
from typing import Any

from abstat.errors import InputError
from abstat.readers.perf_collect import Collect
from abstat.readers.perf_json import is_json, read_json
from abstat.readers.perf_numbers import AGGR, COUNTED_AGGR, NUMBER, counter_name, marks_of, to_number, ungroup
from abstat.readers.sampleset import SampleSet
from abstat.readers.summary import Summary

_NOT_COUNTED = ("<not counted>", "<not supported>")
_NUM = NUMBER  # perf prints in the user's locale (readers/perf_numbers.py)
HEADER = re.compile(r"^\s*Performance counter stats for (?P<what>.+?)(?:\s*\((?P<runs>\d+) runs\))?:\s*$")
# "     0.68 msec task-clock   # 0.501 CPUs utilized   ( +-  6.77% )  (50.00%)"; with an aggregation in front
# (stat-display.c aggr_printout: -A "CPU%-4d", --per-core "S%d-D%d-C%-8d %4d", --per-die/-socket/-node, and
# --per-thread "comm-pid") and a cgroup after the event (-G: print_cgroup), the event's name gains them.
COUNTER = re.compile(
    rf"^\s*(?:(?P<ts>\d+\.\d+)\s+)?(?:(?P<aggr>{AGGR})\s+(?:(?P<nr>\d+)\s+(?=[\d<]))?)?"
    rf"(?P<value>{_NUM}|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|usec|nsec|sec|Joules|MiB|Watts|ms|ns|us|s)\s+)?"
    r"(?P<event>[A-Za-z_][\w.:/=,@\-\[\]{}]*)"
    r"(?P<rest>.*)$"
)
# what looks like a counter (a number, or an aggregation and a number, then a word) but is not read: refused
UNREAD = re.compile(rf"^\s*(?:\d+\.\d+\s+)?(?:(?:{AGGR})\s+)?(?:\d\S*|<not \w+>)(?:\s+\d\S*)*\s+[A-Za-z_]")
NOISE = re.compile(rf"\(\s*\+-\s*(?P<pct>{_NUM})%\s*\)")
RUNNING = re.compile(rf"(?:\((?P<pct>{_NUM})%\)|\[\s*(?P<old>{_NUM})%\s*\])\s*$")  # old perf: [ 50.01%]
ELAPSED = re.compile(rf"^\s*(?P<value>{_NUM})\s*(?:\+-\s*(?P<se>{_NUM})\s*)?seconds (?P<what>time elapsed|user|sys)")
_CSV_FIELDS_MIN = 3
_STAMP = re.compile(r"\d+\.\d{9}")  # perf's -I time stamp, %lu.%09lu in every locale


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------
# text


def parse_counter_line(
    line: str, decimal: str = "."
) -> tuple[str, float | None, str | None, float | None, float | None] | None:
    """``(event, value or None when not counted, unit, relative SE %, running %)`` of a counter line
    (``decimal``: the file's decimal mark); a ValueError when its value is not a number in that locale."""
    match = COUNTER.match(line)
    if match is None or match.group("event") in ("seconds",):
        return None
    rest = match.group("rest")
    if rest and not rest[:1].isspace():
        return None
    name = counter_name(match.group("event"), match.group("aggr"), match.group("nr"), rest)
    raw = match.group("value")
    value = None if raw in _NOT_COUNTED else to_number(raw, decimal)
    if value is None and raw not in _NOT_COUNTED:
        raise ValueError(f"{name}: {raw!r} is not a number with {decimal!r} as the decimal mark")
    noise = NOISE.search(rest)
    running = RUNNING.search(rest.split("#", 1)[-1] if "#" in rest else rest)
    return (
        name,
        value,
        match.group("unit"),
        to_number(noise.group("pct"), decimal) if noise else None,
        to_number(running.group("pct") or running.group("old"), decimal) if running else None,
    )


def read_text_blocks(text: str, path: str = "<text>") -> list[dict[str, Any]]:
    """Each ``Performance counter stats for ...`` block: ``what``, ``runs``, ``counters``
    (``[(event, value, unit, rel_se_pct, running_pct, line)]``) and ``elapsed`` lines; numbers read in the
    file's locale (an InputError naming the line when perf's layout does not tell it)."""
    blocks: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    lines = [(number, ungroup(line)) for number, line in enumerate(text.splitlines(), start=1)]
    decimal = marks_of(lines).decimal(path)
    for number, line in lines:
        header = HEADER.match(line)
        if header:
            current = _new_block(header, number)
            blocks.append(current)
            continue
        if current is None:
            continue
        elapsed = ELAPSED.match(line)
        if elapsed:
            se = to_number(elapsed.group("se"), decimal) if elapsed.group("se") else None
            current["elapsed"].append((elapsed.group("what"), to_number(elapsed.group("value"), decimal), se, number))
            continue
        try:
            counter = parse_counter_line(line, decimal)
        except ValueError as err:
            raise InputError(f"perf stat text: {err}", path=path, line=number) from None
        if counter is not None:
            current["counters"].append((*counter, number))
        elif UNREAD.match(line):
            shown = line.strip() if len(line.strip()) <= 60 else line.strip()[:57] + "..."
            raise InputError(
                f"perf stat text: a counter line in a layout abstat cannot read: {shown!r}", path=path, line=number
            )
    return blocks


def _new_block(header: re.Match[str], number: int) -> dict[str, Any]:
    """The block a ``Performance counter stats for ...`` line at line ``number`` starts."""
    runs = int(header.group("runs")) if header.group("runs") else 1
    return {"what": header.group("what").strip(), "runs": runs, "counters": [], "elapsed": [], "line": number}


def is_text(text: str) -> bool:
    return any(HEADER.match(line) for line in text.splitlines()[:200])


def read_text(path: str, text: str) -> list[SampleSet]:
    blocks = [b for b in read_text_blocks(text, path) if b["counters"] or b["elapsed"]]
    if not blocks:
        raise InputError("perf stat text: no counter lines after 'Performance counter stats for'", path=path)
    got = Collect(path)
    for block in blocks:
        _add_block(got, block)
    if len(blocks) == 1 and blocks[0]["runs"] > 1:
        _summaries(got, blocks[0])
    elif any(b["runs"] > 1 for b in blocks):
        for event in got.values:
            got.note(event, f"{path}: {event}: each value is the mean of a perf stat -r block's runs")
    return got.sets("text")


def _add_block(got: Collect, block: dict[str, Any]) -> None:
    """A block's counters (those not counted listed as missing) and its elapsed times, as ``seconds-...``."""
    for event, value, unit, _pct, running, _line in block["counters"]:
        if value is None:
            got.missing.append(event)
        else:
            got.add(event, value, unit, running)
    for what, value, _se, _line in block["elapsed"]:
        if value is not None:
            got.add(f"seconds-{what.replace(' ', '-')}", value, "s")


def _summaries(got: Collect, block: dict[str, Any]) -> None:
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


_OPEN_EVENT = re.compile(r"[A-Za-z_][\w.\-]*/[^/]*")  # a PMU event's name cut at a comma: cpu/event=0x3c


def _csv_fields(line: str) -> list[str]:
    """A ``-x,`` row's fields, a PMU event's terms joined again: perf prints the event as given, its commas
    too (``cpu/event=0x3c,umask=0x1/``), where the event can stand (after up to three prefix fields)."""
    fields = line.split(",")
    for start in range(2, min(6, len(fields))):
        if _OPEN_EVENT.fullmatch(fields[start].strip()):
            end = next((i for i in range(start + 1, len(fields)) if "/" in fields[i]), None)
            if end is not None:
                return fields[:start] + [",".join(fields[start : end + 1])] + fields[end + 1 :]
    return fields


def _csv_lines(text: str) -> list[tuple[int, list[str]]]:
    return [
        (n, _csv_fields(line))
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def is_csv(text: str) -> bool:
    """Every line a perf stat ``-x,`` row (comments aside), and one at least."""
    lines = _csv_lines(text)
    shapes = [_csv_row(fields) for _, fields in lines[:200]]
    return bool(shapes) and all(s is not None for s in shapes)


def read_csv(path: str, text: str) -> list[SampleSet]:
    got = Collect(path)
    intervals = False
    for number, fields in _csv_lines(text):
        offset, variance = _checked_row(path, number, fields)
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
        got.note_intervals()
    return got.sets("csv")


def _checked_row(path: str, number: int, fields: list[str]) -> tuple[int, bool]:
    """:func:`_csv_row`'s shape of a row whose prefix perf prints; an InputError naming the line otherwise."""
    shape = _csv_row(fields)
    if shape is None:
        raise InputError("not a perf stat -x, row (value,unit,event,...)", path=path, line=number)
    offset = shape[0]
    if offset and not _prefix_explained(fields[:offset]):
        raise InputError(
            f"{','.join(fields[: offset + 1])!r}: a decimal comma? (perf stat -x, in a locale such as de_DE; "
            "its -I time stamp is %lu.%09lu): run perf with LC_ALL=C; or a perf layout abstat does not know",
            path=path,
            line=number,
        )
    return shape


_COUNTED_AGGR = re.compile(COUNTED_AGGR)  # aggregations perf follows by a count


def _prefix_explained(prefix: list[str]) -> bool:
    """Whether each number in front of the value is one perf prints there: the ``-I`` time stamp first, or
    the count after a socket, die, core, cache or node (``S0,4,``); ``CPU0,0,41,msec`` is a decimal comma."""
    for index, raw in enumerate(prefix):
        field = raw.strip()
        if _number(field) is None or (index == 0 and _STAMP.fullmatch(field)):
            continue
        if index == 0 or not _COUNTED_AGGR.fullmatch(prefix[index - 1].strip()):
            return False
    return True


def _csv_name(prefix_fields: list[str], event: str) -> tuple[str, bool]:
    """A CSV row's name: the event, with the aggregation fields in front of the value (``-A``, ``--per-core``)
    after a dot; and whether the first of them is an interval's time stamp (``-I``), which is left out."""
    prefix = [f.strip() for f in prefix_fields]
    interval = bool(prefix) and _number(prefix[0]) is not None
    if interval:
        prefix = prefix[1:]
    return (f"{event}.{'.'.join(prefix)}" if prefix else event), interval


def detect(text: str) -> str | None:
    """``perf-stat``, ``perf-stat-csv`` or ``perf-stat-json`` when ``text`` is perf stat output."""
    if is_text(text):
        return "perf-stat"
    stripped = text.lstrip()
    if stripped.startswith("{") and is_json(text):
        return "perf-stat-json"
    if "," in text and stripped[:1] not in "{[" and is_csv(text):  # a JSON document is never -x, CSV
        return "perf-stat-csv"
    return None


def read(path: str, fmt: str, text: str) -> list[SampleSet]:
    reader = {"perf-stat": read_text, "perf-stat-csv": read_csv, "perf-stat-json": read_json}[fmt]
    return reader(path, text)
