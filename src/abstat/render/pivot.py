"""``report --columns LABEL``: the seeds' layouts, one label's values across the top.

The report compares along ``--by`` (variants); its rows are the other labels.
With ``--columns metric`` (seed 002), the table shows the variants as rows and
the metrics as columns; with ``--columns base`` (seed 003's 2 x 2 x 5), the
tests and the patch as rows, the two bases as columns.  Each compared
variant's change sits on the line under its centres, in the column of its
centre, so a cover letter keeps one narrow table:

    variant    elapsed             user                system
    Unpatched  66.55 s             232.8 s             108.7 s
    latched    63.91 s             232.8 s             109.0 s
               -4.0% [-6.2,-1.7]*  +0.0% [-0.6,+0.7]   +0.3% [-0.5,+1.1]

The cells, changes, marks and footnotes are the report's (the same numbers as
every other layout); only where they sit changes.
"""

from __future__ import annotations

from abstat.errors import UsageError
from abstat.render import escape, tables
from abstat.render.matrix import format_cell_value, mark, scalers, summary_text, unjudged_text
from abstat.render.units import format_change
from abstat.report.centres import row_words
from abstat.report.table import Cell, Report, Row


def check_columns(report: Report, label: str) -> None:
    """UsageError (one line) when ``label`` cannot go across the top of ``report``."""
    if label not in report.row_keys:
        hint = "it is {by}" if label == report.by else f"the rows are {', '.join(report.row_keys) or 'one'}"
        raise UsageError(
            f"{{columns}} {label}: the table has no row label {label!r} ({hint})", fields=["columns", "by"]
        )


def change_cell(cell: Cell) -> str:
    """The change of a compared cell, compact: ``-4.0% [-6.2,-1.7]*`` and its words and notes."""
    comparison = cell.comparison
    if comparison is None:
        return "not compared"
    if comparison.verdict == "cannot judge":
        text = unjudged_text(comparison)
    else:
        text = format_change(comparison.delta_pct, comparison.ci_pct).replace(", ", ",")
        text += mark(cell)
        words = row_words(comparison, short=True)
        text += f" {words}" if words else ""
    return text + (" [" + ",".join(map(str, cell.notes)) + "]" if cell.notes else "")


def _group_lines(report: Report, group: tuple[str, ...], rows: list[Row | None]) -> list[list[str]]:
    """The lines of one group of rows: a line of centres per ``--by`` value, its changes under it."""
    scales = scalers(report)
    lines: list[list[str]] = []
    for index, column in enumerate(report.columns):
        cells = [row.cells.get(column) if row is not None else None for row in rows]
        shown = group if index == 0 else tuple("" for _ in group)  # a group's labels once, on its first line
        lines.append([*shown, column, *(format_cell_value(c, scales) if c else "-" for c in cells)])
        if column != report.baseline:
            lines.append(["" for _ in (*group, column)] + [change_cell(c) if c else "" for c in cells])
    return lines


def render_text(report: Report) -> str:
    """The text format: the table in the layout ``report.columns_label`` asks for, when it does."""
    from abstat.render.matrix import render_text as text

    if not report.columns_label:
        return text(report)
    return text(report, table="\n".join(pivot_lines(report, report.columns_label)))


def pivot_lines(report: Report, label: str) -> list[str]:
    """The table with ``label``'s values as columns (see the module)."""
    check_columns(report, label)
    keys = [k for k in report.row_keys if k != label]
    across = list(dict.fromkeys(row.labels.get(label, "") for row in report.rows))
    groups = list(dict.fromkeys(tuple(row.labels.get(k, "") for k in keys) for row in report.rows))
    found: dict[tuple[tuple[str, ...], str], Row] = {
        (tuple(row.labels.get(k, "") for k in keys), row.labels.get(label, "")): row for row in report.rows
    }
    body: list[list[str]] = []
    for group in groups:
        rows = [found.get((group, value)) for value in across]
        body += _group_lines(report, group, rows)
    headers = [*keys, report.by, *across]
    return tables.plain(headers, body, ["l"] * (len(keys) + 1) + ["l"] * len(across)) + _geomean_lines(report)


def _geomean_lines(report: Report) -> list[str]:
    """The geomean rows (over the rows of every column across the top), as the long e-mail table says them."""
    lines = []
    for summary in report.summaries:
        metric = f" {summary.metric}" if summary.metric and "metric" in report.row_keys else ""
        lines.append(escape.terminal(f"geomean{metric} {summary.column}: {summary_text(summary)}"))
    return lines
