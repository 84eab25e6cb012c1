"""``abstat baseline save NAME EXPERIMENT`` / ``abstat baseline list``: saved baselines.

A saved baseline is a frozen copy of an experiment in the store
(:mod:`abstat.store.baselines`), compared with ``abstat compare baseline:NAME EXP:VARIANT``
(``baseline:NAME:VARIANT`` when it holds several variants).  Saving under a name again
replaces it.
"""

from __future__ import annotations

import argparse
import sys

from abstat.cli.args import ArgumentParser, add_store


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat baseline",
        examples=(
            "abstat baseline save v6.8 kernel-6.8-run      # then: abstat compare baseline:v6.8 new=new.txt",
            "abstat baseline list",
        ),
        description="Save an experiment as a named baseline "
        "(a frozen copy in the store) for abstat compare baseline:NAME ..., or list them.",
    )
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION", help="save or list")
    save = sub.add_parser("save", help="save EXPERIMENT (all its runs) as baseline NAME, replacing an older one")
    save.add_argument("name", metavar="NAME")
    save.add_argument("experiment", metavar="EXPERIMENT")
    add_store(save)
    listing = sub.add_parser("list", help="the saved baselines")
    add_store(listing)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from abstat.render.escape import terminal
    from abstat.store import resolve_store_path
    from abstat.store.baselines import list_baselines, save_baseline

    store = resolve_store_path(args.store)
    if args.action == "save":
        saved = save_baseline(store, args.name, args.experiment)
        sys.stdout.write(
            terminal(
                f"saved baseline {saved.name}: experiment {saved.experiment}, "
                f"{saved.invocations} invocation(s), {saved.runs} run(s), variants "
                f"{', '.join(saved.variants)}"
            )
            + "\n"
        )
        return 0
    for name, created, runs in list_baselines(store):
        sys.stdout.write(terminal(f"{name}  {created}  {runs} run(s)") + "\n")
    return 0
