"""The comparison formats: a human table (plain or coloured), Markdown, JSON, CSV.

The writers :mod:`abstat.render.registry` looks the formats up in; call them through
:func:`abstat.render.compare_text.render`.  The JSON form is the documented contract of
``docs/json.md``.  Warnings become numbered footnotes in text and Markdown, one per kind of
warning (:mod:`abstat.report.notes`), listing the variants it concerns.  Numbers go through
:mod:`abstat.render.units`, cells through the table writers of :mod:`abstat.render.tables`
(which escape them for the target).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

from abstat.render import escape, tables
from abstat.render.units import common_scale, format_change, format_p, in_unit_of, verdict_word
from abstat.report.adjust import family_rule
from abstat.report.notes import Footnotes

FORMATS = ("text", "markdown", "json", "csv")
VERDICT_STYLE = {
    "faster": "bold green",
    "slower": "bold red",
    "equivalent": "cyan",
    "no difference proven": "yellow",
}
ARROW = "\u2192"


def _style(word: str) -> str:
    if word.startswith(("faster", "slower")):
        return VERDICT_STYLE[word.split()[0]]
    if "(better)" in word:
        return VERDICT_STYLE["faster"]
    if "(worse)" in word:
        return VERDICT_STYLE["slower"]
    return VERDICT_STYLE.get(word, "")


def _g(value: float | None, digits: int = 6) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return f"{value:.{digits}g}"


def _change(comp: Any) -> str:
    return re.split(r" [\[(]", format_change(comp.delta_pct, comp.ci_pct), maxsplit=1)[0]


def _ci(comp: Any) -> str:
    if comp.ci_pct is None or any(math.isnan(x) for x in comp.ci_pct):
        return "none"  # cannot judge: no bounds at all, not fake infinite ones
    parts = re.split(r" (?=[\[(])", format_change(comp.delta_pct, comp.ci_pct), maxsplit=1)
    return parts[1] if len(parts) == 2 else "n/a"


def _p(value: float) -> str:
    return format_p(value)


def _footnotes(
    comparisons: Sequence[Any], notes: Footnotes | None = None, prefix: str = ""
) -> tuple[Footnotes, list[list[int]]]:
    """Footnotes by kind (warnings, then notes) and, per comparison, their numbers;
    ``prefix`` (a metric) is the place of each subject."""
    notes = notes if notes is not None else Footnotes()
    refs: list[list[int]] = []
    for comp in comparisons:
        mine = []
        for item in list(comp.warnings) + list(comp.notes):
            subject = item.variant if getattr(item, "variant", None) else f"{comp.candidate} vs {comp.baseline}"
            mine.append(notes.add_warning(item, (prefix, subject)))
        refs.append(sorted(set(mine)))
    return notes, refs


def _warning_numbers(comparisons: Sequence[Any], notes: Footnotes) -> set[int]:
    from abstat.report.notes import kind_of

    keys = {kind_of(w) for c in comparisons for w in c.warnings}
    return {i for i, n in enumerate(notes.items, 1) if (n.head, n.advice) in keys}


def _variant_rows(comparisons: Sequence[Any], unit: str | None = None, metric: str | None = None) -> list[list[str]]:
    summaries = _distinct_summaries(comparisons)
    scale = common_scale(
        [v for s in summaries for v in (s.min, s.max, s.median, s.mean) if v is not None], unit, metric
    )

    def value(v: float | None) -> str:
        return "-" if v is None else scale(v)

    # the stddev in the table's unit, with its own digits (one unit per table: not 765 µs beside 1.249 ms)
    spread_scale = in_unit_of(scale, [s.stddev for s in summaries if s.stddev is not None])

    def spread(v: float | None) -> str:
        return "-" if v is None or v != v else spread_scale(v)

    rows = []
    for s in summaries:
        if s.kind == "summary":
            rows.append([s.name, f"{s.n:,}", "-", "-", "-", "-", value(s.mean), spread(s.stddev), "-", "summary"])
            continue
        ci = f"[{value(s.median_ci[0])}, {value(s.median_ci[1])}]" if s.median_ci else "n/a"
        rows.append(
            [
                s.name,
                f"{s.n:,}",
                value(s.min),
                value(s.max),
                value(s.median),
                ci,
                value(s.mean),
                spread(s.stddev),
                _outlier_cell(s),
                _runs_cell(s),
            ]
        )
    return rows


def _distinct_summaries(comparisons: Sequence[Any]) -> list[Any]:
    """Each variant's summary once, in the order the comparisons name them."""
    summaries: list[Any] = []
    seen: set[str] = set()
    for comp in comparisons:
        for s in comp.summaries:
            if s.name not in seen:
                seen.add(s.name)
                summaries.append(s)
    return summaries


def _outlier_cell(s: Any) -> str:
    """``MILD/SEVERE`` outliers, and how many the outlier rule dropped."""
    out = f"{s.outliers_mild}/{s.outliers_severe}"
    if s.dropped:
        out += f" ({s.dropped} dropped)"
    return out


def _runs_cell(s: Any) -> str:
    """A nested variant's number of runs and the share of its variance between them ("" when not nested); its
    median and median CI are of the run medians, and say so."""
    if s.runs is None:
        return ""
    share = "" if s.between_run_share is None else f", {s.between_run_share:.0%} between runs"
    return f"{len(s.runs)} runs{share}; median, CI: of run medians"


def _run_lines(comparisons: Sequence[Any], unit: str | None = None, metric: str | None = None) -> list[str]:
    """One line per nested variant: its runs' sizes and medians."""
    lines = []
    seen: set[str] = set()
    for comp in comparisons:
        for s in comp.summaries:
            if s.runs is None or s.name in seen:
                continue
            seen.add(s.name)
            lines.append(_run_line(s, unit, metric))
    return lines


def _run_line(s: Any, unit: str | None, metric: str | None) -> str:
    """A nested variant's runs: how many, their sizes and their medians."""
    sizes = {r.n for r in s.runs}
    size_text = f"n {sizes.pop()} each" if len(sizes) == 1 else "n " + " ".join(str(r.n) for r in s.runs)
    scale = common_scale([r.median for r in s.runs], unit, metric)
    medians = " ".join(scale(r.median) for r in s.runs)
    return f"{s.name}: {len(s.runs)} runs ({size_text}), run medians {medians}"


VARIANT_HEADER = ["variant", "n", "min", "max", "median", "median CI", "mean", "stddev", "outliers m/s", "runs"]
VARIANT_ALIGN = ["l", "r", "r", "r", "r", "l", "r", "r", "l", "l"]
COMPARE_HEADER = ["candidate", "baseline", "center", "change", "CI", "p", "verdict", "notes"]
COMPARE_ALIGN = ["l", "l", "l", "r", "l", "r", "l", "l"]


def _compare_rows(
    comparisons: Sequence[Any], refs: list[list[int]], unit: str | None = None, metric: str | None = None
) -> list[list[str]]:
    rows = []
    for comp, mine in zip(comparisons, refs):
        word = verdict_word(comp.verdict, comp.delta_pct, unit, metric, comp.higher_is_better)
        rows.append(
            [
                comp.candidate,
                comp.baseline,
                _centre_label(comp),
                _change(comp),
                _ci(comp),
                _p(comp.p_value),
                word,
                " ".join(f"[{i}]" for i in mine),
            ]
        )
    return rows


def _with_adjusted_p(rule: str, comparisons: Sequence[Any], rows: list[list[str]]) -> tuple[Any, Any, Any]:
    """Markdown's comparison table (head, rows, alignment): in a family adjusted by ``rule``, the p-values the
    verdicts follow beside the unadjusted ones, under the rule's name (``p (Holm)``)."""
    if not rule:
        return COMPARE_HEADER, rows, COMPARE_ALIGN
    at, cells = COMPARE_HEADER.index("p") + 1, [format_p(c.p_adjusted) for c in comparisons]  # (no p: 1)
    return (
        [*COMPARE_HEADER[:at], f"p ({rule})", *COMPARE_HEADER[at:]],
        [[*row[:at], cell, *row[at:]] for row, cell in zip(rows, cells, strict=True)],
        [*COMPARE_ALIGN[:at], "r", *COMPARE_ALIGN[at:]],
    )


def _centre_label(comp: Any) -> str:
    """What the line's two figures are, when no metric names the line."""
    return getattr(comp, "center_kind", "") or comp.center


def estimand_text(comp: Any) -> str:
    """What the change estimates, in words (the comparison's ``estimand_label``)."""
    label = getattr(comp, "estimand_label", None)
    return str(label) if label else f"change of the {comp.center}"


def _method_lines(comparisons: Sequence[Any]) -> list[str]:
    lines = []
    for comp in comparisons:
        conf = f"{comp.confidence * 100:g}%"
        thr = f", threshold ±{comp.threshold:g}%" if comp.threshold is not None else ""
        better = "higher" if comp.higher_is_better else "lower"
        lines.append(
            f"{comp.candidate} vs {comp.baseline}: {estimand_text(comp)}; {comp.method}; {conf} confidence{thr}; "
            f"{better} is better"
        )
    return lines


def _footnote_lines(
    comparisons: Sequence[Any], notes: Footnotes, *, md: bool = False, advice: bool = True
) -> list[str]:
    """The numbered footnotes; without ``advice``, one line per finding (the text summary's)."""
    warn = _warning_numbers(comparisons, notes)
    lines = []
    for i, text in enumerate(notes.texts if advice else notes.findings, start=1):
        if md:
            lines.append(f"{i}. {'**warning:** ' if i in warn else ''}{escape.markdown(text)}")
        else:
            lines.append(escape.terminal(f"[{i}] {'warning: ' if i in warn else ''}{text}"))
    return lines


def _text(
    comparisons: Sequence[Any], unit: str | None = None, metric: str | None = None, footnotes: bool = True
) -> str:
    notes, refs = _footnotes(comparisons)
    if not footnotes:
        notes, refs = Footnotes(), [[] for _ in refs]
    lines = tables.plain(VARIANT_HEADER, _variant_rows(comparisons, unit, metric), VARIANT_ALIGN, rule=False)
    lines += map(escape.terminal, _run_lines(comparisons, unit, metric))
    lines.append("")
    lines += tables.plain(COMPARE_HEADER, _compare_rows(comparisons, refs, unit, metric), COMPARE_ALIGN, rule=False)
    lines.append("")
    lines += map(escape.terminal, _method_lines(comparisons))
    if notes.items:
        lines.append("")
        lines += _footnote_lines(comparisons, notes)
    return "\n".join(lines) + "\n"


def _console(buffer: io.StringIO, width: int = 160) -> Any:
    from rich.console import Console

    return Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        width=width,
        highlight=False,
        emoji=False,
        markup=False,
    )


def _rich(
    comparisons: Sequence[Any], unit: str | None = None, metric: str | None = None, footnotes: bool = True
) -> str:
    from rich.text import Text

    notes, refs = _footnotes(comparisons)
    if not footnotes:
        notes, refs = Footnotes(), [[] for _ in refs]
    buffer = io.StringIO()
    console = _console(buffer)
    options: dict[str, Any] = {"box": None, "header_style": "bold", "pad_edge": False}
    console.print(tables.rich_table(VARIANT_HEADER, _variant_rows(comparisons, unit, metric), VARIANT_ALIGN, **options))
    for line in _run_lines(comparisons, unit, metric):
        console.print(Text(escape.terminal(line)))
    console.print()
    rows = _compare_rows(comparisons, refs, unit, metric)
    styles = [["", "", "", "", "", "", _style(row[6]), ""] for row in rows]
    console.print(tables.rich_table(COMPARE_HEADER, rows, COMPARE_ALIGN, styles, **options))
    console.print()
    for line in _method_lines(comparisons):
        console.print(Text(escape.terminal(line), style="dim"))
    if notes.items:
        console.print()
        warn = _warning_numbers(comparisons, notes)
        for i, line in enumerate(_footnote_lines(comparisons, notes), start=1):
            console.print(Text(line, style="yellow" if i in warn else "dim"))
    return buffer.getvalue()


def _markdown(comparisons: Sequence[Any], unit: str | None = None, metric: str | None = None) -> str:
    notes, refs = _footnotes(comparisons)
    lines = tables.markdown(VARIANT_HEADER, _variant_rows(comparisons, unit, metric), VARIANT_ALIGN)
    runs = _run_lines(comparisons, unit, metric)
    if runs:
        lines.append("")
        lines += [f"- {escape.markdown(line)}" for line in runs]
    lines.append("")
    rule = family_rule(comparisons)  # (this table may be one metric's part of the family: no count)
    head, rows, align = _with_adjusted_p(rule, comparisons, _compare_rows(comparisons, refs, unit, metric))
    lines += [*tables.markdown(head, rows, align, bold=(head.index("verdict"),)), ""]
    lines += [f"- {escape.markdown(line)}" for line in _method_lines(comparisons)]
    if rule:
        lines.append(f"- p ({rule}): adjusted over every comparison shown together; the verdicts follow it")
    if notes.items:
        lines.append("")
        lines += _footnote_lines(comparisons, notes, md=True)
    return "\n".join(lines) + "\n"


def to_json_document(comparisons: Sequence[Any]) -> dict[str, Any]:
    from abstat.comparison import JSON_VERSION

    return {"version": JSON_VERSION, "comparisons": [c.to_dict() for c in comparisons]}


def _json(comparisons: Sequence[Any]) -> str:
    import json  # (off the start-up path of text output)

    return json.dumps(to_json_document(comparisons), indent=2, allow_nan=False) + "\n"


CSV_HEADER = [
    "baseline",
    "candidate",
    "n_baseline",
    "n_candidate",
    "unit",
    "center",
    "delta_pct",
    "ci_low_pct",
    "ci_high_pct",
    "confidence",
    "p_value",
    "significant",
    "verdict",
    "method",
    "warnings",
    "p_adjusted",  # (wave 21: added last, the columns before keep their places)
    "adjustment",
]


def _csv(comparisons: Sequence[Any]) -> str:
    return tables.csv_text(CSV_HEADER, [_csv_row(c.to_dict()) for c in comparisons])


def _csv_row(d: dict[str, Any]) -> list[Any]:
    """One comparison's CSV row (of its JSON form: every digit, empty where unknown)."""
    return [
        d["baseline"],
        d["candidate"],
        d["n"][0],
        d["n"][1],
        d["unit"],
        d["center"],
        _digits(d["delta_pct"]),
        *map(_digits, d["ci_pct"] or (None, None)),
        d["confidence"],
        _digits(d["p_value"]),
        "true" if d["significant"] else "false",  # as report's CSV and JSON say it
        d["verdict"],
        d["method"],
        ";".join(dict.fromkeys(w["code"] for w in d["warnings"])),
        _digits(d["p_adjusted"]),
        d["adjustment"] or "",
    ]


def _digits(value: float | None) -> str:
    """A number with every digit; empty where unknown."""
    return "" if value is None else repr(value)
