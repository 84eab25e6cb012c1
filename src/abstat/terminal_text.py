"""Text from data made safe for a terminal or a CI log (:func:`terminal`; the other targets' escapes are
in :mod:`abstat.render.escape`, which re-exports this one).  A leaf module of the standard library only,
so that any layer may show a file name in an error (``abstat ministat``'s too) as every command does.
"""

from __future__ import annotations

import functools
import re


@functools.cache
def _unsafe() -> re.Pattern[str]:
    """C0 controls, DEL, C1 controls, U+2028/2029, bidi embeddings/overrides/isolates, lone surrogates:
    all outside ``str.isprintable``, so text that is printable needs no search (and start-up compiles
    no 64K-character set, ~0.4 ms)."""
    return re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(match: re.Match[str]) -> str:
    """The escape of one unsafe character; a lone surrogate U+DC80-U+DCFF (a byte that was not UTF-8, as
    ``surrogateescape`` keeps it) shows as that byte, ``\\xff``, as names decoded with ``backslashreplace``
    show (attack19 L3: one file name was shown two ways)."""
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@functools.cache
def _ci_command() -> re.Pattern[str]:
    """GitHub Actions reads a line starting (after blanks) with ``::`` or ``##[`` as a workflow command;
    compiled for the first text that starts (after blanks) with ``:`` or ``#``."""
    return re.compile(r"\A(\s*)([:#])(?=:[A-Za-z-]|#\[)")


def terminal(text: object) -> str:
    """``text`` with every control character and every other character Python does not print (format
    characters such as U+200B, U+200E, U+FEFF and the tags, spaces other than ASCII's) shown as an escape
    (``\\x1b``, ``\\n``, ``\\u200e``), and a workflow
    command's opening (``::``, ``##[``) at its start escaped too (``\\x3a:``): data that starts a line
    of a CI log never speaks to the CI system."""
    shown = str(text)
    if not shown.isprintable():
        shown = _unsafe().sub(visible, shown)
        if not shown.isprintable():  # invisible format characters (U+200B, LRM, U+FEFF, tags), odd spaces
            shown = "".join(c if c.isprintable() or c == " " else _escaped(c) for c in shown)
    if shown.lstrip()[:1] not in (":", "#"):  # lstrip's white space is the pattern's \s (str.isspace)
        return shown
    return _ci_command().sub(_ci_visible, shown)


def _ci_visible(match: re.Match[str]) -> str:
    return match.group(1) + f"\\x{ord(match.group(2)):02x}"
