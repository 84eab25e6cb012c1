"""``abstat noise``'s grammar: its parser (the command, :mod:`abstat.cli.commands.noise`, parses with it)."""

from __future__ import annotations

from abstat.cli.args import (
    ArgumentParser,
    add_confidence,
    add_format,
    add_no_progress,
    add_runs,
    add_seed,
    add_store,
    add_warmup,
)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="abstat noise",
        description="Run one command as two identical variants (A/A) and report this machine's noise: spread,"
        " detectable change, drift, between-run share, A/A false-call rate.",
        examples=("abstat noise -n 40 --metric 'ops=ops: ([0-9.]+)' -- ./bench --quick",),
        epilog="Exit status: 0; with --exit-code 1 when a metric is unstable (drift, a step, autocorrelation, or A/A blocks "
        "clearly apart); 2 on bad input; a run that fails: its status, as abstat run.",
    )
    parser.add_argument(
        "command",
        nargs="*",
        metavar="-- COMMAND",
        help="the benchmark, run as both variants (none: analyse --experiment's stored runs)",
    )
    add_runs(parser, default=40)
    add_warmup(parser, default=0)
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME=REGEX[:UNIT]",
        help="a number the benchmark prints (as abstat run); repeatable",
    )
    parser.add_argument(
        "--report",
        action="append",
        default=[],
        metavar="METRIC",
        help="report only this metric (repeatable; default every metric but context switches)",
    )
    parser.add_argument(
        "--experiment",
        metavar="NAME",
        help="store under this name (default noise-DATE-TIME); without a command: analyse it",
    )
    add_store(parser)
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME|LABEL=DEST",
        help="run on this ssh destination, as abstat run --host (one host; without a command:"
        " analyse only this host's runs)",
    )
    add_seed(parser, default=None, help="seed of the run order (default: random, stored)")
    parser.add_argument("--shell", action="store_true", help="run the command through /bin/sh -c")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="kill a run after this long")
    parser.add_argument("--perf", action="store_true", help="count cycles and instructions with perf stat")
    add_confidence(parser)
    parser.add_argument(
        "--blocks",
        type=int,
        default=None,
        help="A/A blocks of consecutive runs (default: up to 6 blocks of at least 8 runs)",
    )
    add_format(parser, ("text", "markdown", "json"), default="text")
    add_no_progress(parser)
    parser.add_argument("--exit-code", action="store_true", help="exit 1 when a metric is unstable, 0 when none is")
    return parser
