"""``abstat run``'s grammar: its parser (the command, :mod:`abstat.cli.commands.run`, parses with it)."""

from __future__ import annotations

import argparse

from abstat.cli.args import (
    ArgumentParser,
    add_baseline,
    add_confidence,
    add_format,
    add_higher_is_better,
    add_label,
    add_no_progress,
    add_runs,
    add_store,
    add_verbose,
    add_warmup,
)
from abstat.cli.args.experiment_args import add_run_options
from abstat.cli.args.lab_args import add_lab_options
from abstat.errors import UsageError


REPORT_FORMATS = ("text", "markdown", "json", "csv")
OUTPUT_OPTIONS = ("store", "format", "verbose", "no_progress")  # what --resume and --spec leave to the user


def build_parser(prog: str = "abstat run") -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Run benchmark variants (interleaved), store every run, and compare them.",
        examples=(
            "abstat run -n 30 --warmup 3 -v before='./bench-old' -v after='./bench-new'",
            "abstat run -n 20 -- ./bench --quick      # one variant, named after the program",
        ),
    )
    parser.add_argument(
        "-v",
        "--variant",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a variant to measure (repeat for each variant)",
    )
    parser.add_argument(
        "command",
        nargs="*",
        metavar="-- COMMAND",
        help="one command to measure instead of -v: one variant, named after its program",
    )
    add_runs(parser, default=10)
    add_warmup(parser, default=0)
    add_run_options(parser)
    parser.add_argument(
        "--experiment",
        metavar="NAME",
        help="add to this experiment (created if new; default: a new one per invocation)",
    )
    add_store(parser)
    add_label(parser, help="label these runs (e.g. host=milan mode=pv64); repeatable")
    parser.add_argument(
        "--rev",
        action="store_true",
        help="label the runs with the git revision of the current directory (rev, commit_time)",
    )
    add_baseline(parser)
    add_higher_is_better(parser)
    add_confidence(parser)
    add_format(parser, REPORT_FORMATS, default="text", help="format of the final comparison")
    add_no_progress(parser)
    add_verbose(parser, "text: each metric's tables before the summary lines")
    add_lab_options(parser)
    spec = parser.add_argument_group("the experiment as data (docs/architecture.md)")
    spec.add_argument(
        "--spec",
        metavar="FILE",
        help="run the experiment specification in FILE (JSON, - for standard input) instead of one given by options",
    )
    spec.add_argument(
        "--print-spec", action="store_true", help="print the specification the options describe (JSON) and run nothing"
    )
    return parser


def alone(args: argparse.Namespace, option: str, what: str, allowed: tuple[str, ...]) -> None:
    """Refuse the options that ``--OPTION`` (which brings ``what``) leaves no say to."""
    defaults = vars(build_parser().parse_args([]))
    extra = [
        name for name, value in vars(args).items() if name not in (*allowed, option) and value != defaults.get(name)
    ]
    if extra:
        names = [f"--{name.replace('_', '-')}" for name in allowed]
        got = "a command after --" if extra[0] == "command" else f"--{extra[0].replace('_', '-')}"
        raise UsageError(
            f"--{option} takes {what}; besides it only {', '.join(names[:-1])} and {names[-1]} (got {got})"
        )
