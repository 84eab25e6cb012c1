"""Classic ministat's statistics of a plain file by counting its distinct lines (issue 42).

A file of one plain number per line (digits, ``-``, ``.`` and newlines; blank lines skipped) in the
classic dialect: ministat prints N, Min, Max, Median (the upper middle value), Avg and Stddev from
``Σx`` and ``Σx²`` accumulated in input order in doubles, and plots the sorted values by column.
Here the lines are counted (``dict`` counting in C, no value list, no sort of every value), and:

* the order statistics and the plot's columns come from the distinct values, sorted, with their counts;
* for integers, ``Σx`` and ``Σx²`` are summed exactly as Python integers: when ``Σ|x|`` and ``Σx²``
  are at most 2**53, every partial sum of the doubles is an integer that a double holds, so the
  running sums in doubles are these exact sums, in any order;
* otherwise (decimals, or larger integers) the values are converted in input order, block by block,
  and summed left to right in doubles (the builtin ``sum`` before Python 3.12; a loop from 3.12,
  whose ``sum`` compensates).

Anything else -- another byte, a token ``float`` refuses, a line as long as fgets' buffer, ``-0``
(where a negative zero sorts among zeros is the list sort's), an infinite value, fewer than 3 values,
more than ``MAX_DISTINCT`` distinct lines -- gives None: the caller's general reader decides (its
values, its errors).  Standard library only: this is on ministat's start-up path.
"""

import sys
from _bisect import bisect_right  # (the C halves of bisect, operator, collections: built in, no import cost)
from _functools import reduce
from _io import BytesIO
from _operator import add, mul
from itertools import accumulate, islice

from abstat.ministat.dataset import SampleSet, c_int
from abstat.stats.descriptive import c_div, c_sqrt, one_pass_variance

try:
    from _collections import _count_elements  # collections.Counter's counting loop, in C
except ImportError:  # pragma: no cover -- another Python implementation

    def _count_elements(mapping, iterable):
        get = mapping.get
        for item in iterable:
            mapping[item] = get(item, 0) + 1


BLOCK, FIRST_BLOCK = 1 << 16, 1 << 14  # bytes read and split at a time
# more distinct lines than this, or than this share of the lines read: the list and its sort are cheaper
MAX_DISTINCT, DISTINCT_SHARE = 1 << 16, 0.5
SHARE_FROM = 1 << 16  # the share is of this many lines at least (distinct lines grow fastest at the start)
# decimals: more distinct lines than this, and a list of floats (or numpy's reader) is faster than looking
# each line's value up in a dictionary grown out of the processor's caches (perf-stat's "%.2f" of ~N(1234, 60))
MAX_DISTINCT_DECIMALS = 1 << 12
FEW = 8  # up to this many distinct lines of one length (TSC counts), a block's lines are counted by searches
_EXACT = 2**53
_INF = float("inf")
_PLAIN = b"0123456789-.\n"

if sys.version_info < (3, 12):
    _add_up = sum  # the builtin sum of floats adds them in order in a double before Python 3.12
else:  # pragma: no cover -- sum() compensates its rounding from 3.12; reduce adds as C does

    def _add_up(values, start: float) -> float:
        return reduce(add, values, start)


def _running_sums(tokens: list, total: float, squares: float, value_of: dict) -> tuple[float, float]:
    """Continue ``Σx`` and ``Σx²`` over the values of ``tokens`` (each looked up in *value_of*) left to
    right in doubles."""
    values = list(map(value_of.__getitem__, tokens))
    return _add_up(values, total), _add_up(map(mul, values, values), squares)


class CountedSampleSet(SampleSet):
    """A data set kept as its distinct values, ascending, and how often each occurs."""

    __slots__ = ("values", "times")

    def __init__(self, values: list, times: list, total: float, squares: float) -> None:
        n = sum(times)
        median = values[bisect_right(list(accumulate(times)), n // 2)]  # the upper middle value
        variance = one_pass_variance(n, total, squares)
        super().__init__(n, values[0], values[-1], median, total / n, variance, c_sqrt(variance))
        self.values = values
        self.times = times

    def column_counts(self, x0: float, dx: float) -> list[tuple[int, int]]:
        runs: list[tuple[int, int]] = []
        last = None
        count = 0
        for value, times in zip(self.values, self.times, strict=True):
            column = c_int(c_div(value - x0, dx))
            if column == last:
                count += times
            else:
                if last is not None:
                    runs.append((last, count))
                last = column
                count = times
        if last is not None:
            runs.append((last, count))
        return runs


def _blocks(source):
    """Blocks of whole lines (the last may lack its newline) of bytes or of a binary file at its start: a
    small one first (a few distinct lines found in it, the next are counted by searching)."""
    read = BytesIO(source).read if isinstance(source, bytes) else source.read
    tail = b""
    size = min(FIRST_BLOCK, BLOCK)
    while chunk := read(size):
        size = BLOCK
        cut = chunk.rfind(b"\n") + 1
        if cut:
            yield tail + chunk[:cut]
            tail = chunk[cut:]
        else:
            tail += chunk
    if tail:
        yield tail


def counted_sample_set(
    source, chunk: int, *, in_order: bool = True, share: float | None = None, most: int | None = None
) -> "CountedSampleSet | None":
    """The classic data set of *source* (bytes, or a binary file at its start: read again from its start
    when its integers' sums are too large to be exact), or None (see the module); *chunk*: fgets' buffer.

    Decimals (a dot in the first block) are summed in input order as they are read, each distinct line
    converted once and its value and square looked up per line; integers are counted as their lines,
    converted once per distinct line.  Without *in_order*, data whose sums need every value in order
    (decimals, integers too large for exact sums) gives None; more distinct lines than *share*
    (``DISTINCT_SHARE``) of those read (at least ``SHARE_FROM``), or than *most* (``MAX_DISTINCT``) too."""
    counts: dict = {}
    value_of: dict | None = None  # line -> value, when the values are summed as read (decimals)
    sums = 0.0, 0.0
    minus = False
    read = 0  # values counted so far
    limit = DISTINCT_SHARE if share is None else share
    cap = most or MAX_DISTINCT
    for block in _blocks(source):
        lines = _count_few(block, counts, value_of is None)
        if lines:
            read += lines
            continue
        tokens = _tokens(block, chunk, decimals_now=bool(counts) and value_of is None)
        if tokens is None:
            return None
        minus = minus or b"-" in block
        if value_of is None and not counts and b"." in block:
            if not in_order:
                return None
            value_of, cap = {}, min(cap, MAX_DISTINCT_DECIMALS)
        _count_elements(counts, tokens)
        if value_of is not None:
            summed = _summed(tokens, counts, value_of, sums)
            if summed is None:
                return None
            sums = summed
        read += len(tokens)
        if len(counts) > cap or len(counts) > limit * max(read, SHARE_FROM):
            return None  # (mostly distinct values: sorting them is faster)
    found = _integers(source, counts, in_order) if value_of is None else _decimals(counts, minus, value_of, sums)
    if found is None or sum(found[1]) < 3:
        return None  # (fewer than 3 values: the general reader's message)
    values, times, (total, squares) = found
    return CountedSampleSet(values, times, total, squares)


def _summed(tokens: list, counts: dict, value_of: dict, sums: tuple[float, float]) -> "tuple[float, float] | None":
    """``(Σx, Σx²)`` continued over the lines *tokens*, just counted in *counts*: the lines counted since the
    last call (the end of *counts*, in insertion order) are converted and added to *value_of*; None for a
    line that is not a number."""
    try:
        for token in islice(counts, len(value_of), None):
            value_of[token] = float(token)
    except ValueError:
        return None  # "-", "5-3", "1.2.3", "."
    return _running_sums(tokens, *sums, value_of)


def _count_few(block: bytes, counts: dict, integers: bool = True) -> int:
    """Count the lines of *block* when there are few distinct lines so far (``FEW``, all of one length, as
    TSC counts are) and every line of *block* is one of them: the number of lines, else 0 (nothing counted).

    ``block.count`` of a line preceded by a newline finds each line that starts with it; a line found is
    credited its length and newline, a line not found nothing, so the credits add up to the block's length
    only when every line is one of them, no longer, none blank.  Not for decimals (*integers* false), whose
    sums are taken line by line."""
    if not (integers and 0 < len(counts) <= FEW and block.endswith(b"\n")):
        return 0
    known = list(counts)
    width = len(known[0]) + 1
    if any(len(token) + 1 != width for token in known):
        return 0
    lined = b"\n" + block
    found = [lined.count(b"\n" + token) for token in known]
    lines = sum(found)
    if lines * width != len(block):
        return 0
    for token, times in zip(known, found, strict=True):
        counts[token] += times
    return lines


def _tokens(block: bytes, chunk: int, *, decimals_now: bool) -> "list[bytes] | None":
    """The lines of ``block`` that are not empty, or None: a byte but digits, "-", "." and newlines, a line
    fgets would cut in two, or (*decimals_now*: integers were read before) a dot."""
    if block.translate(None, _PLAIN) or (decimals_now and b"." in block):
        return None
    tokens = block.split()
    return None if _long_line(block, tokens, chunk) else tokens


def _long_line(block: bytes, tokens: list, chunk: int) -> bool:
    """Whether a line of ``block`` has ``chunk`` bytes or more: a line that long holds one of the aligned
    stretches of ``chunk // 2`` bytes whole, so when each has a newline, none is (a few searches, not a
    length per line)."""
    step = chunk // 2
    find = block.find
    if all(find(b"\n", start, start + step) >= 0 for start in range(0, len(block) - step + 1, step)):
        return False
    return bool(tokens) and max(map(len, tokens)) >= chunk


def _decimals(counts: dict, minus: bool, value_of: dict, sums: tuple) -> "tuple[list, list, tuple] | None":
    """(the distinct values ascending, how often each occurs, (Σx, Σx²)) of values counted, or None."""
    values, times = _merged(list(map(value_of.__getitem__, counts)), counts)
    if not values or values[0] == -_INF or values[-1] == _INF:
        return None  # (an overflowing number: the general reader's error)
    if minus and 0.0 in value_of.values():
        return None  # a zero, perhaps a negative one
    return values, times, sums


def _merged(numbers: list, counts: dict) -> tuple[list, list]:
    """The distinct values of *numbers* (one per line counted, in the order of *counts*) ascending, and
    how often each occurs ("7" and "007", "1.5" and "1.50" are one value)."""
    merged = dict(zip(numbers, counts.values(), strict=True))
    if len(merged) < len(numbers):
        merged = {}
        for number, times in zip(numbers, counts.values(), strict=True):
            merged[number] = merged.get(number, 0) + times
    ordered = sorted(merged)
    return ordered, list(map(merged.__getitem__, ordered))


def _integers(source, counts: dict, in_order: bool) -> "tuple[list, list, tuple] | None":
    """(the distinct values ascending, how often each occurs, (Σx, Σx²) as ministat's doubles) of lines
    counted, or None."""
    try:
        numbers = list(map(int, counts))
    except ValueError:
        return None  # "-", "5-3"
    if 0 in numbers and any(
        token.startswith(b"-") for token, number in zip(counts, numbers, strict=True) if not number
    ):
        return None  # -0: a negative zero
    numbers, times = _merged(numbers, counts)
    absolute = sum(map(mul, map(abs, numbers), times))
    squares = sum(map(mul, map(mul, numbers, numbers), times))
    if absolute <= _EXACT and squares <= _EXACT:
        return list(map(float, numbers)), times, (float(sum(map(mul, numbers, times))), float(squares))
    if not in_order:
        return None
    try:
        value_of = dict(zip(counts, map(float, map(int, counts)), strict=True))  # (large: rounded as strtod rounds)
    except OverflowError:
        return None  # beyond the doubles: the general reader's error
    if not isinstance(source, bytes):
        source.seek(0)
    sums = 0.0, 0.0
    for block in _blocks(source):
        sums = _running_sums(block.split(), *sums, value_of)
    return list(map(float, numbers)), times, sums
