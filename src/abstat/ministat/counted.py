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
from _operator import mul
from itertools import accumulate

from abstat.ministat.dataset import SampleSet, c_int
from abstat.stats.descriptive import c_div, c_sqrt, one_pass_variance

try:
    from _collections import _count_elements  # collections.Counter's counting loop, in C
except ImportError:  # pragma: no cover -- another Python implementation

    def _count_elements(mapping, iterable):
        get = mapping.get
        for item in iterable:
            mapping[item] = get(item, 0) + 1


BLOCK = 1 << 18  # bytes read and split at a time
# more distinct lines than this, or than this share of the lines read: the list and its sort are cheaper
MAX_DISTINCT, DISTINCT_SHARE = 1 << 16, 0.5
_EXACT = 2**53
_INF = float("inf")
_PLAIN = b"0123456789-.\n"

if sys.version_info < (3, 12):

    def _running_sums(values: list, total: float, squares: float) -> tuple[float, float]:
        """Continue ``Σx`` and ``Σx²`` over ``values`` left to right in doubles (the builtin ``sum`` of
        floats adds them in order in a double before Python 3.12)."""
        return sum(values, total), sum(map(mul, values, values), squares)

else:  # pragma: no cover -- sum() compensates its rounding from 3.12

    def _running_sums(values: list, total: float, squares: float) -> tuple[float, float]:
        for value in values:
            total += value
            squares += value * value
        return total, squares


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
    """Blocks of whole lines (the last may lack its newline) of bytes or of a binary file at its start."""
    if isinstance(source, bytes):
        yield source
        return
    tail = b""
    while chunk := source.read(BLOCK):
        cut = chunk.rfind(b"\n") + 1
        if cut:
            yield tail + chunk[:cut]
            tail = chunk[cut:]
        else:
            tail += chunk
    if tail:
        yield tail


def counted_sample_set(
    source, chunk: int, *, in_order: bool = True, share: float | None = None
) -> "CountedSampleSet | None":
    """The classic data set of *source* (bytes, or a binary file at its start: read again from its start
    when its integers' sums are too large to be exact), or None (see the module); *chunk*: fgets' buffer.

    Decimals (a dot in the first block) are converted and summed in input order as they are read, and
    their values counted; integers are counted as their lines, converted once per distinct line.  Without
    *in_order*, data whose sums need every value converted in order (decimals, integers too large for
    exact sums) gives None; more distinct lines than *share* (``DISTINCT_SHARE``) of those read too: at a
    megabyte and more numpy's reader is faster there."""
    counts: dict = {}
    sums = None  # (Σx, Σx²) so far, in doubles, when the values are converted as read
    minus = False
    read = 0  # values counted so far
    for block in _blocks(source):
        tokens = _tokens(block, chunk, decimals_now=bool(counts) and sums is None)
        if tokens is None:
            return None
        minus = minus or b"-" in block
        if sums is None and not counts and b"." in block:
            if not in_order:
                return None
            sums = 0.0, 0.0
        counted: list = tokens  # lines, or the values of lines with dots
        if sums is not None:
            try:
                counted = list(map(float, tokens))
            except ValueError:
                return None  # "-", "5-3", "1.2.3", "."
            sums = _running_sums(counted, *sums)
        _count_elements(counts, counted)
        read += len(tokens)
        if len(counts) > MAX_DISTINCT or len(counts) > (DISTINCT_SHARE if share is None else share) * read:
            return None  # (mostly distinct values: sorting them is faster)
    found = _integers(source, counts, in_order) if sums is None else _decimals(counts, minus, sums)
    if found is None or sum(found[1]) < 3:
        return None  # (fewer than 3 values: the general reader's message)
    values, times, (total, squares) = found
    return CountedSampleSet(values, times, total, squares)


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


def _decimals(counts: dict, minus: bool, sums: tuple) -> "tuple[list, list, tuple] | None":
    """(the distinct values ascending, how often each occurs, (Σx, Σx²)) of values counted, or None."""
    values = sorted(counts)
    if not values or values[0] == -_INF or values[-1] == _INF:
        return None  # (an overflowing number: the general reader's error)
    if minus and 0.0 in counts:
        return None  # a zero, perhaps a negative one
    return values, list(map(counts.__getitem__, values)), sums


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
    merged = dict(zip(numbers, counts.values(), strict=True))
    if len(merged) < len(numbers):  # "7" and "007" are one value
        merged = {}
        for number, times in zip(numbers, counts.values(), strict=True):
            merged[number] = merged.get(number, 0) + times
    numbers = sorted(merged)
    times = list(map(merged.__getitem__, numbers))
    absolute = sum(map(mul, map(abs, numbers), times))
    squares = sum(map(mul, map(mul, numbers, numbers), times))
    if absolute <= _EXACT and squares <= _EXACT:
        return list(map(float, numbers)), times, (float(sum(map(mul, numbers, times))), float(squares))
    if not in_order:
        return None
    try:
        values = list(map(float, numbers))  # (large: rounded as strtod rounds)
    except OverflowError:
        return None  # beyond the doubles: the general reader's error
    if not isinstance(source, bytes):
        source.seek(0)
    sums = 0.0, 0.0
    for block in _blocks(source):
        sums = _running_sums(list(map(float, block.split())), *sums)
    return values, times, sums
