"""``abstat report``: a table across machines and configurations.

    abstat report --by variant [--baseline before] [--rows host,mode]
                  [--metric M] [--where k=v] [--pattern P] [--label k=v]
                  [--store PATH] [--format FMT] [-o FILE] [INPUTS...]

INPUTS are sample files (one number per line, as for ministat), hyperfine
or pyperf JSON, Go benchmark text or CSV, or summary statistics
``NAME=n:mean:stddev`` (variant NAME, or the labels ``--pattern`` reads
from NAME); with no INPUTS the report reads the store written by
``abstat run``.
"""
from __future__ import annotations

import argparse
import os
import sys

from abstat.commands import ArgumentParser
from abstat.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    from abstat.report.adjust import METHODS
    from abstat.report.api import RENDER_FORMATS
    from abstat.report.inputs import INPUT_FORMATS

    parser = ArgumentParser(
        prog="abstat report",
        description="Compare every configuration against a baseline in one table "
                    "(terminal, Markdown, e-mail, JSON, CSV, HTML).",
    )
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="sample files, hyperfine/pyperf/Go/CSV files or summary statistics "
                             "NAME=n:mean:stddev (none: the store)")
    parser.add_argument("--by", default="variant", help="label whose values are the columns (default: variant)")
    parser.add_argument("--baseline", help="the column compared against (default: before, base, baseline, old, ... "
                             "when present, else the first value seen)")
    parser.add_argument("--rows", help="comma-separated labels that make the rows (default: every label that varies; "
                        "with several metrics, metric is added last)")
    parser.add_argument("--metric", action="append", default=[], help="only this metric (repeatable, or comma-separated)")
    parser.add_argument("--where", action="append", default=[], metavar="KEY=VALUE[,VALUE]",
                        help="keep only sample sets with this label value (repeatable)")
    parser.add_argument("--pattern", help="labels from file names, e.g. '{host}-hcall-{mode}-{variant}'")
    parser.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                        help="add this label to every input (repeatable)")
    parser.add_argument("--store", help="the store to read when no INPUT is given (default: ./abstat.db)")
    parser.add_argument("--format", default=None, choices=(*RENDER_FORMATS, "hyperfine"),
                        help="table (default on a terminal; plain text otherwise), text, markdown, "
                             "email, json, csv, html (needs -o or a pipe), hyperfine")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")
    parser.add_argument("--input-format", default="auto",
                        choices=INPUT_FORMATS)
    parser.add_argument("--csv-value", help="CSV: comma-separated value (metric) columns")
    parser.add_argument("--csv-labels", help="CSV: comma-separated label columns")
    parser.add_argument("-C", "--column", type=int, default=1, help="sample files: column to read (default 1)")
    parser.add_argument("-d", "--delimiters", help="sample files: field delimiters")
    parser.add_argument("-c", "--confidence", type=float, default=95.0, help="confidence level in percent (default 95)")
    parser.add_argument("--center", choices=("median", "mean"), default="median")
    parser.add_argument("--adjust", choices=METHODS, default="holm",
                        help="multiple-comparison control over the table (default holm)")
    parser.add_argument("--higher-is-better", action="store_true",
                        help="larger values are improvements (default: only units ending in /s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of resampling methods (default 0)")
    parser.add_argument("--width", type=int, default=None, help="terminal table width")
    return parser


def _split(values: list[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if not 0.0 < args.confidence < 100.0:  # also NaN
        raise UsageError(f"-c {args.confidence:g}: the confidence level is a percentage between 0 and 100")
    if args.width is not None and args.width < 40:
        raise UsageError(f"--width {args.width}: a table needs at least 40 columns")
    if args.column < 1:
        raise UsageError(f"-C {args.column}: columns count from 1")
    from abstat.render import terminal
    from abstat.report import api

    report_kwargs = dict(
        by=args.by, baseline=args.baseline, rows=_split(args.rows) or None,
        metrics=_split(args.metric) or None, where=args.where, adjust=args.adjust,
        confidence=args.confidence / 100, center=args.center,
        higher_is_better=args.higher_is_better, seed=args.seed,
    )
    sets = api.load(
        args.inputs, pattern=args.pattern, labels=args.label, store=args.store,
        where=args.where, input_format=args.input_format, column=args.column,
        delimiters=args.delimiters, csv_values=_split(args.csv_value) or None,
        csv_labels=_split(args.csv_labels) or None,
    )
    fmt = args.format
    to_terminal = args.output is None and sys.stdout.isatty()
    if fmt is None:
        fmt = "table" if to_terminal else "text"
    if fmt == "html" and to_terminal:
        raise UsageError("--format html writes a whole page; name a file with -o FILE")
    if fmt == "hyperfine":
        text = api.render_sets(sets, fmt, where=args.where, metrics=_split(args.metric) or None)
    else:
        report = api.build(sets, **report_kwargs)
        width = args.width or (os.get_terminal_size().columns if to_terminal else 100)
        to_stdout = args.output is None
        text = api.render(report, fmt, width=width,
                          color=to_stdout and fmt == "table" and terminal.color_wanted(sys.stdout),
                          ascii_only=to_stdout and not terminal.can_encode(sys.stdout, "\u2501\u00b5"))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as err:
            raise UsageError(f"-o {args.output}: {err.strerror or err}") from None
    else:
        terminal.write(sys.stdout, text)
    return 0
