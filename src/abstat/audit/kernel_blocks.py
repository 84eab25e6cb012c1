"""Kernel developers' pasted results, found in text: ``perf stat -r N`` blocks, as plain records
(:class:`Claim`, shared with the kernel test robot's tables in :mod:`abstat.audit.kernel_lkp` and the
other tables in :mod:`abstat.audit.kernel_tables`).

``perf stat -r N`` prints each counter's mean over the N runs and ``( +- x% )``: the standard error of
the mean relative to it (perf's ``rel_stddev_stats``: 100 * stddev / sqrt(N) / mean).  The standard
deviation of the runs is therefore ``x/100 * mean * sqrt(N)``; ``m +- s seconds time elapsed`` gives the
standard error ``s`` itself, so there the standard deviation is ``s * sqrt(N)``.  A ``±`` missing on a
``-r`` line is perf omitting a zero.  Blocks are paired by the labels written just before them
(``before``/``after``, ``base``/``patched``, ``without``/``with``...) or, failing those, by order:
the first block is the baseline.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from abstat.audit.findings import Finding
from abstat.audit.scan_lines import strip_quote
from abstat.errors import InputError
from abstat.readers.perf_numbers import AGGR, NUMBER, counter_name, marks_of, to_number, ungroup

# a comma only between three-digit groups (C-locale tables); perf's blocks are read in their own locale
TABLE_NUMBER = r"(?<![\w.,])(?:[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?![\d,]))(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+)"
PERF_HEADER = re.compile(r"Performance counter stats for (?P<what>.+?)(?:\s*\((?P<runs>\d+) runs\))?:\s*$")
PERF_COUNTER = re.compile(
    rf"^(?:(?P<aggr>{AGGR})\s+(?:(?P<nr>\d+)\s+(?=[\d<]))?)?"
    rf"(?P<value>{NUMBER}|<not counted>|<not supported>)\s+(?:(?P<unit>msec|usec|nsec|sec|ms|us|ns|s)\s+)?"
    r"(?P<event>[A-Za-z_][\w.:/=,@\-\[\]{}]*)(?P<rest>(?:\s.*)?)$"
)
PERF_NOISE = re.compile(rf"\(\s*\+-\s*(?P<pct>{NUMBER})\s*%\s*\)")
PERF_ELAPSED = re.compile(rf"^(?P<value>{NUMBER})\s*(?:\+-\s*(?P<se>{NUMBER})\s*)?seconds (?P<what>time elapsed)")
RUNS_PROSE = re.compile(
    r"\b(\d{1,4})\s+(?:runs|iterations|repetitions|samples|times|trials|boots)\b"
    r"|\b(?:repeated|averaged over|average of|mean of)\s+(\d{1,4})\b",
    re.IGNORECASE,
)
BASE_WORDS = re.compile(
    r"\b(before|base(?:line)?|without|unpatched|vanilla|old|orig(?:inal)?|stock|reference)\b", re.IGNORECASE
)
PROSE_WINDOW = 40  # lines around a table searched for its number of runs


@dataclass
class Side:
    """One column of a comparison: its label, N, mean and standard deviation (None: not given)."""

    label: str
    n: int | None
    mean: float
    sd: float | None
    mean_text: str = ""
    values: list[float] | None = None
    how: str = ""  # how the standard deviation was obtained
    truncated: bool = False  # the mean is printed truncated to an integer (LKP's %d), not rounded


@dataclass
class PrintedChange:
    """A change as the text prints it: ``percent`` or an absolute difference, with a significance mark
    when the tool prints one (``marked`` None: the tool has none)."""

    text: str
    value: float
    percent: bool
    marked: bool | None = None
    gain: bool = False  # mmtests: positive is better whatever the direction


@dataclass
class Row:
    metric: str
    line: int
    sides: list[Side]  # the first is the baseline
    changes: list[PrintedChange | None] = field(default_factory=list)  # one per candidate


@dataclass
class Claim:
    """One pasted result: what kind, where, its rows, and what could not be read."""

    kind: str
    line: int
    end_line: int
    title: str
    rows: list[Row] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    readable: bool = True


def number(text: str) -> float:
    """A table's number: a comma only between three-digit groups (``1,234,567.5``), else a ValueError."""
    if re.fullmatch(TABLE_NUMBER, text) is None:
        raise ValueError(f"not a number with '.' as the decimal mark: {text!r}")
    return float(text.replace(",", ""))


def runs_in_prose(lines: list[str], start: int, end: int) -> int | None:
    """The number of runs the text nearest to lines ``start..end`` (0-based) states: the closest
    statement before the table (``mean of 10 runs``, ``5 iterations``), else the closest after it;
    None when the closest line states two different numbers, or none is stated."""
    before = range(start, max(0, start - PROSE_WINDOW) - 1, -1)
    after = range(end, min(len(lines), end + PROSE_WINDOW))
    for positions in (before, after):
        for position in positions:
            found = _stated_runs(lines[position])
            if found:
                return found.pop() if len(found) == 1 else None
    return None


# --------------------------------------------------------------------------
# perf stat -r


def _stated_runs(line: str) -> set[int]:
    """The numbers of runs (2 or more) a line of prose states."""
    found = {int(m.group(1) or m.group(2)) for m in RUNS_PROSE.finditer(line)}
    return {value for value in found if value >= 2}


def _perf_block(lines: list[str], index: int) -> tuple[dict[str, object], int]:
    """The block whose header is ``lines[index]``: its counters, and the index after it."""
    header = PERF_HEADER.search(strip_quote(lines[index]))
    assert header is not None
    runs = int(header.group("runs")) if header.group("runs") else 1
    block: dict[str, object] = {
        "what": header.group("what").strip(),
        "runs": runs,
        "line": index + 1,
        "counters": [],
        "unreadable": [],
    }
    counters: list[tuple[str, float, float | None, str, int, str | None]] = block["counters"]  # type: ignore[assignment]
    position = _read_counters(lines, index + 1, counters)
    block["end"] = position
    try:
        block["counters"] = _in_locale(lines, index + 1, position, counters)
    except InputError as err:  # perf's layout does not tell the decimal mark, or a number is not one
        block["counters"], block["unreadable"] = [], [f"line {err.line}: {err.message}"]
    return block, position


def _in_locale(lines: list[str], start: int, end: int, counters: list) -> list:
    """The counters' numbers read in the block's locale (perf prints in the user's: de_DE's ``1.224.637``)."""
    decimal = marks_of([(n + 1, ungroup(strip_quote(lines[n]))) for n in range(start, end)]).decimal("")
    read = []
    for name, raw, pct, unit, line, form in counters:
        values = [None if text is None else to_number(text, decimal) for text in (raw, pct)]
        if values[0] is None or (pct is not None and values[1] is None):
            raise InputError(f"{name}: {raw} is not a number with {decimal!r} as the decimal mark", line=line)
        read.append((name, values[0], values[1], unit, line, form))
    return read


def _read_counters(lines: list[str], position: int, counters: list) -> int:
    """Read the block's lines from ``position`` into ``counters``, up to two blank lines, the next header or a
    line that is none of the block's; the index after them."""
    blanks = 0
    while position < len(lines) and blanks < 2:
        text = ungroup(strip_quote(lines[position])).strip()
        if PERF_HEADER.search(text):
            break
        blanks = blanks + 1 if not text else 0
        if text and _ends_block(text, position + 1, counters):
            break
        position += 1
    return position


def _ends_block(text: str, number_: int, counters: list) -> bool:
    """Read ``text`` as a line of the block (a counter goes to ``counters``); True when it is none of the
    block's lines (nor perf's comments) after counters were read: the block ended before it."""
    return not _perf_line(text, number_, counters) and bool(counters) and not text.startswith(("#", "Some events", "["))


def _perf_line(text: str, number_: int, counters: list) -> bool:
    elapsed = PERF_ELAPSED.match(text)
    if elapsed:
        counters.append(_elapsed_counter(elapsed, number_))
        return True
    if re.match(rf"^{NUMBER}\s+seconds (?:user|sys)\b", text):
        return True
    match = PERF_COUNTER.match(text)
    if match is None or match.group("value").startswith("<"):
        return match is not None
    noise = PERF_NOISE.search(match.group("rest"))
    pct = noise.group("pct") if noise else None
    name = counter_name(match.group("event"), match.group("aggr"), match.group("nr"), match.group("rest"))
    counters.append((name, match.group("value"), pct, match.group("unit") or "", number_, "pct"))
    return True


def _elapsed_counter(elapsed: re.Match[str], number_: int) -> tuple:
    """``m +- s seconds time elapsed`` as a counter: the mean and its standard error, in seconds."""
    return ("seconds-time-elapsed", elapsed.group("value"), elapsed.group("se"), "s", number_, "abs")


def _label_before(lines: list[str], index: int, floor: int) -> str | None:
    """The short label written just before a block (``Before:``, ``with the patch:``), if any."""
    for position in range(index - 1, max(floor, index - 4) - 1, -1):
        text = strip_quote(lines[position]).strip()
        if not text:
            continue
        if _is_label(text):
            return text.rstrip(":").strip() or None
        return None
    return None


def _is_label(text: str) -> bool:
    """A short line that ends with a colon or names a side (before, base, after, patched, with...)."""
    return len(text) <= 60 and bool(
        text.endswith(":") or BASE_WORDS.search(text) or re.search(r"\b(after|patched|with|new)\b", text, re.IGNORECASE)
    )


def find_perf_blocks(lines: list[str]) -> list[Claim]:
    """Every run of ``perf stat`` blocks (one claim per group of blocks separated by at most prose)."""
    blocks = []
    index, floor = 0, 0
    while index < len(lines):
        if PERF_HEADER.search(strip_quote(lines[index])):
            block, after = _perf_block(lines, index)
            block["label"] = _label_before(lines, index, floor)
            blocks.append(block)
            floor = index = after
            continue
        index += 1
    return [_perf_claim(blocks)] if blocks else []


def _perf_side(block: dict[str, object], label: str, counter: tuple) -> Side:
    name, value, noise, _unit, _line, form = counter
    n = int(block["runs"])  # type: ignore[call-overload]
    if n < 2:
        return Side(label, 1, value, None, how="one run: perf prints no spread")
    se, how = _standard_error(value, noise, form, n)
    sd = None if se is None else se * math.sqrt(n)
    return Side(label, n, value, sd, mean_text=f"{value:g}", how=how)


def _standard_error(value: float, noise: float | None, form: str | None, n: int) -> tuple[float | None, str]:
    """The standard error of the mean perf prints (``m +- s``, or ``( +- x% )`` of the mean), and how."""
    if form == "abs":
        how = f"± {noise:g} s is the standard error of the mean: sd = ± x sqrt({n})" if noise is not None else ""
        return noise, how
    se = abs(value) * (noise or 0.0) / 100.0
    return se, (
        f"perf's ( +- {noise or 0:g}% ) is the standard error of the mean, relative to it: "
        f"sd = {noise or 0:g}% x mean x sqrt({n})"
    )


def _unreadable_blocks(claim: Claim, blocks: list[dict[str, object]]) -> None:
    for block in blocks:
        if not block["counters"]:
            claim.readable = len(blocks) > 1 and any(b["counters"] for b in blocks)
            claim.findings.append(
                Finding(
                    "unreadable",
                    "warning",
                    f"line {block['line']}: a perf stat block whose counter lines cannot be read "
                    f"({'; '.join(block['unreadable']) or 'cut or rewrapped?'}): not compared",  # type: ignore[arg-type]
                )
            )


def _events(blocks: list[dict[str, object]], order: list[int]) -> dict[str, list[tuple[int, tuple]]]:
    """Each event's counters, block by block (the baseline's block first)."""
    events: dict[str, list[tuple[int, tuple]]] = {}
    for i in order:
        for counter in blocks[i]["counters"]:  # type: ignore[attr-defined]
            events.setdefault(counter[0], []).append((i, counter))
    return events


def _perf_claim(blocks: list[dict[str, object]]) -> Claim:
    labels = [str(b["label"] or f"block {i + 1} ({b['what']})") for i, b in enumerate(blocks)]
    base = _baseline_index(blocks)
    order = [base] + [i for i in range(len(blocks)) if i != base]
    claim = Claim(
        "perf-stat",
        int(blocks[0]["line"]),  # type: ignore[call-overload]
        int(blocks[-1]["end"]),  # type: ignore[call-overload]
        "perf stat " + " vs ".join(labels[i] for i in order),
    )
    events = _events(blocks, order)
    _unreadable_blocks(claim, blocks)
    if len(blocks) == 1:
        claim.findings.append(Finding("single_block", "info", "one perf stat block: nothing to compare it with"))
    claim.rows += _perf_rows(blocks, labels, events)
    return claim


def _baseline_index(blocks: list[dict[str, object]]) -> int:
    """The block labelled as the baseline (before, base, without...), else the first."""
    return next((i for i, b in enumerate(blocks) if b["label"] and BASE_WORDS.search(str(b["label"]))), 0)


def _perf_rows(
    blocks: list[dict[str, object]], labels: list[str], events: dict[str, list[tuple[int, tuple]]]
) -> list[Row]:
    """A row per event: its mean and standard deviation in each block that counted it."""
    rows = []
    for event, found in events.items():
        sides = [_perf_side(blocks[i], labels[i], counter) for i, counter in found]
        line = found[0][1][4]
        rows.append(Row(event, line, sides, [None] * (len(sides) - 1)))
    return rows
