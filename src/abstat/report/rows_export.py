"""Writers of ``abstat export --format csv|json``: one row per stored sample,
and, apart from them, one row per invocation with its machine record.

A sample row carries its run (run, iteration, invocation, boot, host, start,
command, labels, notes); the machine record (~4 KB, 90 flattened fields)
goes out once per invocation (``--machines FILE``), never with every sample:
written per sample it made a 145 MB CSV of 10^4 runs.  Both join on
``invocation``.  Every cell is escaped for a spreadsheet
(:func:`abstat.render.escape.csv_cell`); cells that repeat (a run's, a
metric's) are escaped once.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from abstat.render.escape import csv_cell

COLUMNS = ("experiment", "variant", "metric", "value", "unit", "run", "iteration", "index", "invocation",
           "boot_id", "host", "started_at", "command", "labels", "notes")
MACHINE_COLUMNS = ("experiment", "invocation", "host", "boot_id", "started_at")


def flatten(record: Any, prefix: str = "machine") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"machine.a.b": 1}`` (lists joined by spaces)."""
    flat: dict[str, Any] = {}
    if isinstance(record, dict):
        for key, value in record.items():
            flat.update(flatten(value, f"{prefix}.{key}"))
    elif isinstance(record, list):
        flat[prefix] = " ".join(str(v) for v in record)
    else:
        flat[prefix] = record
    return flat


def _cell(value: Any) -> Any:
    return "" if value is None else csv_cell(value)


def write_csv(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    """Stream the sample rows (``Store.sample_rows``) as CSV, one pass, flat memory; the row count."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    escaped: dict[Any, Any] = {}  # metric and unit cells, escaped once
    metric_at, value_at, unit_at, index_at = (COLUMNS.index(c) for c in ("metric", "value", "unit", "index"))
    current: Any = None
    template: list[Any] = []
    count = 0
    for row in rows:
        key = (row["run"], row["invocation"])
        if key != current:  # the run's cells, escaped once per run
            current = key
            template = [_cell(row[column]) for column in COLUMNS[:3]] + [""] * 2 + [
                _cell(row[column]) for column in COLUMNS[5:13]]
            template.append(_cell(" ".join(f"{k}={v}" for k, v in row["labels"].items())))
            template.append(_cell("; ".join(row.get("notes") or [])))
        cells = template.copy()
        metric, unit = row["metric"], row["unit"]
        cells[metric_at] = escaped[metric] if metric in escaped else escaped.setdefault(metric, _cell(metric))
        cells[unit_at] = escaped[unit] if unit in escaped else escaped.setdefault(unit, _cell(unit))
        cells[value_at] = repr(row["value"])
        cells[index_at] = row["index"]
        writer.writerow(cells)
        count += 1
    return count


def write_json(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    out.write("[")
    for row in rows:
        out.write(("\n  " if count == 0 else ",\n  ") + json.dumps(row, sort_keys=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def write_machines_csv(rows: Callable[[], Iterable[dict[str, Any]]], out: TextIO) -> int:
    """One row per invocation (``Store.machine_rows``): its columns, then the flattened
    machine record (``machine.cpu_model``...) in order of first appearance.  ``rows`` is
    called twice (the header needs every field first)."""
    fields: dict[str, None] = {}
    for row in rows():
        fields.update(dict.fromkeys(flatten(row["machine"])))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*MACHINE_COLUMNS, *fields])
    count = 0
    for row in rows():
        flat = flatten(row["machine"])
        writer.writerow([*(_cell(row[c]) for c in MACHINE_COLUMNS), *(_cell(flat.get(f)) for f in fields)])
        count += 1
    return count


def write_machines_json(rows: Callable[[], Iterable[dict[str, Any]]], out: TextIO) -> int:
    """One object per invocation: its columns and ``machine``, the record as stored."""
    return write_json(rows(), out)
