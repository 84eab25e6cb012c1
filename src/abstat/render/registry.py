"""One registry of output formats for ``abstat report`` and ``abstat compare``.

A :class:`Renderer` names a format, the escape its cells get (the table
writers apply it) and how it renders each kind of result: a report matrix
(:class:`abstat.report.matrix.Report`) and/or a list of comparisons.  The
commands and the public API look formats up here instead of keeping their
own if-chains; a format one kind of result does not have is refused with
the formats it does have.

    render_report(report, "markdown")
    render_comparisons(comparisons, "csv")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from abstat.errors import UsageError
from abstat.render import escape


@dataclass(frozen=True)
class Renderer:
    name: str
    escape: Callable[[Any], Any]
    report: Callable[..., str] | None = None  # (report, color=, width=, ascii_only=) -> text
    comparisons: Callable[..., str] | None = None  # (comparisons, color=, unit=, metric=, footnotes=) -> text


def _matrix(function: str) -> Callable[..., str]:
    def call(report: Any, *, color: bool = False, width: int = 100, ascii_only: bool = False) -> str:
        from abstat.render import matrix

        if function == "render_rich":
            return matrix.render_rich(report, width=width, color=color, ascii_only=ascii_only)
        return getattr(matrix, function)(report)

    return call


def _text(report: Any, **_: Any) -> str:
    from abstat.render.pivot import render_text

    return render_text(report)


def _email(report: Any, *, ministat: bool = False, **_: Any) -> str:
    from abstat.render.email import render_email

    return render_email(report, ministat=ministat)


def _html(report: Any, *, plots: str = "auto", **_: Any) -> str:
    from abstat.render.html import render_html

    return render_html(report, plots=plots)


def _compare(function: str) -> Callable[..., str]:
    def call(
        comparisons: Sequence[Any],
        *,
        color: bool = False,
        unit: str | None = None,
        metric: str | None = None,
        footnotes: bool = True,
    ) -> str:
        from abstat.render import compare_formats

        if function == "text":
            return (compare_formats._rich if color else compare_formats._text)(comparisons, unit, metric, footnotes)
        if function == "markdown":
            return compare_formats._markdown(comparisons, unit, metric)
        return getattr(compare_formats, f"_{function}")(comparisons)

    return call


def _ci(fmt: str, comparisons: bool = False) -> Callable[..., str]:
    def call(data: Any, *, unit: str | None = None, metric: str | None = None, **_: Any) -> str:
        from abstat.render import ci_formats

        if comparisons:
            return ci_formats.render_comparisons(data, fmt, unit=unit, metric=metric)
        return ci_formats.render_report(data, fmt)

    return call


RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        Renderer("table", escape.terminal, report=_matrix("render_rich")),
        Renderer("text", escape.terminal, report=_text, comparisons=_compare("text")),
        Renderer("markdown", escape.markdown, report=_matrix("render_markdown"), comparisons=_compare("markdown")),
        Renderer("email", escape.plain, report=_email),
        Renderer("json", lambda cell: cell, report=_matrix("render_json"), comparisons=_compare("json")),
        Renderer("csv", escape.csv_cell, report=_matrix("render_csv"), comparisons=_compare("csv")),
        Renderer("html", escape.html, report=_html),
        Renderer("github", escape.markdown, report=_ci("github"), comparisons=_ci("github", comparisons=True)),
        Renderer("gitlab", escape.terminal, report=_ci("gitlab"), comparisons=_ci("gitlab", comparisons=True)),
    )
}

REPORT_FORMATS = tuple(name for name, r in RENDERERS.items() if r.report is not None)
COMPARISON_FORMATS = tuple(name for name, r in RENDERERS.items() if r.comparisons is not None)


def _lookup(fmt: str, kind: str, known: tuple[str, ...]) -> Renderer:
    renderer = RENDERERS.get(fmt)
    if renderer is None or getattr(renderer, kind) is None:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(known)})")
    return renderer


def render_report(report: Any, fmt: str, **options: Any) -> str:
    return _lookup(fmt, "report", REPORT_FORMATS).report(report, **options)  # type: ignore[misc]


def render_comparisons(comparisons: Sequence[Any], fmt: str, **options: Any) -> str:
    return _lookup(fmt, "comparisons", COMPARISON_FORMATS).comparisons(comparisons, **options)  # type: ignore[misc]
