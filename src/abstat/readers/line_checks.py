"""Checks of a sample file's line that refuse what would be read wrongly in silence (split from
:mod:`abstat.readers.text`, imported only for lines that need them)."""

from __future__ import annotations

import re

from abstat.errors import InputError

_AMBIGUOUS_COMMA = re.compile(r"(?:^|[^\d.eE])([+-]?\d+,\d[\d,.]*)")


def refuse_unicode_space(line: str, name: str, number: int) -> None:
    """Fields are separated by ASCII spaces, tabs and commas: a no-break space inside ``1 234`` would
    otherwise silently split one value in two."""
    for char in line:
        if not char.isascii() and (char.isspace() or char in "\u200b\u2060\ufeff"):
            raise InputError(
                f"non-ASCII space U+{ord(char):04X} in the line: separate values with ASCII spaces, tabs or commas",
                path=name,
                line=number,
            )


def refuse_ambiguous_comma(raw: str, name: str, number: int) -> None:
    """A comma between an integer and a digit (``12,5``, ``1,234``) under the default delimiters: a decimal
    comma, a thousands separator or two columns?  Read as columns it gave 12 and 1 (attack18 M1): refused,
    also after text (``x=12,5``, ``time: 12,5``).  ``1.5,2.3`` (a decimal point before it) and ``12, 5`` are
    columns; ``-d ','`` says so for any line."""
    found = _AMBIGUOUS_COMMA.search(raw)
    if found:
        shown = found.group(1) if len(found.group(1)) <= 40 else found.group(1)[:37] + "..."
        raise InputError(
            f"{shown!r}: a decimal comma, a thousands separator or two columns? Write decimals with '.', "
            "or give -d ',' to read comma-separated columns",
            path=name,
            line=number,
        )
