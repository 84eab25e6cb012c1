"""``abstat report --format html``: one self-contained HTML file.

The page holds the summary table, its footer and footnotes (the warnings),
per compared cell a plot of both distributions (empirical CDFs and a box
plot over the samples, inline SVG written by :mod:`abstat.render.svg_plots`)
with the two sets' summaries, and the machine records as one key/value table
whose rows that differ between machines are highlighted.
A cell given as summary statistics (``NAME=n:mean:stddev``) has no samples:
its comparison gets no plot but a note saying why, and its Min, Max and
Median are shown as unknown.
Nothing is fetched: no scripts, no external style sheets, fonts or images,
and a Content-Security-Policy that forbids them.  Every string that comes
from the user (labels, file names, machine records) goes through
:func:`abstat.render.escape.html`, inside the plots too.
"""

from __future__ import annotations

import math
from typing import Any

from abstat.errors import UsageError, named
from abstat.render import escape
from abstat.render.html_table import table as _table
from abstat.render.matrix import change_text, title
from abstat.render.html_machines import machines_html
from abstat.render.svg_plots import comparison_figure
from abstat.render.units import common_scale, format_p, in_unit_of, verdict_word
from abstat.report.matrix import Cell, Report

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; } h3 { font-size: 1em; }
table.matrix { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.matrix th, table.matrix td { border: 1px solid #c8c8c8; padding: 0.3em 0.7em; }
table.matrix th { background: #eef1f5; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
td.change { white-space: nowrap; }
td.faster { background: #e3f4e1; } td.slower { background: #fbe3e1; }
tr.summary td { font-weight: bold; border-top: 2px solid #888; }
p.footer, ol.notes { font-size: 0.9em; color: #333; }
section.cell { border-top: 1px solid #ddd; margin-top: 1.5em; }
table.stats { border-collapse: collapse; font-size: 0.9em; font-variant-numeric: tabular-nums; }
table.stats td, table.stats th { padding: 0.15em 0.6em; text-align: right; }
table.stats td:first-child, table.stats th:first-child { text-align: left; }
table.machine { border-collapse: collapse; font-size: 0.85em; }
table.machine th, table.machine td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left;
                                     vertical-align: top; }
table.machine th { background: #f6f6f6; } table.machine td { font-family: monospace; overflow-wrap: anywhere; }
table.machine tr.differs td, table.machine tr.differs th { background: #fff4d6; }
td.missing { color: #888; font-style: italic; }
p.caption { font-size: 0.9em; color: #333; }
div.plot svg { width: 100%; height: auto; display: block; }
details.machine-rest { margin-top: 0.8em; } details.machine-rest summary { cursor: pointer; }
@media print { section.cell { break-inside: avoid; } }
"""


_e = escape.html


def kept_values(report: Report, cell: Cell) -> tuple[list[float], int]:
    """The cell's samples the table's numbers use (after the report's outlier rule), and how many
    runs hold some; a summary-statistics cell has none."""
    from abstat.comparison.centres import kept_runs

    if cell.sample_set.summary is not None:
        return [], 0
    runs = kept_runs(cell.sample_set.comparison_data(), report.outliers) or []
    return [float(v) for run in runs for v in run], sum(1 for run in runs if len(run))


def _stats_table(report: Report, cells: list[Cell], names: list[str]) -> str:
    """N/Min/Max/Median/Avg/Stddev of each set, every value in one unit (one scale for the table), of the
    samples kept after the report's outlier rule (its column says how many it dropped); the median is the
    one the table prints (on integer data one of the values: :func:`abstat.comparison.centres.shown_median`)."""
    from abstat.comparison.centres import shown_median
    from abstat.stats.descriptive import describe

    unit, metric = cells[0].sample_set.unit, cells[0].sample_set.labels.get("metric")
    kept = {id(c): kept_values(report, c) for c in cells if c.sample_set.summary is None}
    described = {key: (describe(values), shown_median(values)) for key, (values, _) in kept.items() if values}
    summaries = [c.sample_set.summary for c in cells if c.sample_set.summary is not None]
    scales = _stats_scales(list(described.values()), summaries, unit, metric)
    in_unit = f" ({scales[0].unit})" if scales[0].unit else ""
    rule = report.outliers != "none"
    out = [_stats_header(in_unit, report.outliers if rule else None)]
    for cell, name in zip(cells, names, strict=True):
        row = _stats_row(cell, name, kept.get(id(cell)), described.get(id(cell)), scales)
        out.append("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in row[: None if rule else -1]) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _stats_header(in_unit: str, outliers: str | None) -> str:
    """The statistics table's opening and header row (a ``dropped`` column with an outlier rule)."""
    return (
        '<table class="stats"><tr><th>set</th><th>N</th>'
        + "".join(f"<th>{name}{_e(in_unit)}</th>" for name in ("Min", "Max", "Median", "Avg", "Stddev"))
        + "<th>runs</th>"
        + (f"<th>dropped ({_e(outliers)})</th>" if outliers is not None else "")
        + "</tr>"
    )


def _stats_scales(
    described: list[Any], summaries: list[Any], unit: str | None, metric: str | None
) -> tuple[Any, Any, Any]:
    """One unit for the stats table: Min/Max/Median set it (integers stay integers: counts, cycles),
    Avg and Stddev keep it with the digits they need."""
    scale = common_scale(
        [v for d, median in described for v in (d.min, d.max, median)] or [s.mean for s in summaries], unit, metric
    )
    average = in_unit_of(scale, [d.mean for d, _ in described] + [s.mean for s in summaries])
    spread = in_unit_of(scale, [d.stddev for d, _ in described if d.n > 1] + [s.stddev for s in summaries])
    return scale, average, spread


def _stats_row(
    cell: Cell, name: str, kept: tuple[list[float], int] | None, described: Any, scales: tuple[Any, Any, Any]
) -> list[Any]:
    """One set's row of the stats table, the values dropped by the outlier rule last."""
    scale, average, spread = scales
    summary = cell.sample_set.summary
    if summary is not None:
        return [
            name,
            f"{summary.n:,}",
            "unknown",
            "unknown",
            "unknown",
            average.number(summary.mean),
            spread.number(summary.stddev),
            "summary",
            "-",
        ]
    if kept is None or described is None:  # the rule dropped every value
        return [name, "0", "-", "-", "-", "-", "-", 0, f"{cell.sample_set.n:,}"]
    (values, runs), (d, median) = kept, described
    return [
        name,
        f"{d.n:,}",
        scale.number(d.min),
        scale.number(d.max),
        scale.number(median),
        average.number(d.mean),
        spread.number(d.stddev) if d.n > 1 else "-",
        runs,
        f"{cell.sample_set.n - len(values):,}",
    ]


def heading(report: Report, base: Cell, cell: Cell) -> str:
    """``host=milan, mode=pv64: variant after vs before`` (label names and values)."""
    where = ", ".join(f"{k}={v}" for k, v in zip(report.row_keys, cell.row) if v != "")
    what = f"{report.by} {cell.column} vs {base.column}"
    return f"{where}: {what}" if where else what


def shown_name(report: Report, cell: Cell) -> str:
    """A set's name in a figure: its file when it came from one, else ``variant=after``."""
    source = cell.sample_set.source
    return cell.name if source and source != "-" else f"{report.by}={cell.column}"


def _constant(report: Report, base: Cell, cell: Cell) -> str | None:
    """A sentence instead of a plot when every set holds one value only."""
    sets = [(shown_name(report, c), set(kept_values(report, c)[0])) for c in (base, cell)]
    if not all(len(values) == 1 for _, values in sets):
        return None
    scale = common_scale(
        [v for _, values in sets for v in values], cell.sample_set.unit, cell.sample_set.labels.get("metric")
    )
    said = [f"every sample of {name} is {scale(next(iter(values)))}" for name, values in sets]
    return f"No plot: {' and '.join(said)}; there is no distribution to draw."


def _comparison_line(cell: Cell) -> str:
    cmp = cell.comparison
    unit, metric = cell.sample_set.unit, cell.sample_set.labels.get("metric")
    word = verdict_word(cmp.verdict, cmp.delta_pct, unit, metric, cmp.higher_is_better)
    estimand = getattr(cmp, "estimand_label", None) or getattr(cmp, "estimand", None)
    what = f"{str(estimand).replace('_', ' ')}: " if estimand else ""
    said = "" if cmp.verdict == "cannot judge" else f" \N{EM DASH} {word}"  # (the change text says it then)
    parts = [f"{what}change {change_text(cell)}{said}", str(cmp.method or "")]
    if _judged(cmp):
        parts.append(
            f"p {_p_relation(cmp.p_value)}"
            + (f", adjusted p {_p_relation(cell.p_adjusted)}" if cell.p_adjusted is not None else "")
        )
    elif cmp.verdict != "cannot judge":
        parts.append("no p-value (the method gives none)")
    else:  # why, in the words of the table's footnote and the JSON (a baseline at or below 0: the difference)
        parts.append(f"no p-value: {here(_why_not(cell))}" if _why_not(cell) else "no p-value")
    return "<p>" + _e("; ".join(p for p in parts if p)) + "</p>"


def _judged(cmp: Any) -> bool:
    return cmp.p_value is not None and not math.isnan(cmp.p_value)  # cannot judge: no p at all


def _why_not(cell: Cell) -> str:
    """Why the cell's comparison cannot judge (its ``cannot-judge`` message), when its line says it: "" when
    it judged."""
    if cell.comparison is None or _judged(cell.comparison) or cell.comparison.verdict != "cannot judge":
        return ""
    return next((m["message"] for m in cell.messages if m.get("code") == "cannot-judge"), "")


def here(text: str) -> str:
    """A warning as this page says it: the distributions are below, not another command away."""
    return text.replace(
        "look at the distributions (abstat report --format html)", "look at the distributions (the figures below)"
    )


def _figure(report: Report, base: Cell, cell: Cell, title_text: str, plot: bool) -> str:
    """The pair's figure (the values kept after the outlier rule), or the sentence that says why none."""
    summaries = [c.name for c in (base, cell) if c.sample_set.summary is not None]
    if summaries:
        verb = "are" if len(summaries) > 1 else "is"
        return (
            f'<p class="note">No distribution plot: {_e(" and ".join(summaries))} {verb} '
            "summary statistics (n, mean, stddev) only; Min, Max, Median and the "
            "distribution need the samples.</p>"
        )
    constant = _constant(report, base, cell)
    if constant:
        return f'<p class="note">{_e(constant)}</p>'
    if not plot:
        return ""
    drawn = comparison_figure(
        [(shown_name(report, c), kept_values(report, c)[0]) for c in (base, cell)],
        unit=cell.sample_set.unit,
        metric=cell.sample_set.labels.get("metric"),
        title=title_text,
    )
    figure = f'<div class="plot">{drawn.svg}</div>'
    if drawn.note:
        figure += f'<p class="caption axis-note">{_e(drawn.note)}</p>'
    if report.outliers != "none":
        figure += (
            f'<p class="caption">The figure draws the values kept after the outlier rule '
            f"({_e(report.outliers)}), as the table and the summaries above use them.</p>"
        )
    return figure


def _cell_section(report: Report, index: int, base: Cell, cell: Cell, *, plot: bool = True) -> str:
    title_text = heading(report, base, cell)
    figure = _figure(report, base, cell, title_text, plot)
    labels = ", ".join(f"{k}={v}" for k, v in cell.sample_set.labels.items())
    parts = [f'<section class="cell" id="cell-{index}">', f"<h3>{_e(title_text)}</h3>", f"<p>{_e(labels)}</p>"]
    if cell.comparison is not None:
        parts.append(_comparison_line(cell))
    said = _why_not(cell)  # the comparison's line says it
    notes = [m["message"] for m in cell.messages if not (said and m["message"] == said)]
    if notes:
        parts.append('<ul class="cell-notes">' + "".join(f"<li>{_e(here(m))}</li>" for m in notes) + "</ul>")
    parts += [_stats_table(report, [base, cell], [shown_name(report, c) for c in (base, cell)]), figure, "</section>"]
    return "\n".join(parts)


PLOT_CHOICES = ("auto", "all", "significant", "none")
AUTO_ALL = 200  # --plots auto: every cell up to this many comparisons, else the significant ones
AUTO_MOST = 200  # ... and at most this many of them, the largest changes first


def plotted(report: Report, plots: str) -> tuple[list[tuple[int, Cell, Cell]], str]:
    """The (index, base, cell) pairs that get a section, and a sentence on those left out."""
    pairs = [(i, b, c) for i, (b, c) in enumerate(report.pairs(), 1)]
    if plots not in PLOT_CHOICES:
        raise UsageError(f"{{plots}} {plots!r}: choose from {', '.join(PLOT_CHOICES)}", fields=["plots"])
    if plots == "all" or (plots == "auto" and len(pairs) <= AUTO_ALL):
        return pairs, ""
    if plots == "none":
        return [], named(f"{len(pairs)} compared cells; no distributions drawn ({{plots}} none).", "plots")
    chosen = [p for p in pairs if p[2].significant]
    limit = "significant"
    if plots == "auto" and len(chosen) > AUTO_MOST:
        chosen = _largest_changes(chosen, AUTO_MOST)
        limit = f"significant, the {AUTO_MOST} largest changes"
    left = len(pairs) - len(chosen)
    return chosen, (
        named(
            f"{len(chosen)} of {len(pairs)} compared cells drawn ({limit}); the other {left} are "
            "in the table above only ({plots} all draws every cell).",
            "plots",
        )
        if left
        else ""
    )


def _largest_changes(pairs: list[tuple[int, Cell, Cell]], most: int) -> list[tuple[int, Cell, Cell]]:
    """The ``most`` pairs of the largest changes, in the table's order."""
    chosen = sorted(pairs, key=lambda p: -abs(p[2].comparison.delta_pct))[:most]
    chosen.sort(key=lambda p: p[0])
    return chosen


def render_body(report: Report, plots: str = "auto") -> str:
    """The page's body: table, footer and warnings, distributions, machines."""
    return "\n".join(body_parts(report, plots))


def body_parts(report: Report, plots: str = "auto") -> list[str]:
    """:func:`render_body` as parts to join with newlines (``publish`` writes them one after another)."""
    body = [f"<h1>{_e(title(report))}</h1>", *_table(report)]
    body += [f'<p class="footer">{_e(line)}</p>' for line in report.footer()]
    if report.footnotes:
        body.append('<h2 id="warnings">Warnings</h2>')
        body.append('<ol class="notes">' + "".join(f"<li>{_e(here(t))}</li>" for t in report.footnotes) + "</ol>")
    chosen, left_out = plotted(report, plots)
    sections = [_cell_section(report, index, base, cell) for index, base, cell in chosen]
    if sections or left_out:
        body.append('<h2 id="distributions">Distributions</h2>')
        if left_out:
            body.append(f'<p class="caption">{_e(left_out)}</p>')
        body += sections
    machines = machines_html(report.machines)
    if machines:
        body.append(machines)
    return body


def render_html(report: Report, plots: str = "auto") -> str:
    """The whole page as a string; ``plots``: which cells get a section with a figure (PLOT_CHOICES)."""
    return page(title(report), render_body(report, plots))


def page(head: str, body: str, style: str = "") -> str:
    """A self-contained page: no scripts, nothing fetched (the Content-Security-Policy forbids it)."""
    start, end = page_ends(head, style)
    return start + body + end


def page_ends(head: str, style: str = "") -> tuple[str, str]:
    """What :func:`page` puts before and after the body."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(head)}</title>\n<style>{_STYLE}{style}</style>\n</head>\n<body>\n",
        "\n</body>\n</html>\n",
    )


def _p_relation(value: float) -> str:
    """``= 0.0445`` or ``< 1e-16``."""
    text = format_p(value, 3)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"
