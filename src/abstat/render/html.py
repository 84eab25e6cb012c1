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

from abstat.render import escape
from abstat.render.matrix import change_text, label_columns, marked_verdict, table_grid, title
from abstat.render.svg_plots import comparison_svg
from abstat.render.units import common_scale, format_p, verdict_word
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
@media print { section.cell { break-inside: avoid; } }
"""


_e = escape.html


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

    unit, metric = cells[0].sample_set.unit, cells[0].sample_set.labels.get("metric")
    described = {id(c): describe(c.sample_set.values) for c in cells if c.sample_set.summary is None}
    scale = common_scale([v for d in described.values() for v in (d.min, d.max, d.median, d.mean)]
                         + [c.sample_set.summary.mean for c in cells if c.sample_set.summary is not None],
                         unit, metric)
    out = ['<table class="stats"><tr><th>set</th><th>N</th><th>Min</th><th>Max</th>'
           "<th>Median</th><th>Avg</th><th>Stddev</th><th>runs</th></tr>"]
    for cell in cells:
        summary = cell.sample_set.summary
        if summary is not None:
            out.append("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in (
                cell.name, summary.n, "unknown", "unknown", "unknown", scale(summary.mean),
                common_scale([summary.stddev], unit, metric)(summary.stddev), "summary")) + "</tr>")
            continue
        d = described[id(cell)]
        out.append("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in (
            cell.name, f"{d.n:,}", scale(d.min), scale(d.max), scale(d.median), scale(d.mean),
            common_scale([d.stddev], unit, metric)(d.stddev) if d.n > 1 else "-",
            len(cell.sample_set.runs))) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _cell_section(index: int, base: Cell, cell: Cell) -> str:
    unit, metric = cell.sample_set.unit, cell.sample_set.labels.get("metric")
    heading = f"{cell.name} vs {base.name}"
    summaries = [c.name for c in (base, cell) if c.sample_set.summary is not None]
    if summaries:
        verb = "are" if len(summaries) > 1 else "is"
        plot = (f'<p class="note">No distribution plot: {_e(" and ".join(summaries))} {verb} '
                "summary statistics (n, mean, stddev) only; Min, Max, Median and the "
                "distribution need the samples.</p>")
    else:
        svg = comparison_svg([(base.name, base.sample_set.values), (cell.name, cell.sample_set.values)],
                             unit=unit, metric=metric, title=heading)
        plot = f'<div class="plot">{svg}</div>'
    labels = ", ".join(f"{k}={v}" for k, v in cell.sample_set.labels.items())
    parts = [f'<section class="cell" id="cell-{index}">',
             f"<h3>{_e(heading)}</h3>",
             f"<p>{_e(labels)}</p>"]
    if cell.comparison is not None:
        cmp = cell.comparison
        judged = cmp.p_value is not None and not math.isnan(cmp.p_value)  # cannot judge: no p at all
        p_adj = f", adjusted p {_p_relation(cell.p_adjusted)}" if judged and cell.p_adjusted is not None else ""
        p_raw = f"p {_p_relation(cmp.p_value)}" if judged else ""
        word = verdict_word(cmp.verdict, cmp.delta_pct, unit, metric, cmp.higher_is_better)
        estimand = getattr(cmp, "estimand", None)
        what = f"{str(estimand).replace('_', ' ')}: " if estimand else ""
        parts.append(f"<p>{_e(what)}change {_e(change_text(cell))} &mdash; {_e(word)}; "
                     f"{_e(cmp.method)}; {_e(p_raw)}{_e(p_adj)}</p>")
    if cell.messages:
        parts.append('<ul class="cell-notes">' + "".join(
            f"<li>{_e(m['message'])}</li>" for m in cell.messages) + "</ul>")
    parts += [_stats_table([base, cell]), plot, "</section>"]
    return "\n".join(parts)


def _machine_value(key: str, value: Any) -> str | None:
    """A record field as readable text (None: not recorded)."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key == "vulnerabilities" and isinstance(value, dict):
        affected = sorted(k for k, v in value.items() if not str(v).startswith("Not affected"))
        return ("affected: " + ", ".join(affected)) if affected else "none affected"
    if isinstance(value, dict):
        return "; ".join(f"{k}={_machine_value(k, v) or '-'}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def _flat_record(record: dict[str, Any], prefix: str = "") -> dict[str, str | None]:
    flat: dict[str, str | None] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key != "vulnerabilities" and value:
            flat.update(_flat_record(value, name + "."))
        else:
            flat[name] = _machine_value(key, value)
    return flat


def _machines(report: Report) -> str:
    """One key/value table: a column per machine, differing rows highlighted."""
    if not report.machines:
        return ""
    hosts = list(report.machines)
    records = {host: _flat_record(report.machines[host]) for host in hosts}
    keys = list(dict.fromkeys(k for record in records.values() for k in record))
    keys = [k for k in keys if any(records[h].get(k) is not None for h in hosts)]
    differing = [k for k in keys if len({records[h].get(k) for h in hosts}) > 1]
    out = ['<h2 id="machines">Machines</h2>']
    if len(hosts) > 1:
        out.append(f'<p class="caption">{len(differing)} of {len(keys)} recorded fields differ between '
                   "the machines (highlighted); fields no machine recorded are left out.</p>")
    out.append('<table class="machine"><thead><tr><th>field</th>'
               + "".join(f"<th>{_e(h)}</th>" for h in hosts) + "</tr></thead><tbody>")
    for key in keys:
        cls = ' class="differs"' if key in differing else ""
        cells = []
        for host in hosts:
            value = records[host].get(key)
            cells.append('<td class="missing">not recorded</td>' if value is None else f"<td>{_e(value)}</td>")
        out.append(f"<tr{cls}><th>{_e(key)}</th>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
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


def _p_relation(value: float) -> str:
    """``= 0.0445`` or ``< 1e-16``."""
    text = format_p(value, 3)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"
