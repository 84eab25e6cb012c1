"""``abstat export``: every stored sample, one row each, as CSV or JSON, and with
``--machines FILE`` the machine record of each invocation, once; or the stored
runs as hyperfine's JSON (``--format hyperfine``, the exporter of ``abstat
report --format hyperfine``).  The writers are :mod:`abstat.render.rows_export`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from abstat.cli.args import ArgumentParser, add_format, add_output, add_store
from abstat.errors import InputError, UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat export",
        examples=("abstat export --experiment ipi -o ipi.csv --machines machines.csv",),
        description="Export stored samples: one row per sample with its run (csv, json), and "
        "the machine records once per invocation (--machines FILE); or the runs as "
        "hyperfine --export-json writes them.",
    )
    add_format(
        parser,
        ("csv", "json", "hyperfine"),
        default="csv",
        help="output format; hyperfine: one result per variant and configuration, wall times",
    )
    parser.add_argument("--experiment", metavar="NAME", help="only this experiment (default: every one)")
    parser.add_argument(
        "--machines",
        metavar="FILE",
        help="also write each invocation's machine record, one row per invocation, to FILE "
        "(in the --format; rows join the samples on 'invocation')",
    )
    add_store(parser)
    add_output(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.store import open_store, resolve_store_path

    if args.machines is not None and args.format == "hyperfine":
        raise UsageError("--machines: hyperfine's JSON has no machine records; use --format csv or json")
    path = resolve_store_path(args.store)
    if args.output and args.machines and os.path.realpath(args.output) == os.path.realpath(args.machines):
        raise UsageError("-o and --machines name the same file; the machine records would replace the samples")
    for output in (args.output, args.machines):
        if output:
            from abstat.cli.outfile import check_output

            check_output(output, [path])  # before the work: never onto the store
    with open_store(path, create=False) as store:
        if args.experiment is not None and not store.has_experiment(args.experiment):
            raise InputError(f"no experiment {args.experiment!r}", path=store.display)
        if args.format == "hyperfine":
            return _export_hyperfine(path, args.experiment, args.output)
        from abstat.render import rows_export

        unreadable: list[str] = []

        def write_readable(handle: TextIO) -> list[str]:
            if args.format == "csv":
                written = rows_export.write_csv(_readable(store.sample_values(args.experiment), unreadable), handle)
            else:
                written = rows_export.write_json(_readable(store.sample_rows(args.experiment), unreadable), handle)
            damage = unreadable + store.check_damage()
            if damage and not written:  # nothing readable: an older -o FILE stays as it was
                raise InputError(f"damaged store, no sample is readable: {'; '.join(damage[:3])}", path=store.display)
            return damage

        found: list[list[str]] = []
        _write(args.output, lambda handle: found.append(write_readable(handle)))
        if args.machines is not None:
            machines = rows_export.write_machines_csv if args.format == "csv" else rows_export.write_machines_json
            _write(args.machines, lambda handle: machines(lambda: store.machine_rows(args.experiment), handle))
        damage = list(dict.fromkeys(found[0] + store.check_damage()))
    if damage:  # what was readable is exported; the exit status says it is not everything
        raise InputError(
            f"damaged store, exported only the readable samples: {'; '.join(damage[:3])}", path=store.display
        )
    return 0


def _write(output: str | None, write: Any) -> None:
    if output:
        from abstat.cli.outfile import write_output

        write_output(output, write, newline="")
    else:
        write(sys.stdout)


def _export_hyperfine(path: str, experiment: str | None, output: str | None) -> int:
    from abstat.report import api

    where = None if experiment is None else {"experiment": {experiment}}
    text = api.render_sets(api.load([], store=path, where=where, exit_codes=True), "hyperfine")
    _write(output, lambda handle: handle.write(text))
    return 0


def _readable(rows: Iterator[Any], unreadable: list[str]) -> Iterator[Any]:
    """``rows`` up to the first damaged page; what stopped them goes to ``unreadable`` (once)."""
    try:
        yield from rows
    except InputError as err:
        if err.message not in unreadable:
            unreadable.append(err.message)
