"""The site's own pages: the index (filterable with radio buttons and CSS, no script), the
regressions page, and the navigation every page starts with.  Entries may come from the
manifest file (untrusted): every field is turned into text and escaped where it is written."""

from __future__ import annotations

import math
from typing import Any, Sequence

from abstat.render import escape
from abstat.render.html import page, page_ends

_e = escape.html
FILTERS = (
    ("all", "all"),
    ("slower", "slower (worse)"),
    ("faster", "faster (better)"),
    ("same", "no difference proven"),
    ("changed", "series with change points"),
)

SITE_STYLE = """
nav.site { font-size: 0.9em; margin-bottom: 1em; } nav.site a { margin-right: 1em; }
table.site { border-collapse: collapse; font-size: 0.92em; } table.site th, table.site td {
  border: 1px solid #c8c8c8; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
table.site th { background: #eef1f5; } tr.slower td.verdict { background: #fbe3e1; }
tr.faster td.verdict { background: #e3f4e1; } .filters label { margin-right: 1em; } td.none { color: #777; }
section table { border-collapse: collapse; } section td, section th { border: 1px solid #ccc; padding: .2em .6em; }
section th { background: #eef1f5; } section svg { max-width: 100%; height: auto; }
""" + "".join(f"#show-{key}:checked ~ div.lists tr.row:not(.{key}) {{ display: none; }}\n" for key, _ in FILTERS[1:])


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _href(value: Any) -> str:
    """A link from the manifest or the site: a relative page path, else nothing."""
    text = _text(value)
    ok = text.endswith(".html") and not text.startswith(("/", ".")) and ":" not in text and ".." not in text
    return _e(text) if ok else "#"


def _nav(depth: int) -> str:
    up = "../" * depth
    return (
        f'<nav class="site"><a href="{up}index.html">experiments and series</a>'
        f'<a href="{up}regressions.html">regressions</a></nav>'
    )


def wrap(head: str, body: str, *, depth: int = 0) -> str:
    """A page of the site: navigation, then ``body``."""
    return page(head, _nav(depth) + "\n" + body, SITE_STYLE)


def wrap_parts(head: str, parts: Sequence[str], *, depth: int = 0) -> list[str]:
    """:func:`wrap` of ``parts`` joined with newlines, as pieces to write one after another (an
    experiment of 10^5 revisions: its page is never one string, let alone two)."""
    start, end = page_ends(head, SITE_STYLE)
    pieces = [start + _nav(depth)]
    for part in parts:
        pieces += ("\n", part)
    pieces.append(end)
    return pieces


def _pct(value: Any) -> str:
    return f"{value:+.1f}%" if isinstance(value, (int, float)) and math.isfinite(value) else "n/a"


def _follow_up_cells(change: dict[str, Any], depth: int) -> str:
    """The confirmation and the bisection cells of a change point: links to their experiments' pages."""
    links = {link.get("kind"): link for link in change.get("links") or [] if isinstance(link, dict)}
    cells = []
    for kind, missing in (
        ("confirmation", "not confirmed (abstat history --confirm)"),
        ("bisection", "not bisected (abstat history --confirm --bisect)"),
    ):
        link = links.get(kind)
        if link is None:
            cells.append(f'<td class="none">{_e(missing)}</td>')
            continue
        runs = f" ({_e(_text(link.get('runs')))} runs)" if link.get("runs") is not None else ""
        cells.append(
            f'<td><a class="{kind}" href="{"../" * depth}{_href(link.get("page"))}">'
            f"{_e(_text(link.get('experiment')))}</a>{runs}</td>"
        )
    return "".join(cells)


def change_links(experiment: str, changes: Sequence[dict[str, Any]]) -> str:
    """A series page's change points with their confirmation and bisection, when the store holds them."""
    if not changes:
        return ""
    out = [
        '<section id="follow-ups"><h2>Change points: confirmation and bisection</h2>',
        "<p>Each change point (the first revision after it; the change is the segment median after over the "
        "one before) and the experiments that re-measured it: the A/B confirmation of the revisions on either "
        "side (confirm-BEFORE-AFTER) and the bisection between them (bisect-GOOD-BAD).</p>",
        '<table class="site"><thead><tr><th>revisions</th><th>change of the segment median</th>'
        "<th>confirmation</th><th>bisection</th></tr></thead><tbody>",
    ]
    for change in changes:
        span = f"{_text(change.get('previous'))[:12]}..{_text(change.get('rev'))[:12]}"
        out.append(
            f"<tr><td><code>{_e(span)}</code></td><td>{_e(_pct(change.get('pct')))}</td>"
            f"{_follow_up_cells(change, 1)}</tr>"
        )
    out.append("</tbody></table></section>")
    return "\n".join(out)


def _series_class(changes: Sequence[dict[str, Any]]) -> str:
    if not changes:
        return "same"
    worse = any(isinstance(c, dict) and c.get("worse") for c in changes)
    return "changed " + ("slower" if worse else "faster")


def index_page(entries: Sequence[dict[str, Any]]) -> str:
    filters = "".join(
        f'<input type="radio" name="show" id="show-{key}"{" checked" if key == "all" else ""}>'
        f'<label for="show-{key}">{_e(words)}</label>'
        for key, words in FILTERS
    )
    out = [
        "<h1>abstat: experiments and history</h1>",
        f'<div class="filters">show: {filters}',
        '<div class="lists">',
        "<h2>Experiments</h2>",
        '<table class="site" id="experiments"><thead><tr><th>experiment</th>'
        "<th>variants</th><th>hosts</th><th>runs</th><th>last run</th><th>latest verdict</th></tr></thead><tbody>",
    ]
    series_rows = []
    for entry in entries:
        cls = _text(entry.get("verdict")) if entry.get("verdict") in ("slower", "faster", "same") else "same"
        failed = f" ({_e(_text(entry.get('failed')))} failed)" if entry.get("failed") else ""
        out.append(
            f'<tr class="row {cls}"><td><a href="{_href(entry.get("page"))}">{_e(_text(entry.get("name")))}'
            f"</a></td><td>{_e(', '.join(map(_text, entry.get('variants') or [])))}</td>"
            f"<td>{_e(', '.join(map(_text, entry.get('hosts') or [])))}</td>"
            f"<td>{_e(_text(entry.get('runs')))}{failed}</td><td>{_e(_text(entry.get('last_run')))}</td>"
            f'<td class="verdict">{_e(_text(entry.get("words")))}</td></tr>'
        )
        series_rows += _series_rows(entry)
    out.append("</tbody></table>")
    out += ["<h2>History series</h2>"]
    if series_rows:
        out += [
            '<table class="site" id="series"><thead><tr><th>experiment</th><th>series</th><th>revisions</th>'
            "<th>change points</th><th>latest change</th></tr></thead><tbody>",
            *series_rows,
            "</tbody></table>",
        ]
    else:
        out.append("<p>No experiment has runs labelled with a revision (abstat run --rev).</p>")
    out.append("</div></div>")
    return wrap("abstat: experiments and history", "\n".join(out))


def _series_rows(entry: dict[str, Any]) -> list[str]:
    """The index's rows of an experiment's history series: change points, the latest one."""
    rows = []
    for series in entry.get("series") or []:
        if not isinstance(series, dict):
            continue
        changes = [c for c in series.get("changes") or [] if isinstance(c, dict)]
        latest = (
            f"{_pct(changes[-1].get('pct'))} at {_text(changes[-1].get('rev'))[:12]}" if changes else "no change point"
        )
        rows.append(
            f'<tr class="row {_series_class(changes)}"><td>{_e(_text(entry.get("name")))}</td>'
            f'<td><a href="{_href(series.get("page"))}">{_e(_text(series.get("title")))}</a></td>'
            f"<td>{_e(_text(series.get('revisions')))}</td><td>{len(changes)}</td>"
            f'<td class="verdict">{_e(latest)}</td></tr>'
        )
    return rows


def regressions_page(entries: Sequence[dict[str, Any]]) -> str:
    found = []
    for entry in entries:
        for series in entry.get("series") or []:
            if not isinstance(series, dict):
                continue
            for change in series.get("changes") or []:
                if isinstance(change, dict) and change.get("worse"):
                    found.append((entry, series, change))

    def size(item: tuple[Any, Any, Any]) -> float:
        pct = item[2].get("pct")
        return -abs(pct) if isinstance(pct, (int, float)) and math.isfinite(pct) else 0.0

    found.sort(key=size)
    out = [
        "<h1>Regressions</h1>",
        "<p>Every change point that made a history series worse (slower, or lower where higher is better), "
        "largest first; the change is the segment median after over the one before.</p>",
    ]
    if not found:
        out.append("<p>No change point made a series worse.</p>")
        return wrap("abstat: regressions", "\n".join(out))
    out.append(
        '<table class="site" id="regressions"><thead><tr><th>experiment</th><th>series</th>'
        "<th>revision</th><th>change of the segment median</th><th>p</th><th>status</th>"
        "<th>confirmation</th><th>bisection</th></tr></thead><tbody>"
    )
    for entry, series, change in found:
        p = change.get("p")
        p_text = f"{p:.2g}" if isinstance(p, (int, float)) and math.isfinite(p) else ""
        out.append(
            f"<tr><td>{_e(_text(entry.get('name')))}</td>"
            f'<td><a href="{_href(series.get("page"))}">{_e(_text(series.get("title")))}</a></td>'
            f"<td>{_e(_text(change.get('rev')))}</td><td>{_e(_pct(change.get('pct')))}</td>"
            f"<td>{_e(p_text)}</td><td>{'provisional' if change.get('provisional') else 'settled'}</td>"
            f"{_follow_up_cells(change, 0)}</tr>"
        )
    out.append("</tbody></table>")
    return wrap("abstat: regressions", "\n".join(out))
