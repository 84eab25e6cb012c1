"""The lines of a ministat report, recognised one by one in free text (:mod:`abstat.audit.scan` groups
them into reports): what mail and Markdown put in front of a line removed, each line is a legend, plot,
header, vitals or comparison line -- or one that starts like one of these and does not end like it
(*damaged*, with a note saying how) -- a line of numbers only, a blank line or other text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SYMBOLS = "x+*%#@O"  # ministat marks the 7th data set with O
_NUM = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)"
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?[ \t]*)*")

VITALS = re.compile(rf"^([{re.escape(SYMBOLS)}])[ \t]+(\d+)((?:[ \t]+{_NUM}){{5}})$")
_VITALS_START = re.compile(rf"^([{re.escape(SYMBOLS)}])[ \t]+(\d+)[ \t]+{_NUM}")
_VITALS_PREFIX = re.compile(rf"^([{re.escape(SYMBOLS)}])[ \t]+(\d+)((?:[ \t]+{_NUM}){{5}})")
_NUMBERS_ONLY = re.compile(rf"^{_NUM}(?:[ \t]+{_NUM})*$")
_HEADER = re.compile(r"^N[ \t]+Min[ \t]+Max[ \t]+Median[ \t]+Avg[ \t]+Stddev$")
_HEADER_START = re.compile(r"^N[ \t]+Min\b")
CANONICAL_HEADER = "    N           Min           Max        Median           Avg        Stddev"
VITALS_WIDTH = len(CANONICAL_HEADER)  # 75: "%c %3zu" + 5 x " %13.8g"
_LEGEND = re.compile(rf"^([{re.escape(SYMBOLS)}]) (\S.*)$")
_BORDER = re.compile(r"^\+-+\+$")
_BORDER_START = re.compile(r"^\+-{3,}")
_PLOT_ROW = re.compile(r"^\|.*\|$")
_DIFF_HEAD = re.compile(rf"^Difference at ({_NUM})% confidence$")
_NODIFF = re.compile(rf"^No difference proven at ({_NUM})% confidence$")
_DIFF_ABS = re.compile(rf"^({_NUM}) \+/- ({_NUM})$")
_DIFF_PCT = re.compile(rf"^({_NUM})% \+/- ({_NUM})%$")
_POOLED = re.compile(rf"^\(Student's t, pooled s = ({_NUM})\)$")
_DAMAGE_STARTS = [
    (re.compile(r"^Difference at\b"), "difference header"),
    (re.compile(r"^No difference prov"), "no-difference line"),
    (re.compile(r"^\(Student's t"), "pooled-s line"),
    (re.compile(rf"^{_NUM}%? \+/-"), "difference line"),
]


@dataclass
class Line:
    number: int  # 1-based
    raw: str
    body: str  # after the quote prefix, trailing white space removed
    text: str  # body without leading white space
    kind: str
    match: re.Match[str] | None = None
    note: str = ""

    @property
    def found(self) -> re.Match[str]:
        """The match of a line whose kind comes from a pattern (legend, vitals, comparison lines)."""
        if self.match is None:
            raise ValueError(f"line {self.number} ({self.kind}) has no match")
        return self.match


MAX_LINE = (
    4096  # characters: longer lines are "other" (a ministat report's lines are below 100 and a legend's file name)
)


def strip_quote(raw: str) -> str:
    """``raw`` without mail/Markdown quote marks and indentation in front, nor white space behind."""
    return _QUOTE.sub("", raw, count=1).rstrip() if raw else ""  # _QUOTE matches at 0, maybe empty


def classify(number: int, raw: str) -> Line:
    raw = raw.rstrip("\r\n")
    body = strip_quote(raw)
    text = body.strip()
    line = Line(number, raw, body, text, "other")
    if not text:
        line.kind = "blank"
        return line
    if len(text) > MAX_LINE:  # no line of a ministat report; re's repeats would hold ~800 bytes a word (F7)
        return line
    for kind, pattern in (
        ("vitals", VITALS),
        ("header", _HEADER),
        ("border", _BORDER),
        ("plotrow", _PLOT_ROW),
        ("diffhead", _DIFF_HEAD),
        ("nodiff", _NODIFF),
        ("diffabs", _DIFF_ABS),
        ("diffpct", _DIFF_PCT),
        ("pooled", _POOLED),
    ):
        match = pattern.match(text)
        if match:
            line.kind, line.match = kind, match
            return line
    if _damaged(line, text):
        return line
    match = _LEGEND.match(text)
    if match:
        line.kind, line.match = "legend", match
        return line
    if _NUMBERS_ONLY.match(text):
        line.kind = "numbers"
    return line


def _damaged(line: Line, text: str) -> bool:
    """Classify ``line`` as a damaged vitals, header, plot or comparison line (with its note), if it is one."""
    start = _VITALS_START.match(text)
    if start:
        line.kind, line.match, line.note = "badvitals", start, _vitals_damage(text)
        return True
    if _HEADER_START.match(text):
        line.kind, line.note = "badheader", "vitals header cut short or malformed"
        return True
    if _BORDER_START.match(text):
        line.kind, line.note = "badplot", "plot border cut short or malformed"
        return True
    if text.startswith("|") and len(text) > 10:
        line.kind, line.note = "badplot", "plot row cut short or malformed"
        return True
    for pattern, what in _DAMAGE_STARTS:
        if pattern.match(text):
            line.kind, line.note = "badcomparison", f"{what} cut short or malformed"
            return True
    return False


def _vitals_damage(text: str) -> str:
    """How a line that starts like vitals is damaged: text glued to its end, or cut short."""
    prefix = _VITALS_PREFIX.match(text)
    if prefix:
        return f"text glued to the end of a vitals line: {text[prefix.end() :][:30]!r}"
    return "vitals line cut short or malformed"
