"""``abstat export``: every stored sample, one row each, as CSV or JSON."""
from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from abstat.commands import ArgumentParser
from abstat.errors import InputError

COLUMNS = ("experiment", "variant", "metric", "value", "unit", "run", "iteration", "index", "invocation",
           "boot_id", "host", "started_at", "command", "labels")


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


def write_csv(rows: Iterator[dict[str, Any]], out: TextIO) -> int:
    materialised = list(rows)
    machine_columns: list[str] = []
    flat_rows = []
    for row in materialised:
        flat = flatten(row["machine"])
        for key in flat:
            if key not in machine_columns:
                machine_columns.append(key)
        flat_rows.append(flat)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *machine_columns])
    for row, flat in zip(materialised, flat_rows):
        cells = [row[c] for c in COLUMNS]
        cells[COLUMNS.index("labels")] = " ".join(f"{k}={v}" for k, v in row["labels"].items())
        cells[COLUMNS.index("value")] = repr(row["value"])
        writer.writerow([*("" if c is None else c for c in cells),
                         *("" if flat.get(k) is None else flat.get(k) for k in machine_columns)])
    return len(materialised)


def write_json(rows: Iterator[dict[str, Any]], out: TextIO) -> int:
    count = 0
    out.write("[")
    for row in rows:
        out.write(("\n  " if count == 0 else ",\n  ") + json.dumps(row, sort_keys=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def main(argv: list[str]) -> int:
    parser = ArgumentParser(prog="abstat export",
                     description="Export stored samples: one row per sample with its run and machine record.")
    parser.add_argument("--format", choices=("csv", "json"), default="csv")
    parser.add_argument("--experiment", metavar="NAME", help="only this experiment")
    parser.add_argument("--store", metavar="PATH", default=None, help="result store (default ./abstat.db)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    args = parser.parse_args(argv)
    from abstat.store import open_store, resolve_store_path

    path = resolve_store_path(args.store)
    with open_store(path, create=False) as store:
        if args.experiment is not None and not store.has_experiment(args.experiment):
            raise InputError(f"no experiment {args.experiment!r}", path=store.display)
        unreadable: list[str] = []
        rows = _readable(store.sample_rows(args.experiment), unreadable)
        writer = write_csv if args.format == "csv" else write_json

        def write_readable(handle: TextIO) -> list[str]:
            written = writer(rows, handle)
            damage = unreadable + store.check_damage()
            if damage and not written:  # nothing readable: an older -o FILE stays as it was
                raise InputError(f"damaged store, no sample is readable: {'; '.join(damage[:3])}", path=store.display)
            return damage

        if args.output:
            damage = _write_replacing(args.output, write_readable)
        else:
            damage = write_readable(sys.stdout)
    if damage:  # what was readable is exported; the exit status says it is not everything
        raise InputError(f"damaged store, exported only the readable samples: {'; '.join(damage[:3])}",
                         path=store.display)
    return 0


def _readable(rows: Iterator[dict[str, Any]], unreadable: list[str]) -> Iterator[dict[str, Any]]:
    """``rows`` up to the first damaged page; what stopped them goes to ``unreadable``."""
    try:
        yield from rows
    except InputError as err:
        unreadable.append(err.message)


def _write_replacing(output: str, write: Any) -> Any:
    """Write through a temporary file renamed over ``output`` at the end: an
    export that fails half-way (a damaged store) leaves an older file whole."""
    import tempfile

    directory = os.path.dirname(os.path.abspath(output))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".abstat-export-", dir=directory)
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", path=output) from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            result = write(handle)
        os.replace(temporary, output)
        return result
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", path=output) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
