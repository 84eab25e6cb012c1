"""The report's summary table as text: plain (72 columns for e-mail), rich
(terminal), Markdown, CSV and JSON.  Renderers return strings; they never print.
"""
from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from typing import Any, Sequence

from abstat.report.matrix import Cell, Report, Summary

EMAIL_WIDTH = 72


# --------------------------------------------------------------------------
# cell text

_TIME_STEPS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))


def format_value(value: float, unit: str | None = None) -> str:
    """A centre value: six significant digits, like ministat's columns.

    Seconds (hyperfine, pyperf, the store's wall time) get a readable prefix:
    ``0.000435`` s is shown as ``435 us``.
    """
    if unit in ("s", "second", "seconds") and value != 0 and math.isfinite(value):
        for factor, name in _TIME_STEPS:
            if abs(value) >= factor or factor == 1e-9:
                return f"{value / factor:.4g} {name}"
    return f"{value:.6g}"


def _decimals(values: Sequence[float]) -> int:
    spread = max(values) - min(values) if len(values) > 1 else abs(values[0])
    return 2 if spread < 1 else 1


def format_change(delta: float, ci: Sequence[float] | None) -> str:
    """``-13.6% [-14.2, -13.1]``."""
    if not math.isfinite(delta):
        return "n/a"
    numbers = [delta, *(x for x in (ci or []) if math.isfinite(x))]
    d = _decimals(numbers)
    text = f"{delta:+.{d}f}%"
    if ci is not None and all(math.isfinite(x) for x in ci):
        text += f" [{ci[0]:+.{d}f}, {ci[1]:+.{d}f}]"
    return text


def _notes(cell: Cell) -> str:
    return "[" + ",".join(str(n) for n in cell.notes) + "]" if cell.notes else ""


def change_text(cell: Cell) -> str:
    """The change column of a non-baseline cell (with mark and footnotes)."""
    if cell.comparison is None:
        return ("not compared " + _notes(cell)).strip()
    cmp = cell.comparison
    text = format_change(cmp.delta_pct, cmp.ci_pct)
    text += " *" if cell.significant else "  "
    return (text + " " + _notes(cell)).rstrip()


def center_text(cell: Cell, *, with_notes: bool) -> str:
    text = format_value(cell.center, cell.sample_set.unit)
    if cell.center_kind != cell.report_center:   # summary statistics: the mean, not the median
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
    candidates = report.columns[1:]
    headers = list(report.row_keys) or [""] * label_columns(report)
    align = ["l"] * len(headers)
    for column in report.columns:
        headers.append(column)
        align.append("r")
        if column != report.baseline:
            headers.append("change" if len(candidates) == 1 else f"{column} change")
            align.append("l")
    body: list[list[str]] = []
    for row in report.rows:
        line = [row.labels.get(k, "") for k in report.row_keys] or [""] * label_columns(report)
        for column in report.columns:
            cell = row.cells.get(column)
            if cell is None:
                line.append("-")
                if column != report.baseline:
                    line.append("")
                continue
            line.append(center_text(cell, with_notes=column == report.baseline))
            if column != report.baseline:
                line.append(change_text(cell))
        body.append(line)
    for metric in _summary_metrics(report):
        line = [""] * label_columns(report)
        line[0] = "geomean" + (f" {metric}" if metric and "metric" in report.row_keys else "")
        for column in report.columns:
            line.append("")
            if column != report.baseline:
                found = [s for s in report.summaries if s.column == column and s.metric == metric]
                line.append(summary_text(found[0]) if found else "")
        body.append(line)
    return headers, body, align


def label_columns(report: Report) -> int:
    """How many label columns start each table row (one for 'geomean' if no keys)."""
    return len(report.row_keys) or (1 if report.summaries else 0)


def _summary_metrics(report: Report) -> list[Any]:
    return list(dict.fromkeys(summary.metric for summary in report.summaries))


def title(report: Report) -> str:
    common = ", ".join(f"{k}={v}" for k, v in report.common.items())
    text = f"abstat report: {report.by}, baseline {report.baseline}"
    return text + (f" ({common})" if common else "")


def _pad(cells: Sequence[str], widths: Sequence[int], align: Sequence[str]) -> str:
    parts = [c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align)]
    return "  ".join(parts).rstrip()


def plain_table(report: Report) -> str:
    headers, body, align = table_grid(report)
    widths = [max(len(r[i]) for r in [headers, *body]) for i in range(len(headers))]
    lines = [_pad(headers, widths, align), _pad(["-" * w for w in widths], widths, align)]
    lines += [_pad(r, widths, align) for r in body]
    return "\n".join(lines)


def long_table(report: Report) -> str:
    """One line per cell, for tables too wide for an e-mail."""
    lines = []
    width = max(len(c) for c in report.columns)
    value_width = max(len(center_text(c, with_notes=False))
                      for row in report.rows for c in row.cells.values())
    for row in report.rows:
        head = " ".join(f"{k}={row.labels.get(k, '')}" for k in report.row_keys) or "all"
        lines.append(head)
        for column in report.columns:
            cell = row.cells.get(column)
            if cell is None:
                continue
            text = center_text(cell, with_notes=False).rjust(value_width)
            if column != report.baseline:
                text += "  " + change_text(cell)
            elif cell.notes:
                text += "  " + _notes(cell)
            lines.append(f"  {column.ljust(width)}  {text}".rstrip())
    for summary in report.summaries:
        metric = f" {summary.metric}" if summary.metric and "metric" in report.row_keys else ""
        lines.append(f"geomean{metric} {summary.column}: {summary_text(summary)}")
    return "\n".join(lines)


def footer_lines(report: Report, width: int | None = None) -> list[str]:
    lines = []
    for text in report.footer():
        lines += textwrap.wrap(text, width) if width else [text]
    for number, text in enumerate(report.footnotes, 1):
        if width:
            lines += textwrap.wrap(text, width, initial_indent=f"[{number}] ",
                                   subsequent_indent=" " * (len(str(number)) + 3),
                                   break_on_hyphens=False, break_long_words=False)
        else:
            lines.append(f"[{number}] {text}")
    return lines


def render_text(report: Report, *, width: int | None = None) -> str:
    """Plain text: title, table (long layout if wider than ``width``), footer."""
    table = plain_table(report)
    if width and max(len(line) for line in table.splitlines()) > width:
        table = long_table(report)
    heading = textwrap.wrap(title(report), width, break_on_hyphens=False) if width else [title(report)]
    parts = [*heading, "", table, ""]
    parts += footer_lines(report, width)
    return "\n".join(parts) + "\n"


def render_rich(report: Report, *, width: int = 100, color: bool = True) -> str:
    """The table drawn by rich (box lines, colour marks) as a string."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    headers, body, align = table_grid(report)
    # Text objects throughout: labels are shown as typed, never as rich markup.
    table = Table(title=Text(title(report)), title_justify="left")
    for header, a in zip(headers, align):
        table.add_column(Text(header), justify="right" if a == "r" else "left", no_wrap=True)
    n_rows = len(report.rows)
    for index, line in enumerate(body):
        row = report.rows[index] if index < n_rows else None
        position = label_columns(report)
        texts = [Text(x) for x in line[:position]]
        for column in report.columns:
            texts.append(Text(line[position]))
            position += 1
            if column != report.baseline:
                cell = row.cells.get(column) if row is not None else None
                texts.append(Text(line[position], style=_rich_style(cell)))
                position += 1
        table.add_row(*texts, end_section=index == n_rows - 1 and len(body) > n_rows)
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False)
    console.print(table)
    for text in footer_lines(report, width):
        console.print(Text(text))
    return buffer.getvalue()


def marked_verdict(cell: Cell | None) -> str | None:
    """The verdict of a cell marked significant (``*``), else None."""
    if cell is None or not cell.significant or cell.comparison is None:
        return None
    return cell.comparison.verdict


def _rich_style(cell: Cell | None) -> str:
    verdict = marked_verdict(cell)
    return "" if verdict is None else {"faster": "green", "slower": "red"}.get(verdict, "bold")


# --------------------------------------------------------------------------
# Markdown

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def md_escape(text: str) -> str:
    """Text safe inside a GitHub-flavoured Markdown table cell."""
    return text.translate(_MD_SPECIAL).replace("\n", " ")


def render_markdown(report: Report) -> str:
    """A GitHub-flavoured Markdown table; user strings (labels, names) escaped."""
    headers, body, align = table_grid(report)
    n_labels = label_columns(report)
    lines = [f"### {md_escape(title(report))}", ""]
    lines.append("| " + " | ".join(md_escape(h) for h in headers) + " |")
    lines.append("|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|")
    for row in body:
        # label cells come from the user; the others are numbers we wrote
        cells = [md_escape(c) for c in row[:n_labels]] + [c.replace("|", "\\|") for c in row[n_labels:]]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for text in report.footer():
        lines.append(md_escape(text) + "  ")
    if report.footnotes:
        lines.append("")
        for number, text in enumerate(report.footnotes, 1):
            lines.append(f"{number}. {md_escape(text)}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# JSON and CSV

def _json_default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "item"):   # numpy scalars
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _finite_or_none(value: Any) -> Any:
    """JSON has no NaN/Infinity: such numbers become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(v) for v in value]
    return value


def render_json(report: Report) -> str:
    doc = json.loads(json.dumps(report.to_dict(), default=_json_default))
    return json.dumps(_finite_or_none(doc), indent=2, allow_nan=False) + "\n"


CSV_FIELDS = ["kind", "by", "column", "baseline", "n", "center", "baseline_center",
              "delta_pct", "ci_low_pct", "ci_high_pct", "p_value", "p_adjusted",
              "significant", "verdict", "method", "unit", "source", "notes",
              "center_kind", "data"]


def render_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(report.row_keys) + CSV_FIELDS)
    for row in report.rows:
        base = row.cells.get(report.baseline)
        for column in report.columns:
            cell = row.cells.get(column)
            if cell is None:
                continue
            cmp = cell.comparison
            writer.writerow([row.labels.get(k, "") for k in report.row_keys] + [
                "cell", report.by, column, report.baseline, cell.n, repr(cell.center),
                repr(base.center) if base is not None else "",
                repr(cmp.delta_pct) if cmp else "",
                repr(cmp.ci_pct[0]) if cmp else "", repr(cmp.ci_pct[1]) if cmp else "",
                repr(cmp.p_value) if cmp and cmp.p_value is not None else "",
                repr(cell.p_adjusted) if cell.p_adjusted is not None else "",
                "" if cell.significant is None else str(cell.significant).lower(),
                cmp.verdict if cmp else "", cmp.method if cmp else "",
                cell.sample_set.unit or "", cell.sample_set.source or "",
                " ".join(str(n) for n in cell.notes), cell.center_kind,
                "summary" if cell.sample_set.summary is not None else "samples"])
    for summary in report.summaries:
        labels = [""] * len(report.row_keys)
        if "metric" in report.row_keys and summary.metric is not None:
            labels[report.row_keys.index("metric")] = summary.metric
        writer.writerow(labels + [
            "geomean", report.by, summary.column, report.baseline, summary.cells, "", "",
            repr((summary.ratio - 1) * 100),
            repr((summary.ci[0] - 1) * 100) if summary.ci else "",
            repr((summary.ci[1] - 1) * 100) if summary.ci else "",
            "", "", "", "", "geometric mean of ratios", "", "", "", "", ""])
    return buffer.getvalue()
