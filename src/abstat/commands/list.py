"""``abstat list``: the experiments in the result store."""
from __future__ import annotations

import argparse
import json
import sys

from abstat.commands import ArgumentParser, add_format, add_store


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="abstat list", description="List the experiments in the result store.")
    add_store(parser)
    add_format(parser, ("text", "json"), default="text")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.store import open_store, resolve_store_path

    path = resolve_store_path(args.store)
    with open_store(path, create=False) as store:
        summaries = store.experiments()
    if args.format == "json":
        sys.stdout.write(json.dumps([vars(s) for s in summaries], indent=2) + "\n")
        return 0
    from abstat.render.escape import terminal

    if not summaries:
        sys.stdout.write(f"{terminal(store.display)}: no experiments\n")
        return 0
    header = ("EXPERIMENT", "VARIANTS", "RUNS", "FAILED", "INVOCATIONS", "BOOTS", "HOSTS", "LAST RUN")
    rows = [
        tuple(terminal(cell) for cell in (
            s.name, ",".join(s.variants), str(s.runs_ok), str(s.runs_failed), str(s.invocations), str(s.boots),
            ",".join(s.hosts), s.last_run_at or "-"))
        for s in summaries
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        sys.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    return 0
