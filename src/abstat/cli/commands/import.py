"""``abstat import OTHER...``: merge other stores into this one.

OTHER is a SQLite file or a ``postgresql://`` URL; so is ``--store``.  This
merges the stores of machines that ran ``abstat run`` alone, moves a store
between back ends (SQLite -> PostgreSQL to share, PostgreSQL -> SQLite to
take a copy offline), and brings home a spool file written while the server
was away, or a run journal of a killed ``abstat run`` (abstat.store.journal).
Runs keep their identities: importing twice adds nothing.

A store from elsewhere is data someone else wrote (a fork's CI artifact):
``--experiment NAME`` takes only the experiments named, and then refuses one
the target already holds unless ``--merge``; saved baselines
(``baseline@NAME``) are never taken unless named or ``--baselines`` is given,
so an artifact cannot bring the baseline it is compared with (docs/ci.md).  A run journal
adds to the invocation its header names: never a saved baseline's, and with ``--experiment``
only one of the experiments named (with ``--merge``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from abstat.cli.args import ArgumentParser, add_store
from abstat.errors import InputError, UsageError


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="abstat import",
        examples=("abstat import --store team.db laptop.db postgresql://bench@db/abstat",),
        description="Copy the runs of other stores (files or postgresql:// URLs) into this store, keeping their "
        "labels, run groups and machine records. Idempotent: runs already present are skipped.",
    )
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="OTHER",
        help="store to import: a file or a postgresql:// URL (or the run journal of a killed abstat run)",
    )
    parser.add_argument(
        "--experiment",
        action="append",
        metavar="NAME",
        help="import only this experiment (repeatable); one the target already holds is refused "
        "unless --merge.  Give it for a store someone else wrote (docs/ci.md)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --experiment: add to an experiment of that name the target already holds",
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="also import the saved baselines (baseline@NAME) of the stores; without it they "
        "are left out unless named with --experiment",
    )
    add_store(parser)  # the store imported into (created if missing)
    return parser


def _chosen(args: Any, source_name: str, target_names: set[str]) -> list[str]:
    """The experiments of store ``source_name`` to import (checked before anything is imported)."""
    from abstat.store import open_store
    from abstat.store.baselines import PREFIX

    with open_store(source_name, create=False, read_only=True) as source:
        names = source.experiment_names()
    if args.experiment is None:
        return [name for name in names if args.baselines or not name.startswith(PREFIX)]
    missing = [name for name in args.experiment if name not in names]
    if missing:
        raise InputError(f"--experiment {missing[0]!r}: no such experiment in this store", path=source_name)
    present = [name for name in args.experiment if name in target_names]
    if present and not args.merge:
        raise UsageError(
            f"--experiment {present[0]!r}: the target store already holds an experiment of that name; "
            "import into a fresh store, or give --merge to add to it"
        )
    return list(dict.fromkeys(args.experiment))


def _import_store(target: Any, source_name: str, chosen: list[str]) -> str | None:
    """Import the ``chosen`` experiments of one store and say so; what was damaged, if anything."""
    from abstat.render.escape import terminal
    from abstat.store import display_name, open_store

    with open_store(source_name, create=False, read_only=True) as source:
        left = [name for name in source.experiment_names() if name not in chosen]
        result = target.import_from(source, chosen)
    shown = terminal(display_name(source_name))
    if left:
        names = ", ".join(terminal(name) for name in left[:5]) + (", ..." if len(left) > 5 else "")
        sys.stdout.write(
            f"{shown}: not imported: {names} (not named with --experiment, or a saved baseline: --baselines)\n"
        )
    sys.stdout.write(
        f"{shown}: {result.invocations_added} invocation(s) and {result.runs_added} run(s)"
        f" added, {result.runs_present} run(s) already present"
        + (f", {result.invocations_updated} invocation(s) completed" if result.invocations_updated else "")
        + f" (into {terminal(target.display)})\n"
    )
    return f"{display_name(source_name)}: {'; '.join(result.damage[:3])}" if result.damage else None


def _check_sources(args: argparse.Namespace) -> None:
    """Every source a store URL or a regular file (a FIFO is never waited on); --merge with --experiment."""
    for source_name in args.sources:
        if "://" not in source_name and not os.path.exists(source_name):
            raise InputError("no such store to import", path=source_name)
        if "://" not in source_name and not os.path.isfile(source_name):
            raise InputError("not a regular file, so not a store or a run journal", path=source_name)
    if args.merge and args.experiment is None:
        raise UsageError("--merge goes with --experiment NAME: the experiments to add to")


def _check_journal(args: Any, target: Any, source_name: str) -> None:
    """A run journal adds runs to an invocation of the target, the one its header names (attack23 #5): never to
    a saved baseline's frozen copy, and with ``--experiment`` only to one of the experiments named, with
    ``--merge`` (the experiment is always one the target holds).  Checked before anything is imported."""
    from abstat.store import journal
    from abstat.store.baselines import PREFIX

    name = journal.experiment_of(source_name, target)
    if name.startswith(PREFIX):
        raise InputError(
            f"a run journal of the saved baseline {name!r}: a saved baseline is a frozen copy, never added to",
            path=source_name,
        )
    if args.experiment is not None and name not in args.experiment:
        raise InputError(
            f"a run journal of experiment {name!r}, not named with --experiment: not imported", path=source_name
        )
    if args.experiment is not None and not args.merge:
        raise UsageError(
            f"{source_name}: a run journal adds to experiment {name!r}, which the target already holds: "
            "give --merge to add to it"
        )


def _replay_journal(target: Any, source_name: str) -> str | None:
    """Add the runs of a run journal abstat had not committed; what was left out as damaged, if anything."""
    from abstat.render.escape import terminal
    from abstat.store import journal

    added, present, broken = journal.replay(source_name, target)
    sys.stdout.write(
        f"{terminal(source_name)}: {added} run(s) added from a run journal, {present} "
        f"already present (into {terminal(target.display)})\n"
    )
    if not broken:
        return None
    # the runs around them are in; the journal is kept (the supervisor keeps it)
    return f"{source_name}: damaged line(s) {', '.join(map(str, broken[:5]))} of the journal left out"


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.store import journal, open_store, resolve_store_path

    target_name = resolve_store_path(args.store)
    _check_sources(args)  # before the target is created or touched
    damaged = []
    with open_store(target_name) as target:
        existing = set(target.experiment_names())
        for name in args.sources:
            if "://" not in name and journal.is_journal(name):
                _check_journal(args, target, name)
        chosen = {
            name: _chosen(args, name, existing)
            for name in args.sources
            if "://" in name or not journal.is_journal(name)
        }
        for source_name in args.sources:
            if "://" not in source_name and journal.is_journal(source_name):  # runs abstat had not committed
                damage = _replay_journal(target, source_name)
            else:
                damage = _import_store(target, source_name, chosen[source_name])
            if damage:
                damaged.append(damage)
    sys.stdout.flush()
    if damaged:
        raise InputError("damaged rows were left behind: " + " | ".join(damaged))
    return 0
