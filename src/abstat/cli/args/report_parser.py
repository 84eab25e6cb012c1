"""``abstat report``'s grammar: its parser (the command, :mod:`abstat.cli.commands.report`, parses with it)."""

from __future__ import annotations

import argparse

from abstat.cli.args import (
    STORED_THRESHOLD,
    ArgumentParser,
    add_baseline,
    add_center,
    add_columns,
    add_confidence,
    add_fail_on,
    add_format,
    add_higher_is_better,
    add_label,
    add_metric_choice,
    add_output,
    add_seed,
    add_store,
    add_threshold,
    add_where,
)


def build_parser() -> argparse.ArgumentParser:
    from abstat.report.adjust import METHODS
    from abstat.report.api import RENDER_FORMATS
    from abstat.report.inputs import input_formats

    parser = ArgumentParser(
        prog="abstat report",
        examples=("abstat report --store ipi.db --by host --metric wall,user,sys --format markdown",),
        description="Compare every configuration against a baseline in one table "
        "(terminal, Markdown, e-mail, JSON, CSV, HTML).",
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="sample files, hyperfine/pyperf/Go/CSV files or summary statistics "
        "NAME=n:mean:stddev (none: the runs in --store)",
    )
    parser.add_argument(
        "--by",
        default=None,
        metavar="LABEL",
        help="label whose values are the columns (default: variant; command for the commands of one hyperfine export)",
    )
    add_baseline(
        parser,
        help="the column compared against (default: before, base, baseline, old, ... "
        "when present, else the first value seen)",
    )
    parser.add_argument(
        "--rows",
        metavar="LABEL[,LABEL]",
        help="comma-separated labels that make the rows (default: every label that varies; "
        "with several metrics, metric is added last)",
    )
    add_metric_choice(parser, repeatable=True)
    add_where(parser, help="keep only the sample sets whose labels match; KEY=V1,V2 keeps either value (repeatable)")
    parser.add_argument(
        "--pattern", metavar="PATTERN", help="labels from file names, e.g. '{host}-hcall-{mode}-{variant}'"
    )
    add_label(parser, help="add this label to every input (repeatable)")
    add_store(parser)
    add_format(
        parser,
        (*RENDER_FORMATS, "hyperfine"),
        help="output format (html needs -o or a pipe; hyperfine: the samples as hyperfine JSON)",
        default_text="table on a terminal, text otherwise",
    )
    add_output(parser)
    parser.add_argument(
        "--input-format",
        default="auto",
        choices=input_formats(),
        help="format of the INPUT files (default auto: recognised by content)",
    )
    parser.add_argument("--csv-value", metavar="COLUMN[,COLUMN]", help="CSV: comma-separated value (metric) columns")
    parser.add_argument(
        "--csv-labels", metavar="COLUMN[,COLUMN]", help="CSV: comma-separated label columns (with the columns of text)"
    )
    add_columns(parser)
    parser.add_argument(
        "--columns",
        metavar="LABEL",
        dest="columns_label",
        help="text and email: this row label's values across the top (--columns metric: variants "
        "as rows, metrics as columns)",
    )
    parser.add_argument(
        "--ministat",
        action="store_true",
        help="--format email: add a ministat -A block per compared cell, on the table's samples",
    )
    add_confidence(parser, stored=True)
    add_center(parser)
    parser.add_argument(
        "--adjust", choices=METHODS, default="holm", help="multiple-comparison control over the table (default holm)"
    )
    add_higher_is_better(parser)
    add_threshold(parser, default=STORED_THRESHOLD)
    add_fail_on(parser)
    add_seed(parser)
    parser.add_argument(
        "--plots",
        choices=("auto", "all", "significant", "none"),
        default="auto",
        help="html: which compared cells get a figure (default auto: all up to 200 "
        "comparisons, else the significant ones, at most 200)",
    )
    parser.add_argument(
        "--width", type=int, default=None, metavar="COLUMNS", help="terminal table width (default: the terminal's)"
    )
    return parser
