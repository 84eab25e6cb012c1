"""``abstat compare [options] INPUTS...``: compare variants honestly.

The first input is the baseline; every other one is compared with it.
Inputs are described in :mod:`abstat.readers.specs`; statistics in
``docs/statistics.md``.
"""
from __future__ import annotations

import argparse
import os
import sys

from abstat.commands import ArgumentParser
from abstat.errors import UsageError

DESCRIPTION = """\
Compare each candidate with the baseline (the first input): the relative
change of the centre (median by default) with a confidence interval, a
p-value and a verdict. Inputs: FILE, NAME=FILE, 'NAME=runs/*.txt' (each file
one independent run), NAME=n:mean:stddev (summary statistics),
EXPERIMENT:VARIANT (stored by abstat run), - (standard input)."""


def _percent(text: str) -> float:
    value = text.strip().rstrip("%")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite percentage: {text!r}")
    return number


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="abstat compare", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="baseline first, then the candidates")
    p.add_argument("-c", "--confidence", type=_percent, default=95.0, metavar="PCT",
                   help="confidence level in percent (default 95)")
    p.add_argument("--center", choices=("median", "mean"), default="median",
                   help="centre to compare (default median: the ratio of medians; mean: the ratio of means)")
    p.add_argument("--threshold", type=_percent, default=None, metavar="PCT",
                   help="practical threshold in percent: 'equivalent' when the interval lies inside +-PCT")
    p.add_argument("--higher-is-better", action="store_true", help="for throughputs (default: lower is better)")
    p.add_argument("--outliers", choices=("none", "tukey", "mad"), default="none",
                   help="drop outliers by this rule (default none; they are always counted)")
    p.add_argument("--seed", type=int, default=0, help="seed for any resampling (default 0)")
    p.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text table (auto: on a terminal, unless NO_COLOR is set)")
    p.add_argument("-C", "--column", type=int, default=1, metavar="N", help="column of the sample files (1-based)")
    p.add_argument("-d", "--delimiters", default=None, metavar="CHARS",
                   help="column delimiters (default: white space or commas)")
    p.add_argument("--store", default=None, metavar="PATH", help="result store for EXPERIMENT:VARIANT (./abstat.db)")
    p.add_argument("--metric", default="wall", help="metric of stored variants (default wall)")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE[,VALUE]",
                    help="stored variants: keep the runs whose labels match (repeatable)")
    p.add_argument("--baseline", default=None, metavar="NAME", help="compare against this variant instead of the first")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if len(args.inputs) < 2:
        raise UsageError("need at least two inputs: a baseline and a candidate")
    if not 50.0 <= args.confidence < 100.0:
        raise UsageError(f"--confidence must be at least 50 and below 100, not {args.confidence:g}")
    if args.threshold is not None and args.threshold < 0:
        raise UsageError("--threshold must not be negative")
    if args.column < 1:
        raise UsageError("--column must be 1 or more")

    from abstat.comparison import compare_many
    from abstat.readers.specs import parse_variant_specs
    from abstat.render.compare_text import render
    from abstat.report.inputs import parse_where_args

    variants = parse_variant_specs(
        args.inputs, column=args.column, delimiters=args.delimiters, store=args.store, metric=args.metric,
        where=parse_where_args(args.where),
    )
    comparisons = compare_many(
        variants,
        baseline=args.baseline,
        confidence=args.confidence / 100.0,
        center=args.center,
        threshold=args.threshold,
        higher_is_better=args.higher_is_better,
        seed=args.seed,
        outliers=args.outliers,
    )
    if args.color == "always":
        color = True
    elif args.color == "never":
        color = False
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    sys.stdout.write(render(comparisons, fmt=args.format, color=color))
    return 0
