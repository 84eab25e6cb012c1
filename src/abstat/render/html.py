"""``abstat report --format html``: one self-contained HTML file.

The page holds the summary table, its footer and footnotes (the warnings),
per compared cell a plot of both distributions (empirical CDFs, inline SVG
made by matplotlib) with the two sets' summaries, and each machine's record.
A cell given as summary statistics (``NAME=n:mean:stddev``) has no samples:
its comparison gets no plot but a note saying why, and its Min, Max and
Median are shown as unknown.
Nothing is fetched: no scripts, no external style sheets, fonts or images,
and a Content-Security-Policy that forbids them.  Every string that comes
from the user (labels, file names, machine records) goes through
``html.escape`` (matplotlib's SVG writer escapes the text inside plots).
"""
from __future__ import annotations

import json
from html import escape

from abstat.render.html_plots import ecdf_svg
from abstat.render.matrix import change_text, label_columns, marked_verdict, table_grid, title
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
dl.machine { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; font-size: 0.9em; }
dl.machine dt { font-weight: bold; } dl.machine dd { margin: 0; font-family: monospace; white-space: pre-wrap; }
svg { max-width: 100%; height: auto; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _table(report: Report) -> str:
    headers, body, align = table_grid(report)
    out = ['<table class="matrix" id="summary">', "<thead><tr>"]
    out += [f"<th>{_e(h)}</th>" for h in headers]
    out.append("</tr></thead><tbody>")
    n_rows = len(report.rows)
    for index, line in enumerate(body):
        row = report.rows[index] if index < n_rows else None
        out.append('<tr class="summary">' if row is None else "<tr>")
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
    out.append("</tbody></table>")
    return "\n".join(out)


def _stats_table(cells: list[Cell]) -> str:
    from abstat.stats.descriptive import describe

    out = ['<table class="stats"><tr><th>set</th><th>N</th><th>Min</th><th>Max</th>'
           "<th>Median</th><th>Avg</th><th>Stddev</th><th>runs</th></tr>"]
    for cell in cells:
        summary = cell.sample_set.summary
        if summary is not None:
            out.append("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in (
                cell.name, summary.n, "unknown", "unknown", "unknown", f"{summary.mean:.6g}",
                f"{summary.stddev:.6g}", "summary")) + "</tr>")
            continue
        d = describe(cell.sample_set.values)
        out.append("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in (
            cell.name, d.n, f"{d.min:.6g}", f"{d.max:.6g}", f"{d.median:.6g}",
            f"{d.mean:.6g}", f"{d.stddev:.6g}" if d.n > 1 else "-",
            len(cell.sample_set.runs))) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _cell_section(index: int, base: Cell, cell: Cell) -> str:
    unit = cell.sample_set.unit or cell.sample_set.labels.get("metric") or "value"
    summaries = [c.name for c in (base, cell) if c.sample_set.summary is not None]
    if summaries:
        verb = "are" if len(summaries) > 1 else "is"
        plot = (f'<p class="note">No distribution plot: {_e(" and ".join(summaries))} {verb} '
                "summary statistics (n, mean, stddev) only; Min, Max, Median and the "
                "distribution need the samples.</p>")
    else:
        svg = ecdf_svg([(base.name, base.sample_set.values), (cell.name, cell.sample_set.values)],
                       xlabel=unit, salt=f"abstat-cell-{index}")
        plot = f'<div class="plot">{svg}</div>'
    labels = ", ".join(f"{k}={v}" for k, v in cell.sample_set.labels.items())
    parts = [f'<section class="cell" id="cell-{index}">',
             f"<h3>{_e(cell.name)} vs {_e(base.name)}</h3>",
             f"<p>{_e(labels)}</p>"]
    if cell.comparison is not None:
        cmp = cell.comparison
        p_adj = "" if cell.p_adjusted is None else f", adjusted p = {cell.p_adjusted:.3g}"
        p_raw = "" if cmp.p_value is None else f"p = {cmp.p_value:.3g}"
        parts.append(f"<p>change {_e(change_text(cell))} &mdash; {_e(cmp.verdict)}; "
                     f"{_e(cmp.method)}; {_e(p_raw)}{_e(p_adj)}</p>")
    parts += [_stats_table([base, cell]), plot, "</section>"]
    return "\n".join(parts)


def _machines(report: Report) -> str:
    if not report.machines:
        return ""
    out = ['<h2 id="machines">Machines</h2>']
    for host, record in report.machines.items():
        out.append(f"<h3>{_e(host)}</h3>")
        out.append('<dl class="machine">')
        for key, value in record.items():
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
            out.append(f"<dt>{_e(key)}</dt><dd>{_e(text)}</dd>")
        out.append("</dl>")
    return "\n".join(out)


def render_html(report: Report) -> str:
    """The whole page as a string."""
    heading = title(report)
    body = [f"<h1>{_e(heading)}</h1>", _table(report)]
    body += [f'<p class="footer">{_e(line)}</p>' for line in report.footer()]
    if report.footnotes:
        body.append('<h2 id="warnings">Warnings</h2>')
        body.append('<ol class="notes">' + "".join(f"<li>{_e(t)}</li>" for t in report.footnotes)
                    + "</ol>")
    sections = [_cell_section(index, base, cell)
                for index, (base, cell) in enumerate(report.pairs(), 1)]
    if sections:
        body.append('<h2 id="distributions">Distributions</h2>')
        body += sections
    machines = _machines(report)
    if machines:
        body.append(machines)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(heading)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body) + "\n</body>\n</html>\n"
    )
