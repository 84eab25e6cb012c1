"""Table writers: one grid of strings, one escape per target, applied here.

A grid is headers, body rows (lists of strings) and alignments ('l'/'r').
Every cell passes through the target's escape (:mod:`abstat.render.escape`)
in this module and nowhere else, whether it holds a label from the data or
a number abstat wrote.
"""

from __future__ import annotations

import io
from typing import Any, Sequence

from abstat.render import escape
from abstat.render.terminal import ONE_COLUMN, columns, ljust, rjust


def pad(cells: Sequence[str], widths: Sequence[int], align: Sequence[str]) -> str:
    parts = [rjust(c, w) if a == "r" else ljust(c, w) for c, w, a in zip(cells, widths, align)]
    return "  ".join(parts).rstrip()


def escaped(row: Sequence[str]) -> Sequence[str]:
    """``row`` with control characters escaped: ``row`` itself when none of its cells had any (a report of
    10^5 revisions x metrics rows held a copy of every row while padding)."""
    cells = [escape.terminal(c) for c in row]
    return row if all(new is old for new, old in zip(cells, row)) else cells


def measured(row: Sequence[str]) -> tuple[Sequence[str], list[int], bool]:
    """``escaped(row)``, each cell's terminal columns, and whether the row is narrow (every character
    one column: :func:`pad_narrow` may pad it).  A row of printable characters of one column each with
    no ``:`` or ``#`` (what :func:`abstat.render.escape.terminal` may change) is answered from its
    cells joined, not cell by cell (a report of 10^5 revisions x metrics rows)."""
    joined = "".join(row)
    if joined.isprintable() and ":" not in joined and "#" not in joined and _narrow(joined):
        return row, list(map(len, row)), True
    cells = escaped(row)
    return cells, list(map(columns, cells)), False


def _narrow(text: str) -> bool:
    """Every character of ``text`` takes one column (ASCII, or abstat's marks)."""
    return text.isascii() or _NARROW.issuperset(text)


_NARROW = frozenset(map(chr, range(128))) | ONE_COLUMN


def narrow_format(widths: Sequence[int], align: Sequence[str]) -> str:
    """The format that :func:`pad` is to narrow rows (``format(*cells).rstrip()``)."""
    return "  ".join(f"{{:{'>' if a == 'r' else '<'}{w}}}" for w, a in zip(widths, align))


def plain(
    headers: Sequence[str], body: Sequence[Sequence[str]], align: Sequence[str], *, rule: bool = True
) -> list[str]:
    """Space-padded columns (terminal, e-mail, text file), control characters escaped; widths in terminal
    columns (a CJK character takes two, a combining mark none)."""
    rows = [escaped(row) for row in [headers, *body]]
    widths = [max(columns(r[i]) for r in rows) for i in range(len(headers))]
    lines = [pad(rows[0], widths, align)]
    if rule:
        lines.append(pad(["-" * w for w in widths], widths, align))
    lines += [pad(r, widths, align) for r in rows[1:]]
    return lines


def markdown(
    headers: Sequence[str], body: Sequence[Sequence[str]], align: Sequence[str], *, bold: Sequence[int] = ()
) -> list[str]:
    """A GitHub-flavoured Markdown table; ``bold``: column indexes set in bold."""

    def cell(index: int, text: str) -> str:
        escaped = escape.markdown(text)
        return f"**{escaped}**" if index in bold and escaped else escaped

    lines = [
        "| " + " | ".join(escape.markdown(h) for h in headers) + " |",
        "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|",
    ]
    lines += ["| " + " | ".join(cell(i, c) for i, c in enumerate(row)) + " |" for row in body]
    return lines


def csv_text(headers: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    """CSV with formula-looking text cells neutralised (numbers kept)."""
    import csv  # here: only CSV output needs it (start-up)

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([escape.csv_cell(h) for h in headers])
    for row in body:
        writer.writerow([escape.csv_cell(c) for c in row])
    return buffer.getvalue()


def csv_row(writer: Any, row: Sequence[Any]) -> None:
    """One row through an existing ``csv.writer``, escaped."""
    writer.writerow([escape.csv_cell(c) for c in row])


def rich_table(
    headers: Sequence[str],
    body: Sequence[Sequence[str]],
    align: Sequence[str],
    styles: Sequence[Sequence[str]] | None = None,
    *,
    no_wrap: bool = False,
    **options: Any,
) -> Any:
    """A rich ``Table`` of ``Text`` cells (never markup), control characters escaped."""
    from rich.table import Table
    from rich.text import Text

    table = Table(**options)
    for header, a in zip(headers, align):
        table.add_column(Text(escape.terminal(header)), justify="right" if a == "r" else "left", no_wrap=no_wrap)
    for index, row in enumerate(body):
        row_styles = styles[index] if styles else [""] * len(row)
        table.add_row(*(Text(escape.terminal(c), style=s) for c, s in zip(row, row_styles)))
    return table
