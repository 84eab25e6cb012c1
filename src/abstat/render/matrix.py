"""The report's summary table as text: plain (72 columns for e-mail), rich
(terminal), Markdown, CSV and JSON.  Renderers return strings; they never print.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any

from abstat.render import escape, tables, terminal
from abstat.render.matrix_data import render_csv, render_json  # noqa: F401 (JSON and CSV: re-exported)
from abstat.render.units import Scaler, common_scale, format_change  # noqa: F401 (format_change: API)
from abstat.report.centres import has_shape_warning, row_words
from abstat.report.matrix import Cell, Report, Summary
from abstat.report.table import Row

EMAIL_WIDTH = 72


# --------------------------------------------------------------------------
# cell text


def scalers(report: Report) -> dict[tuple[str | None, str | None], Scaler]:
    """One scale per (unit, metric): every centre of a metric, in every
    column, gets the same prefix and decimals."""
    groups: dict[tuple[str | None, str | None], list[float]] = {}
    means: set[tuple[str | None, str | None]] = set()  # groups with a mean among their centres: counts get decimals
    for row in report.rows:
        for cell in row.cells.values():
            key = (cell.sample_set.unit, cell.sample_set.labels.get("metric"))
            groups.setdefault(key, []).append(cell.center)
            if "mean" in (cell.center_kind or ""):
                means.add(key)
    return {key: common_scale(values, *key, means=key in means) for key, values in groups.items()}


def format_cell_value(cell: Cell, scales: dict[tuple[str | None, str | None], Scaler] | None = None) -> str:
    key = (cell.sample_set.unit, cell.sample_set.labels.get("metric"))
    scaler = (
        scales[key]
        if scales and key in scales
        else common_scale([cell.center], *key, means="mean" in (cell.center_kind or ""))
    )
    return scaler(cell.center)


def _notes(cell: Cell) -> str:
    return "[" + ",".join(str(n) for n in cell.notes) + "]" if cell.notes else ""


def change_text(cell: Cell) -> str:
    """The change column of a non-baseline cell (with mark and footnotes)."""
    if cell.comparison is None:
        return ("not compared " + _notes(cell)).strip()
    cmp = cell.comparison
    text = format_change(cmp.delta_pct, cmp.ci_pct)
    text += " " + (mark(cell) or " ")
    if cmp.verdict == "cannot judge":
        text = unjudged_text(cmp)
    elif has_shape_warning(cmp):  # the printed centres cannot agree with the change: the row says so
        text += " " + row_words(cmp, short=True)
    return (text + " " + _notes(cell)).rstrip()


def mark(cell: Cell) -> str:
    """A compared cell's mark, as its verdict says: ``*`` faster or slower (significant after the family's
    rule, and beyond ``--threshold`` when one is given), ``~`` equivalent (inside the threshold), else none."""
    verdict = cell.comparison.verdict if cell.comparison is not None else None
    return {"faster": "*", "slower": "*", "equivalent": "~"}.get(verdict or "", "")


def unjudged_text(cmp: Any) -> str:
    """A cell that cannot judge: its change too where one is exact (constant sides), as compare shows it."""
    return f"{format_change(cmp.delta_pct, None)} cannot judge" if math.isfinite(cmp.delta_pct) else "cannot judge"


def center_text(
    cell: Cell, *, with_notes: bool, scales: dict[tuple[str | None, str | None], Scaler] | None = None
) -> str:
    text = format_cell_value(cell, scales)
    if cell.sample_set.summary is not None and cell.center_kind != cell.report_center:  # the mean, not the median
        text += f" ({cell.center_kind})"
    if with_notes and cell.notes:
        text += " " + _notes(cell)
    return text


def summary_text(summary: Summary) -> str:
    delta = (summary.ratio - 1) * 100
    ci = [(x - 1) * 100 for x in summary.ci] if summary.ci else None
    return format_change(delta, ci)


# --------------------------------------------------------------------------
# the grid every text format shares


def table_grid(report: Report) -> tuple[list[str], list[list[str]], list[str]]:
    """Headers, body rows and alignments ('l'/'r') of the summary table."""
    headers, align = grid_headers(report)
    return headers, list(grid_rows(report)), align


def grid_rows(report: Report) -> Iterator[list[str]]:
    """:func:`table_grid`'s body rows one at a time (the HTML table writes each as it comes: a report of
    10^5 revisions x metrics rows need not hold them all)."""
    scales = scalers(report)
    for row in report.rows:
        yield _grid_row(report, row, scales)
    for metric in _summary_metrics(report):
        yield _geomean_row(report, metric)


def grid_headers(report: Report) -> tuple[list[str], list[str]]:
    """The labels' headers, then each column's (with its change column beside a candidate's), and the alignments."""
    candidates = report.columns[1:]
    headers = list(report.row_keys) or [""] * label_columns(report)
    align = ["l"] * len(headers)
    for column in report.columns:
        headers.append(column)
        align.append("r")
        if column != report.baseline:
            headers.append("change" if len(candidates) == 1 else f"{column} change")
            align.append("l")
    return headers, align


def _grid_row(report: Report, row: Row, scales: dict[tuple[str | None, str | None], Scaler]) -> list[str]:
    """One row of the table: its labels, then each column's centre (and change, beside a candidate's)."""
    line = _row_labels(report, row)
    for column in report.columns:
        cell = row.cells.get(column)
        if cell is None:
            line.append("-")
            if column != report.baseline:
                line.append("")
            continue
        line.append(center_text(cell, with_notes=column == report.baseline, scales=scales))
        if column != report.baseline:
            line.append(change_text(cell))
    return line


def _row_labels(report: Report, row: Row) -> list[str]:
    """A row's label cells: its values of the row keys (empty cells when there are none)."""
    return list(map(row.labels.get, report.row_keys, repeat(""))) or [""] * label_columns(report)


def _geomean_row(report: Report, metric: Any) -> list[str]:
    """The row of the geometric means of the changes of ``metric``, per candidate."""
    line = [""] * label_columns(report)
    line[0] = "geomean" + (f" {metric}" if metric and "metric" in report.row_keys else "")
    for column in report.columns:
        line.append("")
        if column != report.baseline:
            found = [s for s in report.summaries if s.column == column and s.metric == metric]
            line.append(summary_text(found[0]) if found else "")
    return line


def label_columns(report: Report) -> int:
    """How many label columns start each table row (one for 'geomean' if no keys)."""
    return len(report.row_keys) or (1 if report.summaries else 0)


def _summary_metrics(report: Report) -> list[Any]:
    return list(dict.fromkeys(summary.metric for summary in report.summaries))


def title(report: Report) -> str:
    common = ", ".join(f"{k}={v}" for k, v in report.common.items())
    text = f"abstat report: {report.by}, baseline {report.baseline}"
    return text + (f" ({common})" if common else "")


def plain_table(report: Report) -> str:
    """The space-padded table: :func:`abstat.render.tables.plain` of :func:`table_grid`, joined."""
    return "\n".join(plain_parts(report))


def plain_parts(report: Report) -> list[str]:
    """:func:`plain_table` as parts to join with newlines, made in two passes over the rows: the first
    measures the widths and keeps each report row's cells after its labels (one flat list: a list per
    row of a report of 10^5 revisions x metrics rows was most of the text render's memory), the second
    takes the labels from the rows again and pads, a block of rows at a time."""
    headers, align = grid_headers(report)
    keys, n_rows = label_columns(report), len(report.rows)
    head = tables.escaped(headers)
    widths = [terminal.columns(c) for c in head]
    own: list[str] = []  # each report row's cells after its labels, escaped
    narrow = bytearray(n_rows)  # rows of one-column characters (padded by a format)
    summaries: list[Sequence[str]] = []  # the geometric-mean rows, whole
    for index, line in enumerate(grid_rows(report)):
        cells, sizes, one_column = tables.measured(line)
        widths = list(map(max, widths, sizes))
        if index < n_rows:
            own += cells[keys:]
            narrow[index] = one_column
        else:
            summaries.append(cells)
    step = len(headers) - keys
    parts = [tables.pad(head, widths, align), tables.pad(["-" * w for w in widths], widths, align)]
    fast = tables.narrow_format(widths, align).format
    for start in range(0, n_rows, BLOCK):
        block = []
        for index in range(start, min(start + BLOCK, n_rows)):
            labels = _row_labels(report, report.rows[index])
            rest = own[index * step : (index + 1) * step]
            if narrow[index]:  # (its labels need no escape either)
                block.append(fast(*labels, *rest).rstrip())
            else:
                block.append(tables.pad([*tables.escaped(labels), *rest], widths, align))
        own[start * step : (start + len(block)) * step] = [""] * (len(block) * step)
        parts.append("\n".join(block))
    parts += [tables.pad(cells, widths, align) for cells in summaries]
    return parts


BLOCK = 4096  # rows padded and joined at a time


def long_table(report: Report) -> str:
    """One line per cell, for tables too wide for an e-mail."""
    lines = []
    T = escape.terminal
    scales = scalers(report)
    width = max(terminal.columns(T(c)) for c in report.columns)
    value_width = max(
        len(center_text(c, with_notes=False, scales=scales)) for row in report.rows for c in row.cells.values()
    )
    for row in report.rows:
        head = " ".join(f"{k}={row.labels.get(k, '')}" for k in report.row_keys) or "all"
        lines.append(T(head))
        for column in report.columns:
            cell = row.cells.get(column)
            if cell is None:
                continue
            text = center_text(cell, with_notes=False, scales=scales).rjust(value_width)
            if column != report.baseline:
                text += "  " + change_text(cell)
            elif cell.notes:
                text += "  " + _notes(cell)
            lines.append(f"  {terminal.ljust(T(column), width)}  {T(text)}".rstrip())  # its unit is data
    for summary in report.summaries:
        metric = f" {summary.metric}" if summary.metric and "metric" in report.row_keys else ""
        lines.append(T(f"geomean{metric} {summary.column}: {summary_text(summary)}"))
    return "\n".join(lines)


def footer_lines(report: Report, width: int | None = None) -> list[str]:
    """The footer, then one footnote per finding, without its advice (that is in the HTML page and
    docs/output.md)."""
    lines = []
    for text in map(escape.terminal, report.footer()):
        lines += textwrap.wrap(text, width) if width else [text]
    for number, text in enumerate(map(escape.terminal, report.findings or report.footnotes), 1):
        if width:
            lines += textwrap.wrap(
                text,
                width,
                initial_indent=f"[{number}] ",
                subsequent_indent=" " * (len(str(number)) + 3),
                break_on_hyphens=False,
                break_long_words=False,
            )
        else:
            lines.append(f"[{number}] {text}")
    return lines


def render_text(report: Report, *, width: int | None = None, table: str | None = None) -> str:
    """Plain text: title, table (``table``, else the plain one; the long layout if wider than
    ``width``), footer."""
    tables_parts = plain_parts(report) if table is None else [table]
    if width and max((terminal.columns(x) for part in tables_parts for x in part.splitlines()), default=0) > width:
        tables_parts = [long_table(report)]
    heading = escape.terminal(title(report))
    headings = textwrap.wrap(heading, width, break_on_hyphens=False) if width else [heading]
    parts = [*headings, "", *tables_parts, ""]  # the table's parts joined once, with the rest
    parts += [*footer_lines(report, width), ""]  # (the last newline: not a copy of the whole text)
    return "\n".join(parts)


def render_rich(report: Report, *, width: int = 100, color: bool = True, ascii_only: bool = False) -> str:
    """The table drawn by rich (box lines, colour marks) as a string; with
    ``ascii_only``, box lines in ASCII (for a stream that cannot encode them)."""
    from rich import box
    from rich.console import Console
    from rich.text import Text

    headers, body, align = table_grid(report)
    n_rows = len(report.rows)
    styles = []
    for index in range(len(body)):
        row = report.rows[index] if index < n_rows else None
        row_styles = [""] * label_columns(report)
        for column in report.columns:
            row_styles.append("")
            if column != report.baseline:
                row_styles.append(_rich_style(row.cells.get(column) if row is not None else None))
        styles.append(row_styles)
    # Text objects throughout (tables.rich_table): labels are shown as typed, never as rich markup.
    table = tables.rich_table(
        headers,
        body,
        align,
        styles,
        title=Text(escape.terminal(title(report))),
        title_justify="left",
        no_wrap=True,
        box=box.ASCII if ascii_only else box.HEAVY_HEAD,
    )
    if len(body) > n_rows and n_rows:
        table.rows[n_rows - 1].end_section = True
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        markup=False,
        no_color=not color,
    )
    console.print(table)
    for text in footer_lines(report, width):
        console.print(Text(text))
    return buffer.getvalue()


def marked_verdict(cell: Cell | None) -> str | None:
    """The verdict of a cell marked ``*`` (faster or slower), else None."""
    if cell is None or cell.comparison is None or mark(cell) != "*":
        return None
    return cell.comparison.verdict


def _rich_style(cell: Cell | None) -> str:
    verdict = marked_verdict(cell)
    return "" if verdict is None else {"faster": "green", "slower": "red"}.get(verdict, "bold")


# --------------------------------------------------------------------------
# Markdown

md_escape = escape.markdown  # the name other modules and tests know


def render_markdown(report: Report) -> str:
    """A GitHub-flavoured Markdown table; every cell escaped (tables.markdown)."""
    headers, body, align = table_grid(report)
    lines = [f"### {md_escape(title(report))}", ""]
    lines += tables.markdown(headers, body, align)
    lines.append("")
    for text in report.footer():
        lines.append(md_escape(text) + "  ")
    if report.footnotes:
        lines.append("")
        for number, text in enumerate(report.footnotes, 1):
            lines.append(f"{number}. {md_escape(text)}")
    return "\n".join(lines) + "\n"
