"""Find ministat reports in free text and parse what they print.

A report is recognised line by line after removing what mail and Markdown
put in front of a line (indentation, ``>`` quote marks at any depth, tabs or
spaces).  The lines ministat prints are: the legend (``x name``), the plot
(``+---+`` borders and ``|...|`` rows), the vitals header, one vitals line
per data set and, after every data set but the first, either the four
"Difference at" lines or "No difference proven at".  ``-A`` drops the plot,
``-n`` the comparisons, FreeBSD's ``-q`` the legend and the header.

A line that starts like one of these but does not end like it (cut short,
text glued to its end) makes the block *damaged*: it is reported with its
line number, and whatever does not depend on it is still checked.
"""

from __future__ import annotations

import re

from abstat.audit.blocks import Block, DataSet, PrintedComparison, Problem
from abstat.audit.printed import LINE_DIGITS, VITALS_DIGITS, printed
from abstat.audit.scan_lines import CANONICAL_HEADER, SYMBOLS, VITALS, VITALS_WIDTH, Line, classify

_COMMAND = re.compile(r"(?:^|[\s$#>])ministat((?:[ \t]+\S+)*)[ \t]*$")

_STARTERS = {"legend", "border", "header", "vitals", "badvitals", "badheader"}
_MEMBERS = _STARTERS | {
    "plotrow",
    "badplot",
    "diffhead",
    "nodiff",
    "diffabs",
    "diffpct",
    "pooled",
    "badcomparison",
    "numbers",
}


def _legend_run(lines: list[Line], start: int) -> int:
    """Length of a legend x, +, * ... starting at ``start`` (0 if none)."""
    count = 0
    while start + count < len(lines):
        line = lines[start + count]
        if line.kind != "legend" or line.found.group(1) != SYMBOLS[count]:
            break
        count += 1
        if count == len(SYMBOLS):
            break
    return count


def _starts_block(lines: list[Line], i: int) -> bool:
    line = lines[i]
    if line.kind == "legend":
        return _legend_leads_on(lines, i)
    if line.kind in ("border", "badplot"):
        return _plot_leads_to_vitals(lines, i)
    if line.kind in ("header", "badheader"):
        return i + 1 < len(lines) and lines[i + 1].kind in ("vitals", "badvitals")
    if line.kind in ("vitals", "badvitals"):
        return line.match is not None and line.match.group(1) == "x"
    return False


def _legend_leads_on(lines: list[Line], i: int) -> bool:
    """A legend (x, +, * ... in order) followed by a plot, a header or vitals."""
    run = _legend_run(lines, i)
    if run == 0:
        return False
    nxt = lines[i + run] if i + run < len(lines) else None
    return nxt is not None and nxt.kind in {"border", "badplot", "header", "badheader", "vitals", "badvitals"}


def _plot_leads_to_vitals(lines: list[Line], i: int) -> bool:
    """A plot must lead to vitals within the plot's height."""
    for j in range(i + 1, min(len(lines), i + 60)):
        if lines[j].kind in ("header", "vitals", "badheader", "badvitals"):
            return True
        if lines[j].kind not in ("plotrow", "border", "badplot"):
            return False
    return False


def find_blocks(text: str) -> list[Block]:
    """Every ministat report in ``text``, in order."""
    lines = [classify(number, raw) for number, raw in enumerate(text.split("\n"), start=1)]
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if not _starts_block(lines, i):
            i += 1
            continue
        j = _block_end(lines, i)
        blocks.append(_parse_block(lines, i, j))
        i = j
    return blocks


def _block_end(lines: list[Line], i: int) -> int:
    """The index after the report starting at ``i``: where a line is no member or the next report starts."""
    j = i + 1
    seen_vitals = lines[i].kind in ("vitals", "badvitals")
    while j < len(lines) and lines[j].kind in _MEMBERS:
        kind = lines[j].kind
        if seen_vitals and _starts_next_report(lines[j]):
            break
        if kind == "numbers" and lines[j - 1].kind != "badvitals":
            break
        seen_vitals = seen_vitals or kind in ("vitals", "badvitals")
        j += 1
    return j


def _starts_next_report(line: Line) -> bool:
    """After a report's vitals: a legend, plot, header or first data set starts the next report."""
    if line.kind in ("legend", "border", "header", "badheader"):
        return True
    return line.kind in ("vitals", "badvitals") and line.found.group(1) == "x"


def _command_before(lines: list[Line], start: int) -> str | None:
    for k in range(start - 1, max(-1, start - 3), -1):
        if lines[k].kind == "blank":
            continue
        match = _COMMAND.search(lines[k].text)
        if match:
            return "ministat" + match.group(1)
        return None
    return None


MAX_N_DIGITS = 15  # ministat counts lines: a longer N is damage (and beyond what a float holds exactly)


def _implausible_n(block: Block, line: Line, match: re.Match[str]) -> bool:
    """Record a problem (the data set is damaged) when N has implausibly many digits."""
    digits = len(match.group(2).lstrip("0"))
    if digits <= MAX_N_DIGITS:
        return False
    block.problems.append(Problem(line.number, f"N has {digits} digits: not a count ministat prints"))
    block.damaged_symbols.add(match.group(1))
    return True


def _parse_vitals(line: Line, match: re.Match[str], name: str | None) -> DataSet:
    fields = match.group(3).split()
    values = [printed(f, VITALS_DIGITS) for f in fields]
    return DataSet(match.group(1), line.number, name, int(match.group(2)), *values)


def _parse_block(lines: list[Line], start: int, stop: int) -> Block:
    block = Block(line=lines[start].number, end_line=lines[stop - 1].number)
    block.command = _command_before(lines, start)
    parser = _BlockParser(block)
    k = start
    while k < stop:
        line = lines[k]
        parser.check_expected(line)
        if line.kind in ("vitals", "badvitals"):
            k = _take_vitals(block, lines, k, stop, parser.header_body)
            parser.last_symbol = line.found.group(1)
            parser.current = None
        else:
            parser.line(line)
        k += 1
    if parser.expected:
        block.problems.append(
            Problem(block.end_line, "report ends inside a comparison: " + ", ".join(parser.expected) + " missing")
        )
        if parser.current is not None:
            parser.current.complete = False
    if not block.datasets and not block.damaged_symbols:
        block.problems.append(Problem(block.line, "no vitals line: the report is incomplete"))
    return block


_COMPARISON_LINES = {"diffabs": "difference", "diffpct": "percent", "pooled": "pooled s"}


_LINE_HANDLERS = {
    "legend": "legend",
    "border": "plot",
    "plotrow": "plot",
    "badplot": "bad_plot",
    "header": "header",
    "badheader": "bad_header",
    "diffhead": "verdict",
    "nodiff": "verdict",
    "diffabs": "comparison_line",
    "diffpct": "comparison_line",
    "pooled": "comparison_line",
    "badcomparison": "bad_comparison",
    "numbers": "numbers",
}  # the _BlockParser method that reads each kind of line but vitals


class _BlockParser:
    """The lines of one report but its vitals, in order: what each kind of line adds to the block; the
    comparison being read (``current``) and the lines it still expects."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.header_body: str | None = None
        self.current: PrintedComparison | None = None
        self.expected: list[str] = []  # comparison lines still expected
        self.last_symbol: str | None = None

    def problem(self, line: Line, message: str, severity: str = "error") -> None:
        self.block.problems.append(Problem(line.number, message, severity))

    def check_expected(self, line: Line) -> None:
        """A line other than the comparison lines still expected: they are missing."""
        if self.expected and line.kind not in ("diffabs", "diffpct", "pooled", "badcomparison"):
            self.problem(line, "comparison lines missing: " + ", ".join(self.expected))
            if self.current is not None:
                self.current.complete = False
            self.expected = []

    def line(self, line: Line) -> None:
        """What a line of the kind adds (nothing for blank lines and other text)."""
        handler = _LINE_HANDLERS.get(line.kind)
        if handler is not None:
            getattr(self, handler)(line)

    def legend(self, line: Line) -> None:
        self.block.legend[line.found.group(1)] = line.found.group(2)

    def plot(self, line: Line) -> None:
        self.block.has_plot = True

    def bad_plot(self, line: Line) -> None:
        self.block.has_plot = True
        self.problem(line, line.note + " (the plot is not used)", "warning")

    def header(self, line: Line) -> None:
        self.block.has_header = True
        self.header_body = line.body

    def bad_header(self, line: Line) -> None:
        self.problem(line, line.note, "warning")

    def numbers(self, line: Line) -> None:
        self.problem(line, "stray numbers inside the report")

    def bad_comparison(self, line: Line) -> None:
        """A damaged comparison line: the comparison is incomplete, and the line it stood for is not expected."""
        self.problem(line, line.note)
        if self.current is not None:
            self.current.complete = False
            if self.expected:
                self.expected.pop(0)

    def verdict(self, line: Line) -> None:
        """ "Difference at" or "No difference proven at": a comparison of the last data set starts."""
        symbol = self.last_symbol
        if symbol is None or symbol == "x" or symbol in self.block.comparisons:
            self.problem(line, "comparison line without a data set to compare")
            return
        self.current = PrintedComparison(
            line=line.number,
            confidence=float(line.found.group(1)),
            difference_proven=line.kind == "diffhead",
        )
        self.current.lines["verdict"] = line.number
        self.block.comparisons[symbol] = self.current
        self.expected = ["difference", "percent", "pooled s"] if line.kind == "diffhead" else []

    def comparison_line(self, line: Line) -> None:
        """The difference, percent or pooled-s line of the current comparison."""
        want = _COMPARISON_LINES[line.kind]
        current = self.current
        if current is None or not self.expected or self.expected[0] != want:
            self.problem(line, f"unexpected {want} line")
            return
        self.expected.pop(0)
        first, number = printed(line.found.group(1), LINE_DIGITS), line.number
        if line.kind == "diffabs":
            current.difference = first
            current.half_width = printed(line.found.group(2), LINE_DIGITS)
            current.lines["difference"] = current.lines["half_width"] = number
        elif line.kind == "diffpct":
            current.percent = first
            current.percent_half_width = printed(line.found.group(2), LINE_DIGITS)
            current.lines["percent"] = current.lines["percent_half_width"] = number
        else:
            current.pooled_s = first
            current.lines["pooled_s"] = number


def _take_vitals(block: Block, lines: list[Line], k: int, stop: int, header_body: str | None) -> int:
    """Parse the vitals line at ``k`` (rejoining a wrapped line); returns the last index used."""
    line = lines[k]
    symbol = line.found.group(1)
    expected_symbol = SYMBOLS[min(len(block.datasets) + len(block.damaged_symbols), len(SYMBOLS) - 1)]
    if symbol != expected_symbol:
        block.problems.append(
            Problem(line.number, f"data set {symbol!r} out of order (expected {expected_symbol!r})", "warning")
        )
    name = block.legend.get(symbol)
    if line.kind == "vitals":
        _take_whole_vitals(block, line, name, header_body)
        return k
    return _take_damaged_vitals(block, lines, k, stop, name)


def _take_whole_vitals(block: Block, line: Line, name: str | None, header_body: str | None) -> None:
    """A vitals line that matches in full: a data set, unless it is shorter than the header or its N implausible."""
    if header_body is not None and header_body.strip() == CANONICAL_HEADER.strip():
        # Both printed with fixed widths: a shorter vitals line lost its end.
        if len(line.text) < VITALS_WIDTH:
            block.problems.append(Problem(line.number, "vitals line shorter than the header: cut short?"))
            block.damaged_symbols.add(line.found.group(1))
            return
    if _implausible_n(block, line, line.found):
        return
    block.datasets.append(_parse_vitals(line, line.found, name))


def _take_damaged_vitals(block: Block, lines: list[Line], k: int, stop: int, name: str | None) -> int:
    """A damaged vitals line: rejoined with the next when a mailer wrapped it, else a damaged data set; the
    last index used."""
    line = lines[k]
    symbol = line.found.group(1)
    if k + 1 < stop and lines[k + 1].kind == "numbers":
        joined = f"{line.text} {lines[k + 1].text}"
        match = VITALS.match(joined)
        if match:
            if _implausible_n(block, line, match):
                return k + 1
            block.problems.append(Problem(line.number, "vitals line wrapped onto the next line; rejoined", "warning"))
            block.datasets.append(_parse_vitals(line, match, name))
            return k + 1
    block.problems.append(Problem(line.number, line.note))
    block.damaged_symbols.add(symbol)
    return k
