"""History read from files: CSV (abstat's own and Otava's ``time,commit,metric...``), asv
results, and peers' files whose labels or metadata carry a revision.

A CSV row is one sample of each metric column at its revision.  The revision is the
``--rev-label`` column (default ``rev``), else Otava's ``commit``; its time is a
``commit_time`` or Otava's ``time`` column, in Unix seconds or as a date (ISO 8601, or
Otava's ``2024.01.01 3:00:00 +0100``).  Without a revision column each row's time is its
revision.  Metric columns are the ``--metric`` ones, else every column of numbers; the
series' labels are the ``--label-column`` ones, else the columns that are not numbers.
Other numeric columns are left out, never turned into labels.  An empty cell is a
missing sample (counted in a note), never a refused file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.history.revision import TIME_LABEL
from abstat.report.sampleset import SampleSet

REV_COLUMNS = ("commit",)  # Otava's name, after --rev-label
PYPERF_REV_KEYS = ("commit_id", "revision", "commit", "rev")  # pyperformance writes commit_id
PYPERF_TIME_KEYS = ("commit_date", "date")

_DATE = re.compile(
    r"^(\d{4})[-./](\d{1,2})[-./](\d{1,2})(?:[T ]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?$",
    re.IGNORECASE,
)


def parse_time(text: str) -> float | None:
    """Unix seconds from a number or a date (a date without a zone is UTC); None if neither."""
    text = text.strip()
    try:
        value = float(text)
        return value if math.isfinite(value) else None
    except ValueError:
        pass
    match = _DATE.match(text)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    offset = timedelta(0)
    if zone and zone.upper() not in ("Z", "UTC", "GMT"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    try:
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=timezone(offset),
        )
    except ValueError:
        return None
    return moment.timestamp()


def _number(cell: str) -> float | None:
    """The cell's value when it is a finite number, else None."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _is_number(cell: str) -> bool:
    return _number(cell) is not None


def _delimiter(header_line: str) -> str:
    counts = {d: header_line.count(d) for d in (",", ";", "\t")}
    return max(counts, key=counts.__getitem__) if max(counts.values()) else ","


def _csv_rows(path: str, text: str) -> tuple[list[str], list[list[str]]]:
    """The CSV's header and body rows (cells stripped; comments and blank lines left out), checked:
    names unique and not empty, at least one row, every row as wide as the header."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InputError("empty CSV file", path=path)
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=_delimiter(lines[0]))
    try:
        rows = [[cell.strip() for cell in row] for row in reader]
    except csv.Error as err:
        raise InputError(f"bad CSV: {err}", path=path, line=reader.line_num) from None
    del lines, reader  # the text again, twice over: free before the sets are made
    header, body = rows[0], rows[1:]
    del rows
    if len(set(header)) != len(header) or any(not h for h in header):
        raise InputError("CSV header has empty or repeated column names", path=path, line=1)
    if not body:
        raise InputError("CSV file has a header but no rows", path=path)
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InputError(f"{len(row)} fields, header has {len(header)}", path=path, line=number)
    return header, body


UNIX_FLOOR = 315532800.0  # 1980-01-01 UTC: a 'time' of numbers below it holds measurements (seconds), not dates


def time_column(
    header: Sequence[str],
    metrics: Sequence[str] | None,
    smallest: Callable[[str], float | None],
    varies: Callable[[str], bool],
) -> str | None:
    """The commit time's column: abstat's ``commit_time``, else Otava's ``time`` unless it is measured (attack22
    A12: ``rev,bench,time``): named by ``metrics``, numbers of which one is no Unix time after 1980
    (``smallest(name)``: the column's smallest number; None when a cell is no number, or none is filled), or
    numbers that differ within one revision (attack23 #3: nanoseconds; ``varies(name)``), as a commit has one
    time."""
    if TIME_LABEL in header:
        return TIME_LABEL
    if "time" not in header or "time" in (metrics or ()):
        return None
    least = smallest("time")
    if least is None:
        return "time"
    return "time" if least >= UNIX_FLOOR and not varies("time") else None


def _smallest(body: list[list[str]], index: int) -> float | None:
    numbers = [_number(row[index]) for row in body if row[index]]
    return None if not numbers or None in numbers else min(n for n in numbers if n is not None)


def _varies(body: list[list[str]], index: int, rev_index: int | None) -> bool:
    """Whether the column's numbers differ within one revision (empty cells left out; no revision column: no)."""
    if rev_index is None:
        return False
    seen: dict[str, float | None] = {}
    for row in body:
        if row[index] and seen.setdefault(row[rev_index], _number(row[index])) != _number(row[index]):
            return True
    return False


def _position_columns(
    path: str, header: list[str], body: list[list[str]], rev_label: str, metrics: Sequence[str] | None
) -> tuple[str | None, str | None]:
    """The revision's column and the time's (either may be None, not both)."""
    rev_column = next((c for c in (rev_label, *REV_COLUMNS) if c in header), None)
    rev_index = header.index(rev_column) if rev_column is not None else None
    when = time_column(
        header,
        metrics,
        lambda name: _smallest(body, header.index(name)),
        lambda name: _varies(body, header.index(name), rev_index),
    )
    if rev_column is None and when is None:
        measured = "'time' holds measurements, not dates or Unix times: " if "time" in header else ""
        raise InputError(
            f"{measured}no {rev_label!r}, 'commit' or 'time' column to order the rows by "
            "({rev_label} names the revision's column)",
            path=path,
            fields=["rev_label"],
        )
    return rev_column, when


def _numeric_columns(header: list[str], body: list[list[str]], position: set[str | None]) -> set[str]:
    """The columns (not the revision's or time's) whose cells are all numbers or empty, not all empty."""
    return {
        h
        for i, h in enumerate(header)
        if h not in position and all(_is_number(r[i]) or r[i] == "" for r in body) and any(r[i] for r in body)
    }


def _no_numbers(header: list[str], body: list[list[str]], position: set[str | None]) -> str:
    """Why no column is followed: none holds numbers, or one holds only numbers none of which is finite."""
    for i, h in enumerate(header):
        if h not in position and any(r[i] for r in body) and all(r[i] == "" or _is_float(r[i]) for r in body):
            return (
                f"CSV column {h!r} has no finite values (only nan, inf or numbers beyond double precision): "
                "no column of numbers to follow ({metrics} names one)"
            )
    return "CSV file has no column of numbers to follow ({metrics} names one)"


def _is_float(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _label_columns(
    header: list[str], numeric: set[str], position: set[str | None], label_columns: Sequence[str] | None
) -> list[str]:
    """The series' label columns: ``label_columns``, else those neither numbers nor the revision's or time's."""
    if label_columns is not None:
        return list(label_columns)
    return [h for h in header if h not in numeric and h not in position]


_Columns = tuple[str | None, str | None, list[str], list[str]]


def _csv_columns(
    path: str,
    header: list[str],
    body: list[list[str]],
    metrics: Sequence[str] | None,
    label_columns: Sequence[str] | None,
    rev_label: str,
) -> _Columns:
    """(the revision's column, the time's, the metric columns, the label columns); no metric
    columns when ``metrics`` names none of this file's (another file may hold them)."""
    rev_column, time_column = _position_columns(path, header, body, rev_label, metrics)
    position = {rev_column, time_column} - {None}
    numeric = _numeric_columns(header, body, position)
    for name in label_columns or []:
        if name not in header:
            raise UsageError(f"{path}: no CSV column {name!r} (columns: {', '.join(header)})")
    if metrics:  # another file may hold them
        chosen = [m for m in metrics if m in header]
        if not chosen:
            return rev_column, time_column, [], []
    else:
        chosen = [h for h in header if h in numeric and h not in (label_columns or ())]
    labels = _label_columns(header, numeric, position, label_columns)
    if not chosen:
        raise InputError(_no_numbers(header, body, position), path=path, fields=["metrics"])
    return rev_column, time_column, chosen, labels


def _row_time(path: str, row: list[str], index: dict[str, int], time_column: str | None, number: int) -> float | None:
    """The row's time (None without a time column or cell); a cell that is no time is an error."""
    if time_column is None or not row[index[time_column]]:
        return None
    when = parse_time(row[index[time_column]])
    if when is None:
        raise InputError(
            f"column {time_column!r}: not a time (Unix seconds or a date): {row[index[time_column]][:40]!r}",
            path=path,
            line=number,
        )
    return when


def _add_row(
    path: str,
    sets: dict[tuple, _CsvSet],
    base: dict[str, str],
    row: list[str],
    index: dict[str, int],
    chosen: list[str],
    number: int,
) -> int:
    """The row's metric cells added to their sets; the number of empty cells."""
    missing = 0
    for metric in chosen:
        cell = row[index[metric]]
        if cell == "":
            missing += 1
            continue
        value = _number(cell)
        if value is None:
            raise InputError(f"column {metric!r}: not a finite number: {cell[:40]!r}", path=path, line=number)
        key = (*base.values(), metric)  # the labels' keys are the same on every row
        found = sets.get(key)
        if found is None:
            found = sets[key] = _CsvSet({**base, "metric": metric}, [[]], path)
        found.runs[0].append(value)
    return missing


def read_history_csv(
    path: str, text: str, *, metrics: Sequence[str] | None, label_columns: Sequence[str] | None, rev_label: str
) -> tuple[list[Any], list[str]]:
    """The CSV's samples as sets (``labels``, ``runs``, ``unit``, ``source``) labelled with their
    revision (and time); with notes."""
    header, body = _csv_rows(path, text)
    rev_column, time_column, chosen, labels = _csv_columns(path, header, body, metrics, label_columns, rev_label)
    if not chosen:
        return [], []
    index = {h: i for i, h in enumerate(header)}
    sets: dict[tuple, _CsvSet] = {}
    missing = 0
    body.reverse()  # each row let go of once read (a row is 10x its value in memory)
    number = 1
    while body:
        row = body.pop()
        number += 1
        when = _row_time(path, row, index, time_column, number)
        rev = row[index[rev_column]] if rev_column is not None else row[index[time_column]]  # type: ignore[index]
        if not rev:
            missing += len(chosen)
            continue
        base = {h: row[index[h]] for h in labels}
        base[rev_label] = rev
        if when is not None:
            base[TIME_LABEL] = repr(when)
        missing += _add_row(path, sets, base, row, index, chosen, number)
    notes = [f"{path}: {missing} empty cell(s) left out"] if missing else []
    return list(sets.values()), notes


class _CsvSet:
    """A CSV's samples of one metric at one revision: what a history reads of a
    :class:`SampleSet` (``labels``, ``runs``, ``unit``, ``source``) and no more, as a CSV of
    10^6 revisions makes 10^6 of them."""

    __slots__ = ("labels", "runs", "source", "unit")

    def __init__(self, labels: dict[str, str], runs: list[list[float]], source: str) -> None:
        self.labels, self.runs, self.source, self.unit = labels, runs, source, None


def revision_from_metadata(sample_set: SampleSet, rev_label: str) -> SampleSet:
    """A pyperf set's revision from its metadata (pyperformance's ``commit_id``), a hyperfine
    set's from a ``commit`` parameter; the command line, which names the revision, is then no
    label of the series."""
    labels = dict(sample_set.labels)
    metadata: Mapping[str, Any] = sample_set.extra.get("pyperf_metadata") or {}
    if rev_label not in labels:
        for key in (rev_label, *PYPERF_REV_KEYS):
            if metadata.get(key) not in (None, ""):
                labels[rev_label] = str(metadata[key])
                break
        else:
            if "commit" in (sample_set.extra.get("parameters") or {}):
                labels[rev_label] = labels.pop("commit")
    if rev_label in labels and TIME_LABEL not in labels:
        for key in PYPERF_TIME_KEYS:
            when = parse_time(str(metadata.get(key, "")))
            if when is not None:
                labels[TIME_LABEL] = repr(when)
                break
    if rev_label in labels and "parameters" in sample_set.extra:
        labels.pop("command", None)  # hyperfine's command differs per revision: not the series' name
    sample_set.labels = labels
    return sample_set
