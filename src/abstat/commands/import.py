"""``abstat import OTHER...``: merge other stores into this one.

OTHER is a SQLite file or a ``postgresql://`` URL; so is ``--store``.  This
merges the stores of machines that ran ``abstat run`` alone, moves a store
between back ends (SQLite -> PostgreSQL to share, PostgreSQL -> SQLite to
take a copy offline), and brings home a spool file written while the server
was away, or a run journal of a killed ``abstat run`` (abstat.store.journal).
Runs keep their identities: importing twice adds nothing.
"""
from __future__ import annotations

import os
import sys

from abstat.commands import ArgumentParser, add_store
from abstat.errors import InputError


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="abstat import", examples=("abstat import --store team.db laptop.db postgresql://bench@db/abstat",),
        description="Copy the runs of other stores (files or postgresql:// URLs) into this store, keeping their "
                    "labels, run groups and machine records. Idempotent: runs already present are skipped.",
    )
    parser.add_argument("sources", nargs="+", metavar="OTHER",
                        help="store to import: a file or a postgresql:// URL (or the run journal of a killed abstat run)")
    add_store(parser)  # the store imported into (created if missing)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.render.escape import terminal
    from abstat.store import display_name, journal, open_store, resolve_store_path

    target_name = resolve_store_path(args.store)
    for source_name in args.sources:  # before the target is created or touched
        if "://" not in source_name and not os.path.exists(source_name):
            raise InputError("no such store to import", path=source_name)
    damaged = []
    with open_store(target_name) as target:
        for source_name in args.sources:
            if "://" not in source_name and journal.is_journal(source_name):  # runs abstat had not committed
                added, present = journal.replay(source_name, target)
                sys.stdout.write(f"{terminal(source_name)}: {added} run(s) added from a run journal, {present} "
                                 f"already present (into {terminal(target.display)})\n")
                continue
            with open_store(source_name, create=False, read_only=True) as source:
                result = target.import_from(source)
            sys.stdout.write(
                f"{terminal(display_name(source_name))}: {result.invocations_added} invocation(s) and {result.runs_added} run(s)"
                f" added, {result.runs_present} run(s) already present"
                + (f", {result.invocations_updated} invocation(s) completed" if result.invocations_updated else "")
                + f" (into {terminal(target.display)})\n"
            )
            if result.damage:
                damaged.append(f"{display_name(source_name)}: {'; '.join(result.damage[:3])}")
    sys.stdout.flush()
    if damaged:
        raise InputError("damaged rows were left behind: " + " | ".join(damaged))
    return 0
