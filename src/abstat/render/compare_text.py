"""Render comparisons: a human table (plain or coloured), Markdown, JSON, CSV.

``render(comparisons, fmt, color)`` returns the text; it never prints (the
writers of each format: :mod:`abstat.render.compare_formats`, found through
:mod:`abstat.render.registry`).  :func:`summary_block` is the terse form
``abstat run`` and ``abstat compare`` end with: one line per metric and
candidate,

    wall  12.31 ms -> 10.02 ms  -18.6% [-19.4, -17.8]  faster
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from abstat.render import escape, tables, terminal
from abstat.render.compare_formats import (
    ARROW,
    CSV_HEADER,
    FORMATS,
    _console,
    _footnote_lines,
    _footnotes,
    _style,
    estimand_text,
    to_json_document,
)
from abstat.render.units import common_scale, format_change, verdict_word
from abstat.report.adjust import family_caption
from abstat.report.centres import has_shape_warning, row_words
from abstat.report.notes import Footnotes

__all__ = [
    "ARROW",
    "CSV_HEADER",
    "FORMATS",
    "estimand_text",
    "render",
    "render_table",
    "summary_block",
    "table_comparisons",
    "to_json_document",
]


def _centre(comp: Any, name: str) -> float | None:
    """The variant's centre of the comparison's estimand (``centers``: a median, mean,
    geometric mean or pseudo-median, of the samples or of the runs' medians or means)."""
    centers = getattr(comp, "centers", None)
    if centers:
        return centers[0] if name == comp.baseline else centers[1] if name == comp.candidate else None
    for s in comp.summaries:
        if s.name == name:
            return s.median if comp.center == "median" and s.median is not None else s.mean
    return None


def _centre_label(comp: Any) -> str:
    """What the line's two figures are, when no metric names the line."""
    return getattr(comp, "center_kind", "") or comp.center


def summary_block(
    sections: Sequence[tuple[str | None, str | None, Sequence[Any]]],
    *,
    color: bool = False,
    notes: Footnotes | None = None,
    advice: bool = False,
) -> str:
    """``(metric, unit, comparisons)`` per metric -> one line per candidate,
    then the footnotes (one line per kind of warning) they refer to; ``advice`` (``--verbose``):
    each with what to do about it."""
    notes = notes if notes is not None else Footnotes()
    several = any(len(comps) > 1 for _, _, comps in sections)
    body: list[list[str]] = []
    words: list[str] = []
    for metric, unit, comps in sections:
        for line, word in _summary_lines(metric, unit, comps, notes, several):
            body.append(line)
            words.append(word)
    if not body:
        return ""
    every = [comp for _, _, comps in sections for comp in comps]
    align = ["l"] * (len(body[0]) - 4) + ["r", "l", "l", "l"]
    out = [
        escape.terminal(_caption(sections, every, several)),
        *tables.plain([""] * len(body[0]), body, align, rule=False)[1:],
    ]
    if notes.items:
        out.append("")
        out += _footnote_lines(every, notes, advice=advice)
    return _coloured(out, words) if color else "\n".join(out) + "\n"


def _summary_lines(
    metric: str | None, unit: str | None, comps: Sequence[Any], notes: Footnotes, several: bool
) -> list[tuple[list[str], str]]:
    """One metric's lines (cells, verdict word), their footnotes numbered in ``notes``."""
    _, refs = _footnotes(comps, notes, prefix=metric or "")
    scale = _centres_scale(comps, unit, metric)
    lines = []
    for comp, mine in zip(comps, refs, strict=True):
        pair = _centre_pair(comp, scale)
        word = verdict_word(comp.verdict, comp.delta_pct, unit, metric, comp.higher_is_better)
        head = [metric or _centre_label(comp)] + ([f"{comp.candidate} vs {comp.baseline}"] if several else [])
        shape = [row_words(comp)] if has_shape_warning(comp) else []  # the row says it, not only a footnote
        lines.append(
            (
                [
                    *head,
                    pair,
                    format_change(comp.delta_pct, comp.ci_pct),
                    word,
                    " ".join([*shape, *(f"[{i}]" for i in mine)]),
                ],
                word,
            )
        )
    return lines


def _centres_scale(comps: Sequence[Any], unit: str | None, metric: str | None) -> Any:
    """One scale per metric: the baseline's centre reads alike on every line of it."""
    return common_scale(
        [v for comp in comps for v in (_centre(comp, comp.baseline), _centre(comp, comp.candidate)) if v is not None],
        unit,
        metric,
        means=any("mean" in _centre_label(comp) for comp in comps),
    )


def _centre_pair(comp: Any, scale: Any) -> str:
    """``BEFORE → AFTER``, the two centres (``?`` where unknown)."""
    before, after = _centre(comp, comp.baseline), _centre(comp, comp.candidate)
    return f"{scale(before) if before is not None else '?'} {ARROW} {scale(after) if after is not None else '?'}"


def _caption(sections: Sequence[tuple[str | None, str | None, Sequence[Any]]], every: list[Any], several: bool) -> str:
    """What the lines compare (per kind of centre when they differ), their level and the family's rule."""
    first = every[0]
    by_estimand: dict[str, list[str]] = {}
    for metric, _, comps in sections:
        for comp in comps:
            names = by_estimand.setdefault(estimand_text(comp), [])
            if (metric or _centre_label(comp)) not in names:
                names.append(metric or _centre_label(comp))
    who = f"{first.candidate if not several else 'candidate'} vs {first.baseline}"
    if len(by_estimand) == 1:
        caption = f"{who}: {estimand_text(first)} with its {first.confidence * 100:g}% confidence interval"
    else:  # the lines do not all compare the same kind of centre: say which does which
        kinds = "; ".join(f"{text} for {', '.join(names)}" for text, names in by_estimand.items())
        caption = f"{who}: {kinds}; {first.confidence * 100:g}% confidence intervals"
    family = family_caption(every)
    return caption + (f"; {family}" if family else "")


def _coloured(out: list[str], words: list[str]) -> str:
    """The summary's lines on a terminal: the caption and footnotes dim, each verdict word in its colour."""
    from rich.text import Text

    buffer = io.StringIO()
    console = _console(buffer, width=max(80, max(terminal.columns(line) for line in out)))
    console.print(Text(out[0], style="dim"))
    for line, word in zip(out[1:], words, strict=False):
        text = Text(line)
        at = line.rfind(word)
        if at >= 0:
            text.stylize(_style(word), at, at + len(word))
        console.print(text)
    for line in out[1 + len(words) :]:
        console.print(Text(line, style="dim"))
    return buffer.getvalue()


def render(
    comparisons: Sequence[Any],
    fmt: str = "text",
    color: bool = False,
    *,
    unit: str | None = None,
    metric: str | None = None,
    footnotes: bool = True,
) -> str:
    """The comparisons (in ``unit``, of ``metric`` when known) as text in one of :data:`FORMATS`;
    ``footnotes=False``: the text tables without them (a summary block follows with them)."""
    from abstat.render.registry import render_comparisons

    return render_comparisons(comparisons, fmt, color=color, unit=unit, metric=metric, footnotes=footnotes)


def table_comparisons(report: Any) -> list[Any]:
    """The comparisons of a report's table, in table order (``abstat compare``'s one row: its candidates)."""
    return [cell.comparison for cell in report.comparisons]


def render_table(
    report: Any,
    fmt: str = "text",
    *,
    color: bool = False,
    verbose: bool = False,
    unit: str | None = None,
    metric: str | None = None,
) -> str:
    """``abstat compare``'s one-row table (:func:`abstat.report.matrix.one_row_report`) in ``fmt``: text is the
    summary lines (``verbose``: the per-variant and per-comparison tables first); the other formats as
    :func:`render` writes them."""
    comparisons = table_comparisons(report)
    if fmt != "text":
        return render(comparisons, fmt=fmt, unit=unit, metric=metric)
    text = summary_block([(metric, unit, comparisons)], color=color, advice=verbose)
    if verbose:
        text = render(comparisons, fmt="text", color=color, footnotes=False, unit=unit, metric=metric) + "\n" + text
    return text
