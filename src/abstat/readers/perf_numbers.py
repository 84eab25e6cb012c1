"""Numbers as ``perf stat`` prints them in the user's locale.

perf stat calls ``setlocale(LC_ALL, "")`` (``cmd_stat`` in tools/perf/builtin-stat.c) and prints with
printf (tools/perf/util/stat-display.c): counts ``%'18.0f`` and scaled counts (``msec``) ``%'18.2f``,
grouped by the locale; the elapsed time ``%17.9f`` (``%17.*f +- %.*f`` with ``-r``), ``( +-%6.2f%% )``
and ``(%.2f%%)`` without grouping; the ``-I`` time stamp ``%lu.%09lu``, always with a dot.  In de_DE
that gives ``1.224.637 cycles``, ``1.508,55 msec task-clock``, ``6,272092984 seconds time elapsed`` and
``( +-  2,12% )``.  A file's decimal mark is read from perf's layout: a number printed without
grouping shows it (its one separator), as does a counter with both separators, a repeated one (the
grouping) or one followed by other than three digits.  A counter such as ``205.306`` alone tells
nothing: with no other evidence in the file it is refused, never guessed.
"""

from __future__ import annotations

import math
import re

from abstat.errors import InputError

NUMBER = r"[-+]?(?:\d[\d,.]*|[.,]\d+)(?:[eE][-+]?\d+)?"  # unambiguous: no backtracking blow-up
# an aggregation printed before a count (stat-display.c aggr_printout): -A "CPU%-4d"; then those perf follows by
# a count: --per-core "S%d-D%d-C%d", --per-cluster "S%d-D%d-CLS%d", --per-cache "S%d-D%d-L%d-ID%d", --per-die,
# --per-socket, --per-node; and --per-thread's "%16s-%-8d", comm-pid (a comm is up to 15 characters, spaces too:
# "Web Content-1234")
COUNTED_AGGR = r"S\d+(?:-D\d+)?(?:-C\d+|-CLS\d+|-L\d+-ID\d+)?|N\d+"
AGGR = rf"CPU\d+|{COUNTED_AGGR}|[^\s\d#(<+-][^\t\n]{{0,14}}?-\d+"
# thousands grouped by a space-like mark or an apostrophe (fr_FR, sv_SE, ru_RU: U+202F or U+00A0; de_CH: ' or U+2019)
_GROUPING = re.compile("(?<=\\d)[\u00a0\u202f\u2009'\u2019](?=\\d{3}(?!\\d))")
_UNGROUPED = (
    re.compile(rf"^\s*({NUMBER})\s*(?:\+-\s*({NUMBER})\s*)?seconds (?:time elapsed|user|sys)"),
    re.compile(rf"\(\s*\+-\s*({NUMBER})\s*%\s*\)"),
    re.compile(rf"\(({NUMBER})%\)\s*$"),
)
_COUNT = re.compile(rf"^\s*(?:\d+\.\d{{9}}\s+)?(?:(?:{AGGR})\s+(?:\d+\s+(?=\d))?)?({NUMBER})\s+[A-Za-z_]")
_SHAPES = {
    mark: re.compile(
        rf"[-+]?(?:\d{{1,3}}(?:{re.escape(group)}\d{{3}})+|\d+)(?:{re.escape(mark)}\d*)?(?:[eE][-+]?\d+)?"
        rf"|[-+]?{re.escape(mark)}\d+(?:[eE][-+]?\d+)?"
    )
    for mark, group in ((".", ","), (",", "."))
}


def _ungrouped_mark(token: str) -> str | None:
    marks = [c for c in token if c in ",."]
    return marks[0] if len(marks) == 1 else None


def _grouped_mark(token: str) -> str | None:
    """The decimal mark a grouped count shows, None when it shows none (no separator, or one then 3 digits)."""
    last = max(token.rfind("."), token.rfind(","))
    if last < 0:
        return None
    sep = token[last]
    other = "," if sep == "." else "."
    if other in token:
        return sep
    if token.count(sep) > 1:
        return other
    return sep if len(token) - last - 1 != 3 else None


class Marks:
    """The decimal marks a perf stat text shows, and the first undecided number (``205.306``)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.undecided: tuple[int, str] | None = None

    def line(self, number: int, text: str) -> None:
        for pattern in _UNGROUPED:
            for match in pattern.finditer(text):
                for token in match.groups():
                    self._note(number, _ungrouped_mark(token) if token else None)
        count = _COUNT.match(text)
        if count:
            token = count.group(1)
            mark = _grouped_mark(token)
            self._note(number, mark)
            if mark is None and any(c in token for c in ",.") and self.undecided is None:
                self.undecided = (number, token)

    def _note(self, number: int, mark: str | None) -> None:
        if mark is not None:
            self.seen.setdefault(mark, number)

    def decimal(self, path: str) -> str:
        """The file's decimal mark; an :class:`InputError` naming the line when it mixes both or cannot tell."""
        if len(self.seen) > 1:
            line = max(self.seen.values())
            raise InputError(
                "perf stat text: numbers with a decimal comma and with a decimal point "
                f"(line {min(self.seen.values())} and this one): one locale per file",
                path=path,
                line=line,
            )
        if self.seen:
            return next(iter(self.seen))
        if self.undecided is not None:
            line, token = self.undecided
            raise InputError(
                f"perf stat text: {token!r}: cannot tell whether {token[-4]!r} groups thousands or marks decimals "
                "(no elapsed time, +- or decimal number in the file shows the locale's decimal mark)",
                path=path,
                line=line,
            )
        return "."


def marks_of(lines: list[tuple[int, str]]) -> Marks:
    found = Marks()
    for number, text in lines:
        found.line(number, text)
    return found


def to_number(token: str, decimal: str) -> float | None:
    """``token`` read with ``decimal`` as the decimal mark and the other separator grouping by three; None
    when it is not such a number (or not finite)."""
    if _SHAPES[decimal].fullmatch(token) is None:
        return None
    group = "," if decimal == "." else "."
    value = float(token.replace(group, "").replace(decimal, "."))
    return value if math.isfinite(value) else None


def json_number(token: str) -> float | None:
    """A ``-j`` counter value (``%f``: no grouping, so a separator is the decimal mark)."""
    return to_number(token.strip(), _ungrouped_mark(token) or ".")


def ungroup(line: str) -> str:
    """``line`` with the thousands grouping perf's ``%'`` prints in locales that group by a space-like mark
    or an apostrophe (``1\u202f224\u202f637``, ``1'224'637``) taken out; other lines as they are."""
    if line.isascii() and "'" not in line:
        return line
    return _GROUPING.sub("", line)


def counter_name(event: str, aggr: str | None, nr: str | None, rest: str) -> str:
    """A text counter's name: the event, then the aggregation printed before the value (``cycles.CPU0``,
    ``cycles.S0-D0-C0.2``: as the ``-x,`` reader names it) and the cgroup ``-G`` prints after the event."""
    words = rest.split(None, 1)
    cgroup = words[0] if words and words[0][:1] not in "#([" else None
    return ".".join(part for part in (event, aggr, nr, cgroup) if part)
