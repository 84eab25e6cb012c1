"""``abstat history`` output: text, Markdown, JSON and HTML (one plot per series)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from abstat.history.analysis import HistoryReport, SeriesResult
from abstat.history.changepoints import SIZE_WINDOW
from abstat.render.escape import html as escape
from abstat.render.escape import markdown as md_escape
from abstat.render.escape import terminal as terminal_safe
from abstat.render.terminal import columns, ljust
from abstat.render.units import common_scale, format_change, format_p, format_value


def _change(change: dict[str, Any], unit: str | None) -> str:
    """``+4.10% [+3.81, +4.42]`` with the decimals the interval supports (render.units); where a change relative
    to the level before is undefined (a note says why), the difference of the levels in the data's unit."""
    relative = change["relative"]
    if relative is None:
        return _difference(change["shift"], change["shift_low"], change["shift_high"], unit)
    if not math.isfinite(relative):
        return "?"
    low, high = change["relative_low"], change["relative_high"]
    interval = None if low is None or high is None else (low * 100.0, high * 100.0)
    return format_change(relative * 100.0, interval)


def _difference(shift: float, low: float, high: float, unit: str | None) -> str:
    """``+1.046 [+0.9971, +1.095] ms (difference)``: one scale for the three, each signed."""
    scale = common_scale([shift, low, high], unit, means=True)

    def signed(value: float) -> str:
        text = scale.number(value)
        return text if text[:1] in "-+" or not math.isfinite(value) else "+" + text

    shown = f" {scale.unit}" if scale.unit else ""
    return f"{signed(shift)} [{signed(low)}, {signed(high)}]{shown} (difference)"


def _status(change: dict[str, Any]) -> str:
    parts = [change["status"]]
    if change["provisional"]:
        parts.append(f"provisional: {change['points_to_settle']} more point(s) settle it")
    return "; ".join(parts)


def _rows(result: SeriesResult, report: HistoryReport) -> list[list[str]]:
    unit = result.series.unit
    rows = []
    for change in (result.describe(c) for c in result.detection.change_points):
        subject = report.subjects.get(change["rev"], "")
        rows.append(
            [
                change["rev"][:12] + (f" {subject[:50]}" if subject else ""),
                format_value(change["before"], unit),
                format_value(change["after"], unit),
                _change(change, unit),
                format_p(change["p_value"]),
                f"{change['points_before']}/{change['points_after']}"
                + (
                    f" ({change['samples_before']}/{change['samples_after']} samples)"
                    if (change["samples_before"], change["samples_after"])
                    != (change["points_before"], change["points_after"])
                    else ""
                ),
                _status(change),
            ]
        )
    return rows


_HEADER = ["revision", "before", "after", "change [CI]", "p", "points", "status"]


def _settings_line(report: HistoryReport) -> str:
    s = report.settings
    drift = "a drift check (a line or curve instead of steps, by BIC)" if s.drift else "no drift check"
    return (
        f"revisions in {report.ordering}; change points: binary segmentation and seeded intervals "
        f"(penalty {s.penalty:g} log n) confirmed by a weighted t test p <= {s.max_pvalue:g} on {s.window} "
        f"revisions each side, then reported when a level, slope and step on {min(s.window, SIZE_WINDOW)} "
        f"each side (allowing for a wandering level) gives p <= {s.max_pvalue:g} and an interval without 0; "
        f"{drift}, segments >= {s.min_segment} revisions, min magnitude {s.min_magnitude * 100:g}%, "
        f"changes below {s.min_change * 100:g}% listed as small, {s.confidence * 100:g}% intervals; "
        "every sample counts, weighted by the revision-to-revision noise; "
        "the p-value is the model's at the chosen split (optimistic: the split was chosen)"
    )


def _table_lines(rows: list[list[str]], markdown: bool) -> list[str]:
    """The change points' table (rows already escaped): Markdown, or aligned text."""
    if not rows:
        return ["no change point found"]
    if markdown:
        return [
            "",
            "| " + " | ".join(_HEADER) + " |",
            "|" + "|".join("---" for _ in _HEADER) + "|",
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
        ]  # the next line would be read as one more row of the table
    widths = [max(columns(h), *(columns(r[i]) for r in rows)) for i, h in enumerate(_HEADER)]
    return [
        "  " + "  ".join(ljust(h, w) for h, w in zip(_HEADER, widths)).rstrip(),
        *("  " + "  ".join(ljust(c, w) for c, w in zip(row, widths)).rstrip() for row in rows),
    ]


def _series_text(result: SeriesResult, report: HistoryReport, markdown: bool, esc: Callable[[str], str]) -> list[str]:
    """One series: heading, revisions and samples, the table, the segments' medians, the notes."""
    series = result.series
    heading = f"{series.title}" + (f" ({series.unit})" if series.unit else "")
    lines = [("## " if markdown else "") + esc(heading)]
    count = len(series.points)
    lines.append(
        f"{count} revision(s), {series.samples()} sample(s)"
        + (f", {esc(series.points[0].rev[:12])} .. {esc(series.points[-1].rev[:12])}" if count else "")
    )
    lines.extend(_table_lines([[esc(c) for c in row] for row in _rows(result, report)], markdown))
    if result.detection.segment_medians and len(result.detection.segment_medians) > 1:
        parts = [
            f"{esc(series.points[a].rev[:12])}..{esc(series.points[b - 1].rev[:12])}: {format_value(m, series.unit)}"
            for a, b, m in result.detection.segment_medians
        ]
        lines.append("segments (median): " + ", ".join(parts))
    for note in result.notes + result.detection.warnings:
        lines.append(("- " if markdown else "note: ") + esc(note.message))
    lines.append("")
    return lines


def render_text(report: HistoryReport, markdown: bool = False) -> str:
    esc = md_escape if markdown else terminal_safe
    lines: list[str] = []
    for result in report.results:
        lines.extend(_series_text(result, report, markdown, esc))
    if not report.results:
        lines.append("no series with a revision label found")
        lines.append("")
    for warning in report.warnings:
        lines.append(("- warning: " if markdown else "warning: ") + esc(warning.message))
    if markdown and report.warnings:
        lines.append("")  # else the settings line continues the last list item
    lines.append(esc(_settings_line(report)))
    return "\n".join(lines).rstrip("\n") + "\n"


def _finite(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None


def to_document(report: HistoryReport) -> dict[str, Any]:
    s = report.settings
    return {
        "ordering": report.ordering,
        "settings": {
            "max_pvalue": s.max_pvalue,
            "min_magnitude": s.min_magnitude,
            "min_segment": s.min_segment,
            "window": s.window,
            "confidence": s.confidence,
            "drift_check": s.drift,
            "penalty": s.penalty,
            "min_change": s.min_change,
        },
        "warnings": [w.to_dict() for w in report.warnings],
        "series": [
            {
                "labels": r.series.labels,
                "metric": r.series.metric,
                "unit": r.series.unit,
                "points": [
                    {
                        "rev": p.rev,
                        "commit_time": p.commit_time,
                        "n": len(p.values),
                        "centre": p.centre,
                        "subject": report.subjects.get(p.rev),
                    }
                    for p in r.series.points
                ],
                "change_points": [{k: _finite(v) for k, v in r.describe(c).items()} for c in r.detection.change_points],
                "small_changes": [{k: _finite(v) for k, v in r.describe(c).items()} for c in r.detection.small],
                "segments": [
                    {"first_rev": r.series.points[a].rev, "last_rev": r.series.points[b - 1].rev, "median": m}
                    for a, b, m in r.detection.segment_medians
                ],
                "notes": [n.to_dict() for n in r.notes + r.detection.warnings],
            }
            for r in report.results
        ],
    }


def render_json(report: HistoryReport) -> str:
    from abstat.render.escape import json_text

    return json_text(to_document(report))


class _Shown(Sequence[str]):
    """Revisions as the figure prints them (``terminal_safe``), each made when read (the figure reads
    those of its labelled ticks)."""

    def __init__(self, revs: Sequence[str]) -> None:
        self.revs = revs

    def __len__(self) -> int:
        return len(self.revs)

    def __getitem__(self, index: Any) -> Any:
        return terminal_safe(self.revs[index])


def _plot(result: SeriesResult, salt: str = "") -> str:
    """The series as inline SVG (abstat.render.svg_history), with what its axis clips."""
    from abstat.render.svg_history import Samples, history_figure

    points, changes = result.series.points, result.detection.change_points
    values: list[list[float]] | Samples
    if isinstance(points, list):
        revs, values, centres = [p.rev for p in points], [p.values for p in points], [p.centre for p in points]
    else:  # arrays (history.columnar): no Point made
        revs, values, centres = points.revs, Samples(points.values, points.sizes()), points.centres()
    figure = history_figure(
        _Shown(revs),
        values,
        centres,
        result.detection.segment_medians,
        # no percent label where a relative change is undefined (a level at or near 0: the table says why)
        [(c.index, math.nan if c.baseline_issue() else c.before, c.after, c.provisional) for c in changes],
        unit=result.series.unit,
        metric=result.series.metric,
        title=result.series.title,
    )
    note = f'<p class="caption">{escape(figure.note)}</p>' if figure.note else ""
    return figure.svg + note


def render_html(report: HistoryReport) -> str:
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        "<title>abstat history</title><style>body{font-family:system-ui,sans-serif;max-width:72em;"
        "margin:2em auto;padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:.2em .6em}th{background:#eef1f5}svg{max-width:100%;height:auto}</style></head><body>",
        "<h1>abstat history</h1>",
    ]
    for index, result in enumerate(report.results):
        series = result.series
        parts.append(f"<section><h2>{escape(series.title)}</h2>")
        parts.append(f"<p>{len(series.points)} revision(s)</p>")
        parts.append(_plot(result, salt=f"series{index}"))
        rows = _rows(result, report)
        if rows:
            parts.append("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in _HEADER) + "</tr>")
            parts.extend("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
            parts.append("</table>")
        else:
            parts.append("<p>no change point found</p>")
        if result.notes or result.detection.warnings:
            parts.append(
                "<ul>"
                + "".join(f"<li>{escape(n.message)}</li>" for n in result.notes + result.detection.warnings)
                + "</ul>"
            )
        parts.append("</section>")
    if not report.results:
        parts.append("<p>no series with a revision label found</p>")
    if report.warnings:
        parts.append("<ul>" + "".join(f"<li>warning: {escape(w.message)}</li>" for w in report.warnings) + "</ul>")
    parts.append(f"<p><small>{escape(_settings_line(report))}</small></p></body></html>")
    return "\n".join(parts) + "\n"


def render(report: HistoryReport, fmt: str) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "html":
        return render_html(report)
    return render_text(report, markdown=fmt == "markdown")
