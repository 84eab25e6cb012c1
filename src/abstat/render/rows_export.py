"""Writers of ``abstat export --format csv|json``: one row per stored sample,
and, apart from them, one row per invocation with its machine record.

A sample row carries its run (run, iteration, invocation, boot, host, start,
command, labels, notes) and its variant's place among its experiment's
(``variant_order``, 1 the first declared: report's order and baseline, which
the rows, in the order the runs ran, do not tell); the machine record (~4 KB, 90 flattened fields)
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

COLUMNS = (
    "experiment",
    "variant",
    "metric",
    "value",
    "unit",
    "run",
    "iteration",
    "index",
    "invocation",
    "boot_id",
    "host",
    "started_at",
    "command",
    "labels",
    "notes",
    "variant_order",  # the variant's place in its experiment as declared: report --store's order, 1 the baseline
)
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


def _field(value: Any) -> str:
    """One CSV field, escaped (:func:`_cell`) and quoted as ``csv.writer`` quotes (minimal)."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return repr(value)  # as csv.writer writes numbers
    text = csv_cell(value)
    text = text if isinstance(text, str) else str(text)
    if '"' in text or "," in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def write_csv(values: Iterable[tuple[dict[str, Any], str, float, Any, int]], out: TextIO) -> int:
    """Stream the samples (``Store.sample_values``: ``(run, metric, value, unit, index)``) as CSV
    with the columns ``COLUMNS``, one pass, flat memory; returns the row count.

    A run's fields are escaped and quoted once, and each row is the run's text with its
    metric, value, unit and index put in (``csv.writer`` per row cost ten times more)."""
    found: dict[Any, str] = {}  # the fields of values that repeat (metric, unit, variant, command, notes...)

    def field(value: Any) -> str:
        text = found.get(value)
        if text is None:
            if len(found) >= 10_000:  # flat memory
                found.clear()
            text = found[value] = _field(value)
        return text

    get = found.get
    out.write(",".join(COLUMNS) + "\n")
    current: Any = None
    head = middle = tail = ""
    lines: list[str] = []
    count = 0
    for run, metric, value, unit, index in values:
        if run is not current:  # the run's fields, once per run
            current = run
            head = f"{field(run['experiment'])},{field(run['variant'])},"
            middle = f",{_field(run['run'])},{_field(run['iteration'])},"
            tail = (
                ",".join(
                    [
                        "",
                        _field(run["invocation"]),
                        field(run["boot_id"]),
                        field(run["host"]),
                        _field(run["started_at"]),
                        field(run["command"]),
                        field(" ".join(f"{k}={v}" for k, v in run["labels"].items())),
                        field("; ".join(run["notes"] or [])),
                        _field(run["variant_order"]),
                    ]
                )
                + "\n"
            )
        lines.append(f"{head}{get(metric) or field(metric)},{value!r},{get(unit) or field(unit)}{middle}{index}{tail}")
        count += 1
        if len(lines) >= 256:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))
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
