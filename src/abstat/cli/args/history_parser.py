"""``abstat history``'s grammar: its parser (the command, :mod:`abstat.cli.commands.history`, parses with it)."""

from __future__ import annotations

import argparse

from abstat.cli.args import (
    ArgumentParser,
    add_confidence,
    add_format,
    add_metric_choice,
    add_output,
    add_store,
    add_where,
)
from abstat.history import changepoints as cp


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat history",
        examples=(
            "abstat history nightly --metric wall --format html -o nightly.html",
            "abstat history nightly --confirm --run ./bench --run-metric 'ns=ns: (\\d+)'",
        ),
        description="Order runs by revision (git's commit order), find change points per series "
        "(revision, size with interval, p-value) and say when an earlier one moved.",
        epilog="Record revisions with abstat run --rev (or --label rev=...). Exit status: 0, or with "
        "--exit-code 0 when no change point is new and 1 when one is new or moved (every one is new "
        "without a record of earlier ones); 2 on bad input or usage.",
    )
    parser.add_argument("experiment", nargs="?", help="stored experiment")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="FILE",
        help="also read history from a CSV (rev or commit column; Otava's time,commit,... too), "
        "asv results (a machine's directory or JSON file) or a peer tool's file; repeatable",
    )
    add_metric_choice(
        parser,
        repeatable=True,
        default_text="the metrics --metric defined in abstat run, else wall; in a CSV every numeric column",
    )
    parser.add_argument(
        "--label-column",
        action="append",
        default=[],
        metavar="NAME",
        help="CSV: this column labels the series (repeatable; default: the columns that are "
        "not numbers, other than the revision and its time)",
    )
    add_where(parser)
    parser.add_argument(
        "--rev-label",
        default="rev",
        metavar="NAME",
        help="label or column holding the revision (default rev; a CSV's commit column too)",
    )
    parser.add_argument(
        "--repo",
        default=".",
        metavar="DIR",
        help="git repository giving the commit order (default: the current directory)",
    )
    parser.add_argument(
        "--min-magnitude",
        type=float,
        default=0.0,
        metavar="PERCENT",
        help="ignore changes smaller than this percentage of the level (default 0)",
    )
    parser.add_argument(
        "--min-change",
        type=float,
        default=cp.DEFAULT_MIN_CHANGE * 100,
        metavar="PCT",
        help=f"below PCT%% of the level: small, not alerted (default {100 * cp.DEFAULT_MIN_CHANGE:g})",
    )
    parser.add_argument(
        "--max-pvalue",
        type=float,
        default=cp.DEFAULT_MAX_PVALUE,
        help=f"p-value threshold of a change's t test (default {cp.DEFAULT_MAX_PVALUE:g})",
    )
    parser.add_argument(
        "--min-segment",
        type=int,
        default=cp.DEFAULT_MIN_SEGMENT,
        metavar="N",
        help=f"fewest revisions each side of a change (default {cp.DEFAULT_MIN_SEGMENT}; fewer: spike)",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=cp.DEFAULT_WINDOW,
        metavar="N",
        help=f"revisions on each side used to test a change (default {cp.DEFAULT_WINDOW}; its size uses at most 30)",
    )
    parser.add_argument(
        "--penalty",
        type=float,
        default=cp.DEFAULT_PENALTY,
        metavar="F",
        help=f"candidates: splits whose least-squares gain exceeds F log n (default "
        f"{cp.DEFAULT_PENALTY:g}); lower proposes more small steps to the t test",
    )
    parser.add_argument(
        "--no-drift-check",
        dest="drift",
        action="store_false",
        help="report steps even where a straight line explains them as well (a slow drift)",
    )
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 1 when a change point is new or moved, 0 when none is (like git diff --exit-code)",
    )
    add_confidence(parser)
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="record of reported change points (default STORE.changepoints.json for a stored experiment; "
        "input read only from files has none unless this is given)",
    )
    parser.add_argument("--no-state", action="store_true", help="neither read nor update the record")
    add_format(parser, ("text", "markdown", "json", "html", "email"), default="text")
    add_output(parser)
    add_store(parser)
    loop = parser.add_argument_group("confirm and bisect a change point now (on this machine)")
    loop.add_argument(
        "--confirm",
        action="store_true",
        help="re-measure the revisions around each new, moved or provisional change point, "
        "interleaved, and say whether it holds (with --exit-code: 1 only when one holds)",
    )
    loop.add_argument("--bisect", action="store_true", help="then bisect each change that holds between them")
    loop.add_argument("--run", metavar="CMD", help="the benchmark (shell), run in each revision's worktree")
    loop.add_argument("--build", metavar="CMD", help="build command (shell), run in each worktree first")
    loop.add_argument(
        "--run-metric",
        metavar="NAME=REGEX",
        help="the number --run prints (as abstat bisect --metric; default: the series' metric "
        "when it is a built-in one, wall...)",
    )
    loop.add_argument("--confirm-runs", type=int, default=20, metavar="N", help="runs of each side (default 20)")
    loop.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="per build and run")
    loop.add_argument(
        "--yes",
        action="store_true",
        help="build and run the revisions the data names (without it they are listed and nothing runs)",
    )
    return parser
