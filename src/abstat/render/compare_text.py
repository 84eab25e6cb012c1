"""Render comparisons: a human table (plain or coloured), Markdown, JSON, CSV.

``render(comparisons, fmt, color)`` returns the text; it never prints.
The JSON form is the documented contract of ``docs/json.md``.
Warnings become numbered footnotes in text and Markdown; a warning shared
by several comparisons (e.g. about the baseline) is listed once.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

FORMATS = ("text", "markdown", "json", "csv")
VERDICT_STYLE = {
    "faster": "bold green",
    "slower": "bold red",
    "equivalent": "cyan",
    "no difference proven": "yellow",
}


def _g(value: float | None, digits: int = 6) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return f"{value:.{digits}g}"


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "unbounded" if value is not None and not math.isnan(value) else "n/a"
    if value == 0 or 0.1 <= abs(value) < 1e6:
        return f"{value:+.2f}%"
    return f"{value:+.3g}%"


def _ci(ci: Sequence[float]) -> str:
    lo, hi = ci
    if math.isnan(lo) or math.isnan(hi):
        return "none"  # cannot judge: no bounds at all, not fake infinite ones
    lo_s = _pct(lo) if math.isfinite(lo) else "-inf"
    hi_s = _pct(hi) if math.isfinite(hi) else "+inf"
    return f"[{lo_s}, {hi_s}]"


def _p(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value < 1e-16:
        return "<1e-16"
    return f"{value:.2g}"


def _footnotes(comparisons: Sequence[Any]) -> tuple[list[str], list[list[int]]]:
    """Unique messages (warnings, then notes) and, per comparison, their numbers."""
    messages: list[str] = []
    refs: list[list[int]] = []
    for comp in comparisons:
        mine = []
        for item in list(comp.warnings) + list(comp.notes):
            text = item.message
            if text not in messages:
                messages.append(text)
            mine.append(messages.index(text) + 1)
        refs.append(sorted(set(mine)))
    return messages, refs


def _warning_numbers(comparisons: Sequence[Any], messages: list[str]) -> set[int]:
    return {messages.index(w.message) + 1 for c in comparisons for w in c.warnings}


def _variant_rows(comparisons: Sequence[Any]) -> list[list[str]]:
    rows = []
    seen: set[str] = set()
    for comp in comparisons:
        for s in comp.summaries:
            if s.name in seen:
                continue
            seen.add(s.name)
            if s.kind == "summary":
                rows.append([s.name, str(s.n), "-", "-", "-", "-", _g(s.mean), _g(s.stddev), "-", "summary"])
                continue
            ci = f"[{_g(s.median_ci[0])}, {_g(s.median_ci[1])}]" if s.median_ci else "n/a"
            out = f"{s.outliers_mild}/{s.outliers_severe}"
            if s.dropped:
                out += f" ({s.dropped} dropped)"
            extra = ""
            if s.runs is not None:
                share = "" if s.between_run_share is None else f", {s.between_run_share:.0%} between runs"
                extra = f"{len(s.runs)} runs{share}"
            rows.append(
                [s.name, str(s.n), _g(s.min), _g(s.max), _g(s.median), ci, _g(s.mean), _g(s.stddev), out, extra]
            )
    return rows


def _run_lines(comparisons: Sequence[Any]) -> list[str]:
    """One line per nested variant: its runs' sizes and medians."""
    lines = []
    seen: set[str] = set()
    for comp in comparisons:
        for s in comp.summaries:
            if s.runs is None or s.name in seen:
                continue
            seen.add(s.name)
            sizes = {r.n for r in s.runs}
            size_text = f"n {sizes.pop()} each" if len(sizes) == 1 else "n " + " ".join(str(r.n) for r in s.runs)
            medians = " ".join(_g(r.median) for r in s.runs)
            lines.append(f"{s.name}: {len(s.runs)} runs ({size_text}), run medians {medians}")
    return lines


VARIANT_HEADER = ["variant", "n", "min", "max", "median", "median CI", "mean", "stddev", "outliers m/s", "runs"]
COMPARE_HEADER = ["candidate", "baseline", "center", "change", "CI", "p", "verdict", "notes"]


def _compare_rows(comparisons: Sequence[Any], refs: list[list[int]]) -> list[list[str]]:
    rows = []
    for comp, mine in zip(comparisons, refs):
        rows.append(
            [
                comp.candidate,
                comp.baseline,
                comp.center,
                _pct(comp.delta_pct),
                _ci(comp.ci_pct),
                _p(comp.p_value),
                comp.verdict,
                " ".join(f"[{i}]" for i in mine),
            ]
        )
    return rows


def _method_lines(comparisons: Sequence[Any]) -> list[str]:
    lines = []
    for comp in comparisons:
        conf = f"{comp.confidence * 100:g}%"
        thr = f", threshold ±{comp.threshold:g}%" if comp.threshold is not None else ""
        better = "higher" if comp.higher_is_better else "lower"
        lines.append(
            f"{comp.candidate} vs {comp.baseline}: {comp.method}; {conf} confidence{thr}; {better} is better"
        )
    return lines


def _plain_table(header: list[str], rows: list[list[str]]) -> list[str]:
    numeric = {i for i, h in enumerate(header) if h in ("n", "min", "max", "median", "mean", "stddev", "change", "p")}
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    out = []
    for row in [header, *rows]:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells).rstrip())
    return out


def _text(comparisons: Sequence[Any]) -> str:
    messages, refs = _footnotes(comparisons)
    lines = _plain_table(VARIANT_HEADER, _variant_rows(comparisons))
    lines += _run_lines(comparisons)
    lines.append("")
    lines += _plain_table(COMPARE_HEADER, _compare_rows(comparisons, refs))
    lines.append("")
    lines += _method_lines(comparisons)
    if messages:
        lines.append("")
        warn = _warning_numbers(comparisons, messages)
        for i, text in enumerate(messages, start=1):
            lines.append(f"[{i}] {'warning: ' if i in warn else ''}{text}")
    return "\n".join(lines) + "\n"


def _rich(comparisons: Sequence[Any]) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    messages, refs = _footnotes(comparisons)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=160)
    variants = Table(box=None, header_style="bold", pad_edge=False)
    for h in VARIANT_HEADER:
        variants.add_column(h, justify="right" if h in ("n", "min", "max", "median", "mean", "stddev") else "left")
    for row in _variant_rows(comparisons):
        variants.add_row(*row)
    console.print(variants)
    for line in _run_lines(comparisons):
        console.print(Text(line))
    console.print()
    table = Table(box=None, header_style="bold", pad_edge=False)
    for h in COMPARE_HEADER:
        table.add_column(h, justify="right" if h in ("change", "p") else "left")
    for comp, row in zip(comparisons, _compare_rows(comparisons, refs)):
        row_cells: list[Any] = list(row)
        row_cells[6] = Text(row[6], style=VERDICT_STYLE.get(comp.verdict, ""))
        table.add_row(*row_cells)
    console.print(table)
    console.print()
    for line in _method_lines(comparisons):
        console.print(Text(line, style="dim"))
    if messages:
        console.print()
        warn = _warning_numbers(comparisons, messages)
        for i, text in enumerate(messages, start=1):
            style = "yellow" if i in warn else "dim"
            console.print(Text(f"[{i}] {'warning: ' if i in warn else ''}{text}", style=style))
    return buffer.getvalue()


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(comparisons: Sequence[Any]) -> str:
    messages, refs = _footnotes(comparisons)

    def table(header: list[str], rows: list[list[str]]) -> list[str]:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
        return out

    lines = table(VARIANT_HEADER, _variant_rows(comparisons))
    runs = _run_lines(comparisons)
    if runs:
        lines.append("")
        lines += [f"- {_md_escape(line)}" for line in runs]
    lines.append("")
    rows = _compare_rows(comparisons, refs)
    for row in rows:
        row[6] = f"**{row[6]}**"
    lines += table(COMPARE_HEADER, rows)
    lines.append("")
    lines += [f"- {line}" for line in _method_lines(comparisons)]
    if messages:
        lines.append("")
        warn = _warning_numbers(comparisons, messages)
        for i, text in enumerate(messages, start=1):
            lines.append(f"{i}. {'**warning:** ' if i in warn else ''}{_md_escape(text)}")
    return "\n".join(lines) + "\n"


def to_json_document(comparisons: Sequence[Any]) -> dict[str, Any]:
    from abstat.comparison import JSON_VERSION

    return {"version": JSON_VERSION, "comparisons": [c.to_dict() for c in comparisons]}


def _json(comparisons: Sequence[Any]) -> str:
    return json.dumps(to_json_document(comparisons), indent=2, allow_nan=False) + "\n"


CSV_HEADER = [
    "baseline", "candidate", "n_baseline", "n_candidate", "unit", "center", "delta_pct",
    "ci_low_pct", "ci_high_pct", "confidence", "p_value", "significant", "verdict", "method", "warnings",
]


def _csv(comparisons: Sequence[Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for c in comparisons:
        d = c.to_dict()
        writer.writerow(
            [
                d["baseline"], d["candidate"], d["n"][0], d["n"][1], d["unit"], d["center"],
                "" if d["delta_pct"] is None else repr(d["delta_pct"]),
                "" if d["ci_pct"][0] is None else repr(d["ci_pct"][0]),
                "" if d["ci_pct"][1] is None else repr(d["ci_pct"][1]),
                d["confidence"], "" if d["p_value"] is None else repr(d["p_value"]),
                "yes" if d["significant"] else "no", d["verdict"], d["method"],
                ";".join(w["code"] for w in d["warnings"]),
            ]
        )
    return buffer.getvalue()


def render(comparisons: Sequence[Any], fmt: str = "text", color: bool = False) -> str:
    """The comparisons as text in one of :data:`FORMATS`."""
    if fmt == "text":
        return _rich(comparisons) if color else _text(comparisons)
    if fmt == "markdown":
        return _markdown(comparisons)
    if fmt == "json":
        return _json(comparisons)
    if fmt == "csv":
        return _csv(comparisons)
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
