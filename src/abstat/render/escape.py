"""One escape function per output target, for text that comes from data.

File names, labels, experiment and variant names, commands, machine records
and e-mails are data: they may hold ANSI/OSC escape sequences, newlines,
Markdown or HTML markup, spreadsheet formulas or bytes that are not UTF-8
(kept by Python as lone surrogates).  The table writers (``render/tables.py``)
apply the function of their target to every cell; other renderers call it
where a data string meets their output.

* :func:`terminal`: control characters (C0, DEL, C1, line and paragraph
  separators, bidirectional overrides) and lone surrogates become visible
  ``\\xNN``/``\\uNNNN`` escapes, so nothing can move the cursor, set the
  title or break a line of a table; a leading ``::`` or ``##[`` (a GitHub
  Actions workflow command) is escaped as ``\\x3a:`` / ``\\x23#[``.
* :func:`markdown`: :func:`terminal`, then GitHub-flavoured Markdown's
  specials (``\\ ` * _ [ ] | # ~``) backslash-escaped and ``< > &`` as
  entities: no raw HTML (``<img onerror>``), no link (``[l](javascript:)``),
  no autolink; and a zero-width space (``&#8203;``) after every ``@``, between
  ``:`` and ``//`` and between ``www`` and ``.``: GitHub links mentions
  (``@name``) and GFM's extended autolinks (``https://``, ``www.``,
  ``a@b.c``) in the rendered text, where a backslash or an entity
  (``\\@``, ``&#64;``) is gone already, so only a character that stays
  breaks them.
* :func:`csv_cell`: OWASP's rule against formula injection: a text cell
  starting with ``= + - @``, tab or carriage return gets a leading ``'``;
  numbers (``-15.2``, ``-1e-05``) stay numbers; control characters as
  :func:`terminal`.
* :func:`html`: :func:`html.escape` with quotes, after replacing lone
  surrogates and control characters.
* :func:`json_text`: a document as strict JSON (RFC 8259 has no NaN or
  infinities: such numbers become null, so ``jq`` and every strict parser
  read what abstat writes).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from abstat.terminal_text import terminal, visible as _visible  # noqa: F401 (terminal: one of this module's functions)


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|#~"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


@functools.cache
def _gfm_link() -> re.Pattern[str]:
    """Where a zero-width space goes: after ``@`` (a mention, an e-mail or ``mailto:`` autolink), between
    ``:`` and ``//`` (``https://``, ``ftp://``) and between ``www`` and ``.`` (in any case, as GitHub reads
    it); compiled for the first text holding ``@``, ``://`` or ``w.``."""
    return re.compile(r"(@)|(?<=:)(?=//)|(?<=[wW]{3})(?=\.)")


def markdown(text: object) -> str:
    """``text`` safe inside a Markdown table cell, list item or heading: no markup, no mention, no link."""
    shown = terminal(text).translate(_MD_SPECIAL)
    if "@" in shown or "://" in shown or "w." in shown or "W." in shown:
        shown = _gfm_link().sub("\\1&#8203;", shown)
    return shown


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet evaluates as a formula (OWASP), whose control characters
    (ESC, newlines) are shown as escapes as :func:`terminal` does (a CSV file is read on terminals and in
    CI logs too); non-strings and numeric strings are returned unchanged."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + terminal(value)
        return value
    return terminal(value)


def _no_surrogates(text: str) -> str:
    return re.sub("[\ud800-\udfff]", _visible, text)


def html(text: object) -> str:
    """``text`` as HTML text or attribute value."""
    if type(text) is str and text.isprintable() and _HTML_OR_CI.isdisjoint(text):
        return text  # (the common cell: what terminal() and html.escape() leave as it is, found at once)
    import html as _html  # here: a terminal's or a CSV's output does not load html's tables

    return _html.escape(terminal(text), quote=True)


# the characters html.escape replaces, and those a CI command starts with (terminal() escapes it); a set,
# not a pattern: no regular expression compiled at start-up
_HTML_OR_CI = frozenset("&<>\"':#")


def plain(text: object) -> str:
    """Plain text for a file or an e-mail: as :func:`terminal`."""
    return terminal(text)


def finite_or_none(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in dicts, lists and tuples too) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(item) for item in value]
    return value


def json_text(document: Any, *, indent: int | None = 2, default: Callable[[Any], Any] | None = None) -> str:
    """``document`` as strict JSON text ending with a newline; NaN and infinities become null."""
    import json  # (off the start-up path of text output)

    if default is not None:
        document = json.loads(json.dumps(document, default=default))
    return json.dumps(finite_or_none(document), indent=indent, allow_nan=False) + "\n"
