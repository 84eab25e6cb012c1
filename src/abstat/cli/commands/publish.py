"""``abstat publish DIR``: a static site from the result store (abstat.render.site)."""

from __future__ import annotations

import argparse
import os
import sys

from abstat.cli.args import ArgumentParser, add_store
from abstat.errors import UsageError

EXAMPLES = (
    "abstat publish --store team.db site/      # then open site/index.html, or serve site/ with any web server",
    "abstat publish --store postgresql://bench@db/abstat /var/www/bench --plots significant",
)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat publish",
        examples=EXAMPLES,
        description="Write a static, self-contained site from the result store: an index of experiments and "
        "history series (filterable), one page per experiment (its report and machines), one per "
        "history series (change points drawn) and a regressions page. Incremental: only the pages "
        "of experiments whose runs changed are rewritten.",
    )
    parser.add_argument("directory", metavar="DIR", help="where the site goes (created if missing)")
    add_store(parser)
    parser.add_argument(
        "--plots",
        choices=("auto", "all", "significant", "none"),
        default="auto",
        help="which compared cells of an experiment's page get a figure (default auto: all up to "
        "200 comparisons, else the significant ones)",
    )
    parser.add_argument("--full", action="store_true", help="rewrite every page, not only the changed ones")
    parser.add_argument(
        "--repo",
        default=".",
        metavar="DIR",
        help="git repository giving the history series' commit order, as abstat history --repo "
        "(default: the current directory; elsewhere: commit time, then first seen)",
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if os.path.exists(args.directory) and not os.path.isdir(args.directory):
        raise UsageError(f"{args.directory}: not a directory")
    from abstat.render.escape import terminal
    from abstat.render.site import publish
    from abstat.store import resolve_store_path

    try:
        done = publish(resolve_store_path(args.store), args.directory, plots=args.plots, full=args.full, repo=args.repo)
    except OSError as err:
        raise UsageError(f"{args.directory}: cannot write the site ({err.strerror or err})") from None
    pages = len(done.written)
    kept = f", {len(done.unchanged)} experiment(s) unchanged" if done.unchanged else ""
    removed = f", {len(done.removed)} stale page(s) removed" if done.removed else ""
    sys.stdout.write(
        terminal(f"wrote {pages} page(s){kept}{removed}: {os.path.join(args.directory, 'index.html')}") + "\n"
    )
    for warning in done.warnings:
        sys.stderr.write(terminal(f"warning: {warning}") + "\n")
    return 0
