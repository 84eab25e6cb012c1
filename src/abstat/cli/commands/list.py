"""``abstat list``: the experiments in the result store."""

from __future__ import annotations

import argparse
import json
import sys

from abstat.cli.args import ArgumentParser, add_format, add_store


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat list",
        description="List the experiments in the result store.",
        examples=("abstat list --store team.db",),
    )
    add_store(parser)
    add_format(parser, ("text", "json"), default="text")
    # for the shells' completion (abstat completion): the names, one a line; nothing, status 0, without a store
    parser.add_argument("--names", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.store import open_store, resolve_store_path

    path = resolve_store_path(args.store)
    if args.names:
        return _names(path)
    with open_store(path, create=False) as store:
        summaries = store.experiments()
        _tell_journals(store)
    if args.format == "json":
        sys.stdout.write(json.dumps([vars(s) for s in summaries], indent=2) + "\n")
        return 0
    from abstat.render.escape import terminal

    if not summaries:
        sys.stdout.write(f"{terminal(store.display)}: no experiments\n")
        return 0
    header = ("EXPERIMENT", "VARIANTS", "RUNS", "FAILED", "INVOCATIONS", "BOOTS", "HOSTS", "LAST RUN")
    rows = [
        tuple(
            terminal(cell)
            for cell in (
                s.name,
                ",".join(s.variants),
                str(s.runs_ok),
                str(s.runs_failed),
                str(s.invocations),
                str(s.boots),
                ",".join(s.hosts),
                s.last_run_at or "-",
            )
        )
        for s in summaries
    ]
    from abstat.render.terminal import columns, ljust

    widths = [max(columns(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        sys.stdout.write("  ".join(ljust(cell, width) for cell, width in zip(row, widths)).rstrip() + "\n")
    return 0


def _names(path: str) -> int:
    """The experiments' names, one a line, for completion: quiet and status 0 whatever goes wrong (a
    completion never prints an error into the command line being typed)."""
    from abstat.errors import AbstatError
    from abstat.store import open_store

    try:
        with open_store(path, create=False) as store:
            names = store.experiment_names()
    except (AbstatError, OSError):
        return 0
    # a name holding a control character (a newline, an escape sequence) is left out: printed it would
    # break the one-a-line list or speak to the terminal, and no completion of it could be typed back
    sys.stdout.write("".join(name + "\n" for name in names if name.isprintable()))
    return 0


def _tell_journals(store: object) -> None:
    """A run journal left when abstat and its supervisor were both killed: named, with its import command."""
    from abstat.render.escape import terminal
    from abstat.store.journal import left_behind_notes

    sys.stderr.writelines(terminal(line) + "\n" for line in left_behind_notes(store))
