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

from abstat.cli.args.report_parser import build_parser
from abstat.cli.commands.judging import judge_as_stored, without_saved_baselines
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import UsageError


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
    if args.output:
        from abstat.cli.outfile import check_output

        check_output(args.output, [*args.inputs, args.store])  # before the work: never onto an input
    from abstat.render import terminal
    from abstat.report import api

    sets = api.load(
        args.inputs,
        pattern=args.pattern,
        labels=args.label,
        store=args.store,
        where=args.where,
        input_format=args.input_format,
        column=args.column,
        delimiters=args.delimiters,
        csv_values=_split(args.csv_value) or None,
        csv_labels=_split(args.csv_labels) or None,
        exit_codes=args.format == "hyperfine",
        machines=False,  # the report's own read below (add_machines): not every set's record
    )
    if not args.inputs:
        sets = without_saved_baselines(args, sets)
    judge_as_stored(args, sets)
    to_terminal = args.output is None and sys.stdout.isatty()
    fmt = _format(args.format, to_terminal)
    report = None
    if fmt == "hyperfine":
        if args.fail_on:
            raise UsageError("--fail-on judges comparisons; --format hyperfine exports samples")
        text = api.render_sets(sets, fmt, where=args.where, metrics=_split(args.metric) or None)
    elif fmt == "github" and args.output is None:
        from abstat.cli.commands.compare_extra import github_output
        from abstat.render.ci_formats import render_report

        options = _report_options(args)
        _add_machines(args, sets, options)
        report = api.build(sets, **options)
        text = github_output(render_report(report, "github", split=True), args.store)
    else:
        report, text = _rendered(args, sets, fmt, to_terminal)
    if args.output:
        from abstat.cli.outfile import write_output

        write_output(args.output, lambda handle: handle.write(text))
    else:
        terminal.write(sys.stdout, text)
    from abstat.cli.commands.compare_extra import gate_status

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
        by=args.by,
        baseline=args.baseline,
        rows=_split(args.rows) or None,
        metrics=_split(args.metric) or None,
        where=args.where,
        adjust=args.adjust,
        confidence=args.confidence / 100,
        center=args.center,
        higher_is_better=args.higher_is_better,
        lower_is_better=args.lower_is_better,
        seed=args.seed,
        threshold=args.threshold,
        outliers=args.outliers,
    )


def _add_machines(args: argparse.Namespace, sets: Any, options: dict[str, Any]) -> None:
    """The stored sets the report chooses given the machine records it shows."""
    if not args.inputs:
        from abstat.report import api

        api.add_machines(sets, args.store, where=options["where"], metrics=options["metrics"])


def _rendered(args: argparse.Namespace, sets: Any, fmt: str, to_terminal: bool) -> tuple[Any, str]:
    """The report of ``sets`` and its text in ``fmt`` (a grid's analysis and monitors' changes under it)."""
    from abstat.render import monitors, terminal
    from abstat.report import api

    options = _report_options(args)
    sets, monitor_sets = monitors.split_sets(sets, options["metrics"])  # --monitor counters: below
    _add_machines(args, sets, options)
    report = api.build(sets, **options)
    width = args.width or (os.get_terminal_size().columns if to_terminal else 100)
    to_stdout = args.output is None
    if args.ministat and fmt != "email":
        raise UsageError("--ministat adds blocks to --format email")
    if args.columns_label:
        _pivot(report, args.columns_label, fmt)
    text = api.render(
        report,
        fmt,
        width=width,
        ministat=args.ministat,
        color=to_stdout and fmt == "table" and terminal.color_wanted(sys.stdout),
        ascii_only=to_stdout and not terminal.can_encode(sys.stdout, "\u2501\u00b5"),
        plots=args.plots,
    )
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
