"""Claims made with averages alone (no spread): find them in prose.

Write-ups often say "the average of 5 builds" and give a table of means --
``Unpatched: 66.51  232.93  109.21`` -- or inline pairs such as
``with patch: 9931 ns without patch: 11111 ns``.  Without a spread nothing
about significance can be said; the audit says so, names what to collect,
and (when the number of runs is stated) how small the run-to-run noise
would have to be for the claimed change to be detectable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from abstat.audit.scan_lines import strip_quote

_NUM = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_UNITS = r"(?:ns|us|µs|ms|s|sec|secs|seconds|cycles|%|MB/s|GB/s|ops/s|op/s)"
_MENTION = re.compile(
    r"\b(?:(?:the|an?)\s+)?(?:average|mean|avg\.?)\s+(?:of|over|across)\s+(?:the\s+)?(?:last\s+)?"
    r"(\d+)\s+(?:such\s+|consecutive\s+|separate\s+|individual\s+|independent\s+)?"
    r"(runs?|builds?|iterations?|samples?|measurements?|repetitions?|trials?|times|invocations?|boots?|executions?|tries)\b"
    r"|\baveraged\s+(?:over|across)\s+(\d+)\s+(runs?|builds?|iterations?|samples?|measurements?|repetitions?|trials?|boots?)\b",
    re.IGNORECASE,
)
_HEADER_WORDS = re.compile(r"^[A-Za-z][\w/%()-]*(?:\s+[A-Za-z][\w/%()-]*)*$")
_PAIR = re.compile(rf"([A-Za-z][A-Za-z _-]{{0,30}}?):\s*({_NUM})\s*({_UNITS})\b")
_SPREAD = re.compile(
    r"\+/-|±|\bstddev\b|\bstdev\b|\bstd\.? ?dev|\bstandard deviation|\bsigma\b|\bconfidence\b", re.IGNORECASE
)
_BASELINE = re.compile(
    r"\b(without|unpatched|before|baseline|base|old|vanilla|orig(?:inal)?|stock|reference)\b", re.IGNORECASE
)
TABLE_DISTANCE = 12  # lines between a mention and its table
# A row is ``LABEL[:] NUM NUM ... [UNIT]``.  As one regular expression (label of letters, digits and
# spaces, matched lazily, then the numbers) it backtracks quadratically on a long line of numbers
# that does not end like a row (10,000 numbers: 21 s), so :func:`_row` finds the same match by
# taking the numbers from the end, in linear time.
_LABEL = re.compile(r"[A-Za-z][\w .,'()/+-]*")
_NUMBER = re.compile(_NUM)
_NUMBER_UNIT = re.compile(rf"({_NUM})({_UNITS})")
_UNIT = re.compile(_UNITS)
_WORD = re.compile(r"\S+")


MAX_VALUES = 1000  # numbers in a row of averages: a longer run of numbers is data, not a table's row


def _row(text: str) -> tuple[str, str, str | None] | None:
    """(label, numbers, unit) of a row ``LABEL[:] NUM NUM ... [UNIT]``, or None; the label is the
    shortest one that leaves only numbers (and a unit) after it.  The words are read from the end and
    only while they are numbers, at most ``MAX_VALUES`` of them: memory stays a few times the line's."""
    words = _words_back(text)
    last, unit = _take_unit(text, next(words, None), words)
    if last is None:
        return None
    starts = [last[0]]  # where the trailing numbers start, the last number's first
    for start, end in words:
        if not _NUMBER.fullmatch(text, start, end):
            break
        if len(starts) == MAX_VALUES:
            return None
        starts.append(start)
    found = _label_before(text, starts[:-3:-1])
    return None if found is None else (found[0], text[found[1] : last[1]], unit)


def _words_back(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of the words of ``text``, from the last."""
    size = len(text)
    for match in _WORD.finditer(text[::-1]):
        yield size - match.end(), size - match.start()


def _take_unit(
    text: str, last: tuple[int, int] | None, words: Iterator[tuple[int, int]]
) -> tuple[tuple[int, int] | None, str | None]:
    """The last number of the row (``last``, or the word before a unit, or ``12`` of ``12ms``) and the unit;
    (None, None) when the row does not end in a number."""
    if last is None or _NUMBER.fullmatch(text, *last):
        return last, None
    if _UNIT.fullmatch(text, *last):
        number = next(words, None)
        return (number, text[slice(*last)]) if number and _NUMBER.fullmatch(text, *number) else (None, None)
    glued = _NUMBER_UNIT.fullmatch(text, *last)
    return ((last[0], glued.end(1)), glued.group(2)) if glued else (None, None)


def _label_before(text: str, starts: list[int]) -> tuple[str, int] | None:
    """The shortest label that leaves only the trailing numbers after it, and where its numbers start
    (``starts``: the first two numbers' starts; a label before the second holds the first number)."""
    label_match = _LABEL.match(text)
    label_end = label_match.end() if label_match else 0
    for start in starts:
        label = text[:start].rstrip()
        if label.endswith(":"):
            label = label[:-1].rstrip()
        if len(label) > label_end:  # a character no label has: longer labels have it too
            return None
        if label:
            return label, start
    return None


@dataclass
class AveragesClaim:
    """Averages given without any spread."""

    line: int
    end_line: int
    mention: str | None = None
    runs: int | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[float]]] = field(default_factory=list)
    unit: str | None = None

    def baseline_index(self) -> int:
        for index, (label, _) in enumerate(self.rows):
            if _BASELINE.search(label):
                return index
        return 0


@dataclass
class _Table:
    line: int
    end_line: int
    columns: list[str]
    rows: list[tuple[str, list[float]]]
    unit: str | None
    used: bool = False


def _tables(lines: list[str], skip: set[int]) -> list[_Table]:
    tables: list[_Table] = []
    i = 0
    while i < len(lines):
        run, j = _rows_from(lines, i, skip)
        if len(run) >= 2:
            tables.append(_table(lines, i, j, run, skip))
            i = j
        else:
            i += 1
    return tables


def _rows_from(lines: list[str], i: int, skip: set[int]) -> tuple[list[tuple[str, list[float], str | None]], int]:
    """The rows of as many numbers each from line ``i`` on (label, values, unit), and the index after them."""
    run: list[tuple[str, list[float], str | None]] = []
    j = i
    while j < len(lines) and j + 1 not in skip:
        row = _table_row(lines[j])
        if row is None or (run and len(row[1]) != len(run[0][1])):
            break
        run.append(row)
        j += 1
    return run, j


def _table_row(text: str) -> tuple[str, list[float], str | None] | None:
    """A row of bare averages (label, values, unit): not a table drawn with ``|``, nor one that gives a spread."""
    if "|" in text or _SPREAD.search(text):
        return None
    row = _row(text)
    if row is None:
        return None
    label, numbers, unit = row
    return label.strip().rstrip(":"), [float(v) for v in numbers.split()], unit


def _table(lines: list[str], i: int, j: int, run: list[tuple[str, list[float], str | None]], skip: set[int]) -> _Table:
    """The table of the rows ``run`` (lines ``i`` to ``j``), with the column names of the line above
    when it has one word per column."""
    width = len(run[0][1])
    columns = [f"value {k + 1}" for k in range(width)] if width > 1 else ["value"]
    start = i
    if i > 0 and i not in skip:
        header = lines[i - 1]
        if _HEADER_WORDS.match(header) and len(header.split()) == width:
            columns = header.split()
            start = i - 1
    return _Table(start + 1, j, columns, [(label, values) for label, values, _ in run], run[0][2])


class _Lines:
    """The lines of a text joined by newlines, and the line (1-based) of an offset in the joined text."""

    def __init__(self, lines: list[str]) -> None:
        self.offsets = []
        position = 0
        for text in lines:
            self.offsets.append(position)
            position += len(text) + 1
        self.joined = "\n".join(lines)

    def line_of(self, offset: int) -> int:
        offsets = self.offsets
        low, high = 0, len(offsets) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if offsets[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low + 1


def find_averages(text: str, skip_lines: set[int] | None = None) -> list[AveragesClaim]:
    """Claims based on averages without spread; ``skip_lines`` (1-based) are ministat reports."""
    skip = skip_lines or set()
    lines = [strip_quote(line).strip() for line in text.split("\n")]
    where = _Lines(lines)
    mentions = [m for m in _MENTION.finditer(where.joined) if where.line_of(m.start()) not in skip]
    tables = _tables(lines, skip)
    claims = _mention_claims(where, mentions, tables) + _table_claims(tables)
    claims.sort(key=lambda c: c.line)
    return claims


def _mention_claims(where: _Lines, mentions: list[re.Match[str]], tables: list[_Table]) -> list[AveragesClaim]:
    """A claim per mention of averages (a mention repeated just after its claim is the same claim), each
    with its table or the inline pairs before the next mention."""
    claims: list[AveragesClaim] = []
    last_end = -10_000
    for index, mention in enumerate(mentions):
        runs = int(mention.group(1) or mention.group(3))
        if _said_again(claims, runs, mention.start() - last_end):
            last_end = mention.end()
            continue
        last_end = mention.end()
        stop = mentions[index + 1].start() if index + 1 < len(mentions) else len(where.joined)
        claims.append(_mention_claim(where, mention, runs, tables, stop))
    return claims


def _said_again(claims: list[AveragesClaim], runs: int, distance: int) -> bool:
    """A mention just after the last claim's, of as many runs, while that claim has no rows yet: the same
    claim said twice ("... average of 100 runs. ipi: average of 100 runs")."""
    return bool(claims) and claims[-1].runs == runs and distance < 200 and not claims[-1].rows


def _table_claims(tables: list[_Table]) -> list[AveragesClaim]:
    """A table of means without a mention counts when its words say "average"."""
    claims = []
    for table in tables:
        if table.used:
            continue
        words = " ".join(table.columns + [label for label, _ in table.rows])
        if re.search(r"\b(avg|average|mean)\b", words, re.IGNORECASE):
            claims.append(AveragesClaim(table.line, table.end_line, None, None, table.columns, table.rows, table.unit))
    return claims


def _mention_claim(where: _Lines, mention: re.Match[str], runs: int, tables: list[_Table], stop: int) -> AveragesClaim:
    """The claim of a mention ("the average of 5 runs"): with the first unused table near it, else with
    the inline pairs ("with patch: 9931 ns") after it, before the next mention (``stop``)."""
    line = where.line_of(mention.start())
    claim = AveragesClaim(
        line=line, end_line=where.line_of(mention.end()), mention=" ".join(mention.group(0).split()), runs=runs
    )
    table = next((t for t in tables if not t.used and -TABLE_DISTANCE <= t.line - line <= TABLE_DISTANCE), None)
    if table is not None:
        table.used = True
        claim.columns, claim.rows, claim.unit = table.columns, table.rows, table.unit
        claim.line, claim.end_line = min(line, table.line), max(claim.end_line, table.end_line)
        return claim
    _inline_pairs(claim, where, mention, stop)
    return claim


def _inline_pairs(claim: AveragesClaim, where: _Lines, mention: re.Match[str], stop: int) -> None:
    """The claim's rows from the ``label: value unit`` pairs after the mention, when two or more share a unit."""
    window = where.joined[mention.end() : min(stop, mention.end() + 600)]
    pairs = list(_PAIR.finditer(window))
    units = {p.group(3) for p in pairs}
    if len(pairs) >= 2 and len(units) == 1:
        claim.columns = ["value"]
        claim.rows = [(p.group(1).strip(), [float(p.group(2))]) for p in pairs]
        claim.unit = pairs[0].group(3)
        claim.end_line = where.line_of(mention.end() + pairs[-1].end())
