"""``abstat report``: a table across machines and configurations.

    abstat report --by variant [--baseline before] [--rows host,mode]
                  [--metric M] [--where k=v] [--pattern P] [--label k=v]
                  [--store PATH] [--format FMT] [-o FILE] [INPUTS...]

INPUTS are sample files (one number per line, as for ministat), hyperfine
or pyperf JSON, Go benchmark text or CSV, or summary statistics
``NAME=n:mean:stddev`` (variant NAME, or the labels ``--pattern`` reads
from NAME); with no INPUTS the report reads the store written by
``abstat run``.

Exit status: 0; 1 when ``--fail-on`` finds a cell whose change is proven
beyond ``--threshold`` (after ``--adjust``, Holm by default); 2 on bad input.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from abstat.cli.commands import (ArgumentParser, add_baseline, add_center, add_columns, add_confidence, add_fail_on,
                             add_format, add_higher_is_better, add_label, add_metric_choice, add_output,
                             add_seed, add_store, add_threshold, add_where)
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    from abstat.report.adjust import METHODS
    from abstat.report.api import RENDER_FORMATS
    from abstat.report.inputs import INPUT_FORMATS

    parser = ArgumentParser(
        prog="abstat report", examples=("abstat report --store ipi.db --by host --metric wall,user,sys --format markdown",),
        description="Compare every configuration against a baseline in one table "
                    "(terminal, Markdown, e-mail, JSON, CSV, HTML).",
    )
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="sample files, hyperfine/pyperf/Go/CSV files or summary statistics "
                             "NAME=n:mean:stddev (none: the runs in --store)")
    parser.add_argument("--by", default=None, metavar="LABEL",
                        help="label whose values are the columns (default: variant; command for the "
                             "commands of one hyperfine export)")
    add_baseline(parser, help="the column compared against (default: before, base, baseline, old, ... "
                              "when present, else the first value seen)")
    parser.add_argument("--rows", metavar="LABEL[,LABEL]",
                        help="comma-separated labels that make the rows (default: every label that varies; "
                             "with several metrics, metric is added last)")
    add_metric_choice(parser, repeatable=True)
    add_where(parser, help="keep only the sample sets whose labels match; KEY=V1,V2 keeps either value "
                           "(repeatable)")
    parser.add_argument("--pattern", metavar="PATTERN",
                        help="labels from file names, e.g. '{host}-hcall-{mode}-{variant}'")
    add_label(parser, help="add this label to every input (repeatable)")
    add_store(parser)
    add_format(parser, (*RENDER_FORMATS, "hyperfine"),
               help="output format (html needs -o or a pipe; hyperfine: the samples as hyperfine JSON)",
               default_text="table on a terminal, text otherwise")
    add_output(parser)
    parser.add_argument("--input-format", default="auto", choices=INPUT_FORMATS,
                        help="format of the INPUT files (default auto: recognised by content)")
    parser.add_argument("--csv-value", metavar="COLUMN[,COLUMN]", help="CSV: comma-separated value (metric) columns")
    parser.add_argument("--csv-labels", metavar="COLUMN[,COLUMN]", help="CSV: comma-separated label columns")
    add_columns(parser)
    parser.add_argument("--columns", metavar="LABEL", dest="columns_label",
                        help="text and email: this row label's values across the top (--columns metric: variants "
                             "as rows, metrics as columns)")
    parser.add_argument("--ministat", action="store_true",
                        help="--format email: add a ministat -A block per compared cell, on the table's samples")
    add_confidence(parser)
    add_center(parser)
    parser.add_argument("--adjust", choices=METHODS, default="holm",
                        help="multiple-comparison control over the table (default holm)")
    add_higher_is_better(parser)
    add_threshold(parser)
    add_fail_on(parser)
    add_seed(parser)
    parser.add_argument("--plots", choices=("auto", "all", "significant", "none"), default="auto",
                        help="html: which compared cells get a figure (default auto: all up to 200 "
                             "comparisons, else the significant ones, at most 200)")
    parser.add_argument("--width", type=int, default=None, metavar="COLUMNS",
                        help="terminal table width (default: the terminal's)")
    return parser


def _split(values: list[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    if args.width is not None and args.width < 40:
        raise UsageError(f"--width {args.width}: a table needs at least 40 columns")
    from abstat.render import terminal
    from abstat.report import api

    sets = api.load(
        args.inputs, pattern=args.pattern, labels=args.label, store=args.store,
        where=args.where, input_format=args.input_format, column=args.column,
        delimiters=args.delimiters, csv_values=_split(args.csv_value) or None,
        csv_labels=_split(args.csv_labels) or None, exit_codes=args.format == "hyperfine",
    )
    to_terminal = args.output is None and sys.stdout.isatty()
    fmt = _format(args.format, to_terminal)
    report = None
    if fmt == "hyperfine":
        if args.fail_on:
            raise UsageError("--fail-on judges comparisons; --format hyperfine exports samples")
        text = api.render_sets(sets, fmt, where=args.where, metrics=_split(args.metric) or None)
    elif fmt == "github" and args.output is None:
        from abstat.cli.commands.compare import github_output
        from abstat.render.ci_formats import render_report

        report = api.build(sets, **_report_options(args))
        text = github_output(render_report(report, "github", split=True))
    else:
        report, text = _rendered(args, sets, fmt, to_terminal)
    if args.output:
        from abstat.cli.outfile import write_output

        write_output(args.output, lambda handle: handle.write(text))
    else:
        terminal.write(sys.stdout, text)
    from abstat.cli.commands.compare import gate_status

    return gate_status(args, report=report) if report is not None else 0


def _format(fmt: str | None, to_terminal: bool) -> str:
    """The format asked for: by default a table on a terminal, else text."""
    if fmt is None:
        fmt = "table" if to_terminal else "text"
    if fmt == "html" and to_terminal:
        raise UsageError("--format html writes a whole page; name a file with -o FILE")
    return fmt


def _report_options(args: argparse.Namespace) -> dict[str, Any]:
    """What :func:`abstat.report.api.build` is given."""
    return dict(
        by=args.by, baseline=args.baseline, rows=_split(args.rows) or None,
        metrics=_split(args.metric) or None, where=args.where, adjust=args.adjust,
        confidence=args.confidence / 100, center=args.center,
        higher_is_better=args.higher_is_better, seed=args.seed,
        threshold=args.threshold, outliers=args.outliers,
    )


def _rendered(args: argparse.Namespace, sets: Any, fmt: str, to_terminal: bool) -> tuple[Any, str]:
    """The report of ``sets`` and its text in ``fmt`` (a grid's analysis and monitors' changes under it)."""
    from abstat.render import monitors, terminal
    from abstat.report import api

    options = _report_options(args)
    sets, monitor_sets = monitors.split_sets(sets, options["metrics"])  # --monitor counters: below
    report = api.build(sets, **options)
    width = args.width or (os.get_terminal_size().columns if to_terminal else 100)
    to_stdout = args.output is None
    if args.ministat and fmt != "email":
        raise UsageError("--ministat adds blocks to --format email")
    if args.columns_label:
        _pivot(report, args.columns_label, fmt)
    text = api.render(report, fmt, width=width, ministat=args.ministat,
                      color=to_stdout and fmt == "table" and terminal.color_wanted(sys.stdout),
                      ascii_only=to_stdout and not terminal.can_encode(sys.stdout, "\u2501\u00b5"),
                      plots=args.plots)
    if not args.inputs:  # a parameter scan's grid in the rows: its analysis under the table
        from abstat.render.grid import with_grid

        text = with_grid(text, report, args.store, fmt)
    if monitor_sets:
        text = monitors.with_other_changes(text, monitors.from_sets(monitor_sets, report.by, report.baseline), fmt)
    return report, text


def _pivot(report: Any, label: str, fmt: str) -> None:
    """``--columns LABEL``: the text and e-mail layouts with ``label``'s values across the top."""
    from abstat.render.pivot import check_columns

    if fmt not in ("text", "email"):
        raise UsageError(f"--columns is a layout of --format text and email, not {fmt}")
    check_columns(report, label)
    report.columns_label = label
