"""The HTML report's summary table (:func:`table`): its rows made one at a time and joined 4096 at a
time; a body row none of whose cells :func:`abstat.render.escape.html` would change is written by one
format of the row's cells (a history's 10^5 revisions x metrics rows), any other cell by cell."""

from __future__ import annotations

from abstat.render import escape
from abstat.render.escape import _HTML_OR_CI
from abstat.render.matrix import grid_headers, grid_rows, label_columns, marked_verdict
from abstat.report.matrix import Report, Row

_e = escape.html


def table(report: Report) -> list[str]:
    """The summary table as parts to join with newlines: its rows made one at a time and joined 4096
    at a time (10^5 rows' parts, the grid's strings and the joined table at once were most of a
    history page's memory)."""
    headers, _ = grid_headers(report)
    out = ['<table class="matrix" id="summary">', "<thead><tr>"]
    out += [f"<th>{_e(h)}</th>" for h in headers]
    out.append("</tr></thead><tbody>")
    block: list[str] = []
    fast, n_rows = row_format(report).format, len(report.rows)
    for index, line in enumerate(grid_rows(report)):
        if index < n_rows and as_is(line):  # (a row of a history's 10^5 revisions x metrics: one format)
            block.append(fast(*row_fields(report, report.rows[index], line)))
        else:
            block.append(table_row(report, index, line))
        if len(block) == BLOCK:
            out.append("\n".join(block))
            block = []
    out += ["\n".join(block)] if block else []
    out.append("</tbody></table>")
    return out


BLOCK = 4096


def table_row(report: Report, index: int, line: list[str]) -> str:
    """One row of the summary table, its lines joined."""
    row = report.rows[index] if index < len(report.rows) else None
    out = ['<tr class="summary">' if row is None else "<tr>"]
    position = label_columns(report)
    out += [f"<td>{_e(x)}</td>" for x in line[:position]]
    for column in report.columns:
        out.append(f'<td class="num">{_e(line[position])}</td>')
        position += 1
        if column != report.baseline:
            cls = "change"
            verdict = marked_verdict(row.cells.get(column) if row is not None else None)
            if verdict in ("faster", "slower"):
                cls += " " + verdict
            out.append(f'<td class="{cls}">{_e(line[position])}</td>')
            position += 1
    out.append("</tr>")
    return "\n".join(out)


def as_is(line: list[str]) -> bool:
    """Whether :func:`abstat.render.escape.html` leaves every cell of ``line`` as it is (asked of the
    cells joined: printable, none of the characters it escapes or a CI command starts with)."""
    joined = "".join(line)
    return joined.isprintable() and _HTML_OR_CI.isdisjoint(joined)


def row_format(report: Report) -> str:
    """:func:`_table_row` of a body row as a format of its cells (each change cell's class before it)."""
    parts = ["<tr>", *["<td>{}</td>"] * label_columns(report)]
    for column in report.columns:
        parts.append('<td class="num">{}</td>')
        if column != report.baseline:
            parts.append('<td class="{}">{}</td>')
    return "\n".join([*parts, "</tr>"])


def row_fields(report: Report, row: Row, line: list[str]) -> list[str]:
    """What :func:`_row_format` takes of a body row: its cells, each change cell's class before it."""
    if len(report.columns) == 1:
        return line
    position = label_columns(report)
    fields = line[:position]
    for column in report.columns:
        fields.append(line[position])
        if column != report.baseline:
            verdict = marked_verdict(row.cells.get(column))
            fields += ["change " + verdict if verdict in ("faster", "slower") else "change", line[position + 1]]
            position += 1
        position += 1
    return fields
