"""``abstat export``: every stored sample, one row each, as CSV or JSON; or
the stored runs as hyperfine's JSON (``--format hyperfine``, the exporter of
``abstat report --format hyperfine``)."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from abstat.commands import ArgumentParser, add_format, add_output, add_store
from abstat.errors import InputError

COLUMNS = ("experiment", "variant", "metric", "value", "unit", "run", "iteration", "index", "invocation",
           "boot_id", "host", "started_at", "command", "labels", "notes")


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


def machine_columns(rows: Iterable[dict[str, Any]]) -> tuple[list[str], dict[int, dict[str, Any]]]:
    """The machine columns in order of first appearance, and each invocation's
    flattened record: one flatten per invocation, not per row."""
    columns: dict[str, None] = {}
    flat_by_invocation: dict[int, dict[str, Any]] = {}
    for row in rows:
        invocation = row["invocation"]
        if invocation not in flat_by_invocation:
            flat = flatten(row["machine"])
            flat_by_invocation[invocation] = flat
            columns.update(dict.fromkeys(flat))
    return list(columns), flat_by_invocation


def write_csv(rows: Callable[[], Iterable[dict[str, Any]]], out: TextIO) -> int:
    """Stream the rows as CSV; *rows* is called twice (the header needs every
    machine column first), so memory stays flat in the number of rows."""
    columns, flat_by_invocation = machine_columns(rows())
    machine_cells: dict[int, list[Any]] = {
        invocation: ["" if flat.get(key) is None else flat[key] for key in columns]
        for invocation, flat in flat_by_invocation.items()
    }
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *columns])
    labels_at, value_at, notes_at = COLUMNS.index("labels"), COLUMNS.index("value"), COLUMNS.index("notes")
    from abstat.render.tables import csv_row

    count = 0
    for row in rows():
        cells = [row[c] for c in COLUMNS]
        cells[labels_at] = " ".join(f"{k}={v}" for k, v in row["labels"].items())
        cells[value_at] = repr(row["value"])
        cells[notes_at] = "; ".join(row.get("notes") or [])
        invocation = row["invocation"]
        if invocation not in machine_cells:  # stored between the two passes
            flat = flatten(row["machine"])
            machine_cells[invocation] = ["" if flat.get(key) is None else flat[key] for key in columns]
        csv_row(writer, [*("" if c is None else c for c in cells), *machine_cells[invocation]])  # formulas neutralised
        count += 1
    return count


def write_json(rows: Callable[[], Iterable[dict[str, Any]]], out: TextIO) -> int:
    count = 0
    out.write("[")
    for row in rows():
        out.write(("\n  " if count == 0 else ",\n  ") + json.dumps(row, sort_keys=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="abstat export",
                            description="Export stored samples: one row per sample with its run and machine record "
                                        "(csv, json), or the runs as hyperfine --export-json writes them.")
    add_format(parser, ("csv", "json", "hyperfine"), default="csv",
               help="output format; hyperfine: one result per variant and configuration, wall times")
    parser.add_argument("--experiment", metavar="NAME", help="only this experiment (default: every one)")
    add_store(parser)
    add_output(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.store import open_store, resolve_store_path

    path = resolve_store_path(args.store)
    with open_store(path, create=False) as store:
        if args.experiment is not None and not store.has_experiment(args.experiment):
            raise InputError(f"no experiment {args.experiment!r}", path=store.display)
        if args.format == "hyperfine":
            return _export_hyperfine(path, args.experiment, args.output)
        unreadable: list[str] = []

        def rows() -> Iterable[dict[str, Any]]:  # called once per pass of the CSV writer
            return _readable(store.sample_rows(args.experiment), unreadable)

        writer = write_csv if args.format == "csv" else write_json

        def write_readable(handle: TextIO) -> list[str]:
            written = writer(rows, handle)
            damage = unreadable + store.check_damage()
            if damage and not written:  # nothing readable: an older -o FILE stays as it was
                raise InputError(f"damaged store, no sample is readable: {'; '.join(damage[:3])}", path=store.display)
            return damage

        if args.output:
            from abstat.outfile import write_output

            found: list[list[str]] = []
            write_output(args.output, lambda handle: found.append(write_readable(handle)), newline="")
            damage = found[0]
        else:
            damage = write_readable(sys.stdout)
    if damage:  # what was readable is exported; the exit status says it is not everything
        raise InputError(f"damaged store, exported only the readable samples: {'; '.join(damage[:3])}",
                         path=store.display)
    return 0


def _export_hyperfine(path: str, experiment: str | None, output: str | None) -> int:
    from abstat.report import api

    where = None if experiment is None else {"experiment": {experiment}}
    text = api.render_sets(api.load([], store=path, where=where, exit_codes=True), "hyperfine")
    if output:
        from abstat.outfile import write_output

        write_output(output, lambda handle: handle.write(text))
    else:
        sys.stdout.write(text)
    return 0


def _readable(rows: Iterator[dict[str, Any]], unreadable: list[str]) -> Iterator[dict[str, Any]]:
    """``rows`` up to the first damaged page; what stopped them goes to ``unreadable`` (once)."""
    try:
        yield from rows
    except InputError as err:
        if err.message not in unreadable:
            unreadable.append(err.message)
