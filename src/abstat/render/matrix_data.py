"""The report's summary table as JSON and CSV (split from :mod:`abstat.render.matrix`,
which re-exports both renderers).  Renderers return strings; they never print.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from abstat.render import tables
from abstat.render.escape import json_text
from abstat.report.matrix import Cell, Report, Summary


def _json_default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def render_json(report: Report) -> str:
    return json_text(report.to_dict(), default=_json_default)


CSV_FIELDS = [
    "kind",
    "by",
    "column",
    "baseline",
    "n",
    "center",
    "baseline_center",
    "delta_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "p_adjusted",
    "significant",
    "verdict",
    "method",
    "unit",
    "source",
    "notes",
    "center_kind",
    "data",
]


def render_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    tables.csv_row(writer, list(report.row_keys) + CSV_FIELDS)
    for row in report.rows:
        base = row.cells.get(report.baseline)
        for column in report.columns:
            cell = row.cells.get(column)
            if cell is not None:
                tables.csv_row(
                    writer, [row.labels.get(k, "") for k in report.row_keys] + _csv_cell(report, column, cell, base)
                )
    for summary in report.summaries:
        tables.csv_row(writer, _csv_summary(report, summary))
    return buffer.getvalue()


def _csv_cell(report: Report, column: str, cell: Cell, base: Cell | None) -> list[Any]:
    """The CSV fields of one cell (after its row's labels)."""
    delta, low, high, p_value, verdict, method = _csv_comparison(cell.comparison)
    return [
        "cell",
        report.by,
        column,
        report.baseline,
        cell.n,
        repr(cell.center),
        repr(base.center) if base is not None else "",
        delta,
        low,
        high,
        p_value,
        repr(cell.p_adjusted) if cell.p_adjusted is not None else "",
        "" if cell.significant is None else str(cell.significant).lower(),
        verdict,
        method,
        cell.sample_set.unit or "",
        cell.sample_set.source or "",
        ";".join(dict.fromkeys(m["code"] for m in cell.messages)),
        cell.center_kind,
        "summary" if cell.sample_set.summary is not None else "samples",
    ]


def _csv_comparison(cmp: Any) -> tuple[str, str, str, str, str, str]:
    """A cell's change, its interval, p-value, verdict and method as CSV fields ('' where not compared)."""
    if not cmp:
        return "", "", "", "", "", ""
    ci = cmp.ci_pct
    return (
        repr(cmp.delta_pct),
        repr(ci[0]) if ci else "",
        repr(ci[1]) if ci else "",
        repr(cmp.p_value) if cmp.p_value is not None else "",
        cmp.verdict,
        cmp.method,
    )


def _csv_summary(report: Report, summary: Summary) -> list[Any]:
    """The CSV row of one geometric mean of ratios (its metric in the metric label's column)."""
    labels = [""] * len(report.row_keys)
    if "metric" in report.row_keys and summary.metric is not None:
        labels[report.row_keys.index("metric")] = summary.metric
    return labels + [
        "geomean",
        report.by,
        summary.column,
        report.baseline,
        summary.cells,
        "",
        "",
        repr((summary.ratio - 1) * 100),
        repr((summary.ci[0] - 1) * 100) if summary.ci else "",
        repr((summary.ci[1] - 1) * 100) if summary.ci else "",
        "",
        "",
        "",
        "",
        "geometric mean of ratios",
        "",
        "",
        "",
        "",
        "",
    ]
