"""``abstat report --format email``: plain text for a cover letter, one answer.

The summary table within 72 columns (one line per cell when wider), a short
footer (what the cells and changes are, the family's rule, the outlier rule
and what it dropped per cell) and one line per footnote.  With ``--ministat``
(only then), one block per compared cell exactly as ``ministat -A`` prints
it, computed on exactly the samples of the table (after the outlier rule),
each under a ``$ ministat -A ...`` line and indented by two spaces (when the
outlier rule dropped values, a ``# values kept by ...`` comment above that
line says the block is not of the files as given, and how many of each were
kept); a block whose verdict differs from the table's says so on the block itself.  A cell
given as summary statistics (``NAME=n:mean:stddev``) has no samples, so
ministat's Min, Max and Median are unknown: its block is a line saying so,
not invented numbers.
"""

from __future__ import annotations

import os
import shlex
import textwrap
from typing import Any

from abstat.errors import UsageError
from abstat.render import escape, terminal
from abstat.render.matrix import EMAIL_WIDTH, long_table, plain_table, title
from abstat.report.matrix import Cell, Report
from abstat.stats.student import CONFIDENCE_LEVELS

INDENT = "  "


def ministat_command(names: list[str]) -> str:
    """``ministat -A milan-hcall-pv64-{before,after}`` (brace form when it fits)."""
    if len(names) == 2 and all(_plain(n) for n in names):
        braced = _brace_form(*names)
        if braced is not None:
            return f"ministat -A {braced}"
    return "ministat -A " + " ".join(shlex.quote(n) for n in names)


def _brace_form(first: str, second: str) -> str | None:
    """``PREFIX{A,B}SUFFIX`` for two names with a common prefix, or None."""
    prefix = os.path.commonprefix([first, second])
    suffix = os.path.commonprefix([first[len(prefix) :][::-1], second[len(prefix) :][::-1]])[::-1]
    a = first[len(prefix) : len(first) - len(suffix)]
    b = second[len(prefix) : len(second) - len(suffix)]
    if prefix and a and b and "," not in a + b:
        return f"{prefix}{{{a},{b}}}{suffix}"
    return None


def _plain(name: str) -> bool:
    return shlex.quote(name) == name and not any(c in name for c in "{}")


def ministat_block(base: Cell, cell: Cell, confidence: float, outliers: str = "none") -> str:
    """The ``ministat -A`` output for baseline vs cell, with its command line."""
    from abstat.ministat import render_report

    names = [escape.terminal(base.name), escape.terminal(cell.name)]
    summaries = [c for c in (base, cell) if c.sample_set.summary is not None]
    if summaries:
        return _no_block_for_summaries(names, summaries)
    small = [c for c in (base, cell) if c.n < 3]
    if small:
        return _no_block_for_few(names, small)
    values: list[Any] = [kept_values(c, outliers) for c in (base, cell)]  # ministat takes sequences
    text = render_report(values, names=names, confidence=confidence, plot=False, stats=True, dialect="classic")
    lines = [f"$ {ministat_command(names)}", *text.rstrip("\n").split("\n")]
    block = "\n".join((INDENT + line).rstrip() if line else "" for line in lines)
    return _filtered_heading((base, cell), values, outliers) + block + _disagreement_lines(text, cell)


def _filtered_heading(cells: tuple[Cell, Cell], values: list[Any], outliers: str) -> str:
    """The comment above a block's ``$`` line when the outlier rule dropped values of either cell: the
    block is of the values kept, so ``ministat -A`` on the files as given prints other numbers (how many
    of each were kept); "" when nothing was dropped (newcomer22's item 4)."""
    if not any(c.dropped for c in cells):
        return ""
    from abstat.report.table import OUTLIER_RULES

    kept = ", ".join(
        f"{symbol} {len(kept)} of {len(kept) + c.dropped}"
        for symbol, c, kept in zip(("x", "+"), cells, values, strict=True)  # as the block's legend names them
    )
    text = (
        f"values kept by {OUTLIER_RULES.get(outliers, outliers)}: {kept}; "
        "on the files as given the command prints other numbers"
    )
    wrapped = textwrap.wrap(
        text, EMAIL_WIDTH, initial_indent=INDENT + "# ", subsequent_indent=INDENT + "# ", break_on_hyphens=False
    )
    return "\n".join(wrapped) + "\n"


def _disagreement_lines(ministat_text: str, cell: Cell) -> str:
    """The block's ``!`` lines when ministat's verdict differs from the table's ("" when they agree)."""
    disagreement = block_disagreement(ministat_text, cell)
    if not disagreement:
        return ""
    return "\n" + "\n".join(
        textwrap.wrap(
            disagreement,
            EMAIL_WIDTH,
            initial_indent=INDENT + "! ",
            subsequent_indent=INDENT + "! ",
            break_on_hyphens=False,
        )
    )


def _no_block_for_summaries(names: list[str], summaries: list[Cell]) -> str:
    """Why a cell given as summary statistics has no block (ministat needs the samples)."""
    what = escape.terminal(" and ".join(c.name for c in summaries))
    verb = "are" if len(summaries) > 1 else "is"
    text = (
        f"(no ministat -A block for {names[1]} vs {names[0]}: {what} {verb} summary "
        "statistics n:mean:stddev only; ministat needs the samples for Min, Max and Median)"
    )
    return "\n".join(
        textwrap.wrap(
            text,
            EMAIL_WIDTH,
            initial_indent=INDENT,
            subsequent_indent=INDENT + " ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    )


def _no_block_for_few(names: list[str], small: list[Cell]) -> str:
    """The command, and why there is no block: ministat(1) refuses a file of fewer than 3 values (no invented
    block)."""
    return "\n".join(
        [
            f"{INDENT}$ {ministat_command(names)}",
            *(
                f"{INDENT}(no block: {escape.terminal(c.name)} has {c.n} data point{'s' if c.n != 1 else ''}; "
                "ministat needs at least 3)"
                for c in small
            ),
        ]
    )


def kept_values(cell: Cell, outliers: str) -> list[float]:
    """The cell's samples after the report's outlier rule: those its n, centre and change use."""
    from abstat.comparison.centres import kept_runs

    runs = kept_runs(cell.sample_set.comparison_data(), outliers) or []
    return [float(v) for run in runs for v in run]


def block_disagreement(ministat_text: str, cell: Cell) -> str:
    """The warning a block carries when ministat's verdict differs from the table's (else "")."""
    found = "Difference at" in ministat_text
    table = bool(cell.significant)
    if found == table or cell.comparison is None or cell.comparison.verdict == "cannot judge":
        return ""
    said = "a difference" if found else "no difference"
    what = "significant" if table else "not significant"
    return (
        f"ministat (t-test of means, unadjusted) finds {said}; the table's "
        f"{cell.comparison.estimand_label.split(' (')[0]}, after the family's rule, is {what}."
    )


def render_email(report: Report, *, ministat: bool = False) -> str:
    """The cover letter's text (see the module); ``ministat``: with the ``ministat -A`` blocks."""
    level = round(report.confidence * 100, 6)
    if ministat and level not in CONFIDENCE_LEVELS:
        raise UsageError(
            f"{{ministat}}: ministat -A blocks need a confidence of "
            f"{', '.join(f'{x:g}' for x in CONFIDENCE_LEVELS)} (got {level:g})",
            fields=["ministat"],
        )
    text = _letter(report)
    pairs = report.pairs()
    if not ministat or not pairs:
        return text + "\n"
    text += _median_note(pairs)
    parts = [text] + [ministat_block(base, cell, level, report.outliers) for base, cell in pairs]
    return "\n\n".join(parts) + "\n"


def _median_note(pairs: list[tuple[Cell, Cell]]) -> str:
    """Where a block's N is even, how ministat's Median differs from the table's ("" when none is)."""
    with_samples = [c for pair in pairs if all(c.sample_set.summary is None for c in pair) for c in pair]
    if not any(cell.n % 2 == 0 for cell in with_samples):
        return ""
    return "\n" + "\n".join(
        textwrap.wrap(
            "ministat's Median is the upper middle value when N is even; the table's is the lower one "
            "(integer data) or their mean.",
            EMAIL_WIDTH,
        )
    )


def _letter(report: Report) -> str:
    """Title, table (the ``--columns`` layout, or one line per cell when wider than 72), short footer,
    a footnote per kind of warning, wrapped when longer than a line."""
    table = plain_table(report)
    if report.columns_label:
        from abstat.render.pivot import pivot_lines

        table = "\n".join(pivot_lines(report, report.columns_label))
    if max(terminal.columns(line) for line in table.splitlines()) > EMAIL_WIDTH:
        table = long_table(report)
    lines = [*textwrap.wrap(escape.terminal(title(report)), EMAIL_WIDTH, break_on_hyphens=False), "", table, ""]
    footer = report.short_footer()
    for text in [*footer[:1], *estimand_lines(report), *footer[1:]]:
        lines += textwrap.wrap(escape.terminal(text), EMAIL_WIDTH, break_on_hyphens=False)
    for number, text in enumerate(report.short_footnotes, 1):  # a finding longer than a line is wrapped, not cut
        lines += textwrap.wrap(
            f"[{number}] {escape.terminal(text)}", EMAIL_WIDTH, break_on_hyphens=False, subsequent_indent="    "
        )
    return "\n".join(lines)


def estimand_lines(report: Report) -> list[str]:
    """What each change the short footer names computes, as the other formats' captions say it: one line
    per name whose caption explains it (``Hodges-Lehmann ratio: median of the candidate/baseline ratios
    after spreading tied values over their grid cells.``), with the cells of each reading when a name has
    several (tied cells and untied ones), as the text footer lists them."""
    where: dict[str, list[str]] = {}  # full caption -> its cells
    for cell in report.comparisons:
        caption = cell.comparison.estimand_label
        place = "/".join(v for v in cell.row if v) or cell.column
        if " (" in caption and place not in where.setdefault(caption, []):
            where[caption].append(place)
    readings: dict[str, list[tuple[str, str]]] = {}  # short name -> (what it computes, in which cells)
    for caption in sorted(where):
        name, _, reading = caption[:-1].partition(" (")
        readings.setdefault(name, []).append((reading, _places(where[caption])))
    return [
        f"{name}: " + "; ".join(r + (f" ({cells})" if len(said) > 1 else "") for r, cells in said) + "."
        for name, said in readings.items()
    ]


def _places(cells: list[str]) -> str:
    return ", ".join(cells[:6]) + (f" and {len(cells) - 6} more" if len(cells) > 6 else "")
