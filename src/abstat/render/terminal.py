"""What a terminal gets: colour or not, and text it can encode.

Colour follows, in this order: an explicit ``--color always|never``;
``NO_COLOR`` (any non-empty value: no colour, https://no-color.org);
``FORCE_COLOR`` (any non-empty value: colour even into a pipe); else colour
only when the stream is a terminal.  :func:`write` folds our non-ASCII marks
(µ, →, box lines) to ASCII for a stream that cannot encode them
(``PYTHONIOENCODING=ascii``, a C locale).
"""

from __future__ import annotations

import os
from typing import TextIO

from abstat.render.units import fits

# abstat's own marks (→ µ ± ...): one column each, neither wide nor combining, so text holding no other
# non-ASCII character needs no look-up in unicodedata (start-up: a compare's output has arrows)
ONE_COLUMN = frozenset("→←µ±×–—…≈≤≥·°")


def is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def color_wanted(stream: object, choice: str = "auto") -> bool:
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal(stream)


def can_encode(stream: object, text: str) -> bool:
    return fits(stream, text) == text


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: wide and full-width characters (CJK, East Asian Width W/F) take
    two, combining marks and zero-width format characters (ZWJ, ZWSP...) none, others one (the soft hyphen
    too: terminals draw it)."""
    if text.isascii() or all(char < "\x80" or char in ONE_COLUMN for char in text):
        return len(text)
    import unicodedata  # here: abstat's own text does not need it (start-up)

    total = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf") and char != "\xad":
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def ljust(text: str, width: int) -> str:
    """``text`` padded with spaces on the right to ``width`` terminal columns."""
    return text + " " * max(0, width - columns(text))


def rjust(text: str, width: int) -> str:
    """``text`` padded with spaces on the left to ``width`` terminal columns."""
    return " " * max(0, width - columns(text)) + text


def write(stream: TextIO, text: str) -> None:
    """``text`` to ``stream``, in ASCII if the stream cannot encode it."""
    stream.write(fits(stream, text))
