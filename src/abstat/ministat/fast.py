"""numpy reader for large ministat inputs made of plain integers or plain
decimals (:mod:`abstat.ministat.decimals`).

A file qualifies when every line is ``[-]digits`` (at most 18 characters),
a plain decimal (``-1.25``) or empty, lines end in LF or CRLF (ministat
trims trailing white space), and the data set is taken from column 1.
Anything else (an exponent, a comment, a delimiter, a blank inside a
line...) returns None and the exact pure-Python reader is used instead, so
results never depend on which path ran.  :func:`array_sample_set` gives the
statistics of values read by either (as a numpy array).

Exactness: integers convert to doubles exactly as ``strtod`` rounds them;
ministat's running sums are accumulated in input order in doubles, which
``np.cumsum`` (a strictly sequential accumulation, unlike the pairwise
``np.sum``) reproduces bit for bit, block by block with the carry folded
into each block's first element.  When every partial sum is an integer
below 2**53 the sums are exact and integer arithmetic gives the same
doubles faster.  Memory: values are kept once, as int32 when they fit,
the file is read in 1 MiB blocks.
"""

from __future__ import annotations

import warnings

import numpy as np

from abstat.ministat.dataset import SampleSet, column_runs
from abstat.stats.descriptive import c_div, c_sqrt

READ_BLOCK = 1 << 20  # small blocks: the temporaries stay small beside the values
SUM_BLOCK = 1 << 20
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)
_EXACT = 2.0**53
# Integer data whose range is below this (and below n) takes the counting median.
COUNTING_RANGE = 1 << 22
_FORBIDDEN_DELIMITERS = frozenset(b"0123456789-")


class _NotSimple(Exception):
    """The input is not plain integers: use the general reader."""


class IntegerSampleSet(SampleSet):
    """A :class:`SampleSet` whose values live in a numpy array (integers, or doubles)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray, **stats) -> None:
        super().__init__(
            stats["n"],
            stats["minimum"],
            stats["maximum"],
            stats["median"],
            stats["mean"],
            stats["variance"],
            stats["stddev"],
        )
        self.values = values

    def column_counts(self, x0: float, dx: float) -> list[tuple[int, int]]:
        values = self.values
        if not (dx == dx and x0 == x0) or dx == 0:
            return column_runs(np.sort(values).tolist(), x0, dx)
        counted = _count_columns(values, x0, dx)
        if counted is None:
            return column_runs(np.sort(values).tolist(), x0, dx)  # C's int conversion overflows
        blocks, counts_by_column = counted
        if not blocks and not counts_by_column:
            return []
        return _merged_counts(blocks, counts_by_column)


def _merged_counts(blocks: list[np.ndarray], counts_by_column: dict[int, int]) -> list[tuple[int, int]]:
    """(column, count) of every occupied column: the blocks' counts added up, with the columns counted apart."""
    size = max((len(counts) for counts in blocks), default=0)
    total = np.zeros(size, dtype=np.int64)
    for counts in blocks:
        total[: len(counts)] += counts
    if counts_by_column:
        for column, count in np.ndenumerate(total):
            if count:
                counts_by_column[column[0]] = counts_by_column.get(column[0], 0) + int(count)
        return sorted(counts_by_column.items())
    occupied = np.flatnonzero(total)
    return [(int(column), int(total[column])) for column in occupied]


def _count_columns(values: np.ndarray, x0: float, dx: float) -> tuple[list[np.ndarray], dict[int, int]] | None:
    """The points per plot column ``(int)((x - x0) / dx)``, block by block: dense counts (bincount) per
    block, and a dict for the columns of a very wide plot; None when a column overflows C's int."""
    counts_by_column: dict[int, int] = {}
    blocks = []
    for start in range(0, len(values), SUM_BLOCK):
        block = values[start : start + SUM_BLOCK].astype(np.float64)
        block -= x0
        block /= dx
        if not (float(block.min()) >= 0.0 and float(block.max()) < 2147483648.0):
            return None
        columns = block.astype(np.int64)
        if int(columns.max()) < (1 << 22):
            blocks.append(np.bincount(columns))
        else:  # a very wide plot: count without a huge dense array
            found, counts = np.unique(columns, return_counts=True)
            for column, count in zip(found.tolist(), counts.tolist()):
                counts_by_column[column] = counts_by_column.get(column, 0) + count
    return blocks, counts_by_column


def _decimals(block: bytes) -> np.ndarray:
    """The decimals (float64) of a block with a dot, or raise _NotSimple."""
    from abstat.ministat.decimals import parse_decimal_block

    values = parse_decimal_block(block)
    if values is None:
        raise _NotSimple
    return values


def _parse_block(block: bytes) -> np.ndarray:
    """Integers (int64) or decimals (float64) of a block of complete lines, or raise _NotSimple."""
    if b"\r" in block:  # CRLF: ministat trims the CR with the rest of the trailing white space
        block = block.replace(b"\r\n", b"\n")
        if b"\r" in block:
            raise _NotSimple
    if b"." in block:
        return _decimals(block)
    raw = np.frombuffer(block, dtype=np.uint8)
    newlines = block.count(b"\n")
    minus = int(np.count_nonzero(raw == 45))
    digits = int(np.count_nonzero((raw - np.uint8(48)) < 10))
    if digits + newlines + minus != len(raw):
        raise _NotSimple  # anything but digits, "-" and newlines
    blank = _blank_lines(block, raw)
    if minus:
        _check_minus_signs(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            values = np.fromstring(block, dtype=np.int64, sep="\n")
        except (ValueError, DeprecationWarning):
            raise _NotSimple from None
    if len(values) != newlines - blank:
        raise _NotSimple
    if len(values):
        _check_integers(values, minus)
    return values


def _check_integers(values: np.ndarray, minus: int) -> None:
    """Raise _NotSimple when numpy may have read an integer differently from strtod (overflow, "-0")."""
    low = int(values.min())
    high = int(values.max())
    if high == _INT64_MAX or low == _INT64_MIN:
        raise _NotSimple  # numpy saturates on overflow: let strtod decide
    if minus and int(np.count_nonzero(values < 0)) != minus:
        raise _NotSimple  # "-0" is the double -0.0: leave it to strtod


def _blank_lines(block: bytes, raw: np.ndarray) -> int:
    """The number of empty lines in a block of complete lines (``raw``: its bytes as an array)."""
    if not (block.startswith(b"\n") or b"\n\n" in block):
        return 0
    ends = np.flatnonzero(raw == 10)
    return int(np.count_nonzero(np.diff(ends, prepend=-1) == 1))


def _check_minus_signs(raw: np.ndarray) -> None:
    """Raise _NotSimple unless every "-" starts a line and a digit follows it."""
    where = np.flatnonzero(raw == 45)
    after = raw[where + 1]
    if not bool(np.all((after >= 48) & (after <= 57))):
        raise _NotSimple  # a lone "-" or "--5"
    before_ok = np.ones(len(where), dtype=bool)
    inner = where > 0
    before_ok[inner] = raw[where[inner] - 1] == 10
    if not bool(np.all(before_ok)):
        raise _NotSimple  # "5-3"


def _blocks(source):
    """Blocks of complete lines from a binary file object or bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield from _byte_blocks(bytes(source))
        return
    tail = b""
    while True:
        chunk = source.read(READ_BLOCK)
        if not chunk:
            break
        chunk = tail + chunk if tail else chunk
        cut = chunk.rfind(b"\n")
        if cut < 0:
            tail = chunk
            if len(tail) > READ_BLOCK:
                raise _NotSimple  # a huge line: not a plain integer file
            continue
        tail = chunk[cut + 1 :]
        yield chunk[: cut + 1]
    if tail:
        yield tail + b"\n"


def _byte_blocks(data: bytes):
    """Blocks of complete lines of ``data``, each about READ_BLOCK long (a longer line whole)."""
    start = 0
    size = len(data)
    while start < size:
        if start + READ_BLOCK >= size:
            end = size - 1
        else:
            end = data.rfind(b"\n", start, start + READ_BLOCK)
            if end < 0:
                end = data.find(b"\n", start + READ_BLOCK)
                if end < 0:
                    end = size - 1
        block = data[start : end + 1]
        start = end + 1
        yield block if block.endswith(b"\n") else block + b"\n"


class _Store:
    """Growable integer array, int32 while the values fit."""

    def __init__(self, capacity: int) -> None:
        self.array = np.empty(max(capacity, 16), dtype=np.int32)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        if len(values) == 0:
            return
        self._fit(values)
        needed = self.size + len(values)
        if needed > len(self.array):
            self._grow(needed)
        self.array[self.size : needed] = values
        self.size = needed

    def _fit(self, values: np.ndarray) -> None:
        """A type that holds ``values`` too: float64 for decimals, int64 for integers beyond int32."""
        if values.dtype.kind == "f" and self.array.dtype.kind != "f":
            self._convert(np.float64)  # integers so far convert as strtod rounds them
        elif self.array.dtype == np.int32 and (int(values.min()) < -(2**31) or int(values.max()) >= 2**31):
            self._convert(np.int64)

    def _grow(self, needed: int) -> None:
        """Room for ``needed`` values at least (twice the capacity, when that is more)."""
        grown = np.empty(max(needed, 2 * len(self.array)), dtype=self.array.dtype)
        grown[: self.size] = self.array[: self.size]
        self.array = grown

    def _convert(self, dtype: type) -> None:
        """The same capacity in ``dtype``: only the values held are copied (the rest of
        the capacity stays untouched, so it takes no memory)."""
        converted: np.ndarray = np.empty(len(self.array), dtype=dtype)
        converted[: self.size] = self.array[: self.size]
        self.array = converted


def _sequential_sum(values: np.ndarray, square: bool, shift: float = 0.0) -> float:
    """Σ v (or Σ (v - shift)²) accumulated left to right in doubles."""
    carry = 0.0
    for start in range(0, len(values), SUM_BLOCK):
        block = values[start : start + SUM_BLOCK].astype(np.float64)
        if shift:
            block -= shift
        if square:
            block *= block
        block[0] += carry
        np.cumsum(block, out=block)
        carry = float(block[-1])
    return carry


def _exact_sum_of_squares(values: np.ndarray) -> int:
    total = 0
    for start in range(0, len(values), SUM_BLOCK):
        block = values[start : start + SUM_BLOCK].astype(np.int64)
        total += int(np.dot(block, block))
    return total


def _counting_order_statistic(values: np.ndarray, rank: int, low: int, high: int) -> int:
    """The *rank*-th smallest value (0-based) from a histogram of the values."""
    counts = np.zeros(high - low + 1, dtype=np.int64)
    for start in range(0, len(values), SUM_BLOCK):
        block = values[start : start + SUM_BLOCK].astype(np.int64)
        block -= low
        found = np.bincount(block)
        counts[: len(found)] += found
    np.cumsum(counts, out=counts)
    return low + int(np.searchsorted(counts, rank, side="right"))


def order_statistic(values: np.ndarray, rank: int) -> float:
    """``sorted(values)[rank]`` as a double, for an integer array.

    Integers within a small range (quantized data such as TSC cycles, where
    ``ndarray.partition`` can degrade badly with few distinct values) are
    counted; the rest are partitioned in place.  Both give the same element.
    """
    if values.dtype.kind == "i":
        low = int(values.min())
        high = int(values.max())
        if high - low < COUNTING_RANGE and high - low <= len(values):
            return float(_counting_order_statistic(values, rank, low, high))
    values.partition(rank)
    return float(values[rank])


def integer_sample_set(source, *, dialect: str = "classic", column: int = 1, delimiters: bytes = b" \t"):
    """Read a data set of plain integers or decimals with numpy; None when not applicable.

    *source* is a binary file object positioned at its start, or bytes.
    The result equals ``sample_set(read_ministat(...), dialect)``.
    """
    if column != 1 or _FORBIDDEN_DELIMITERS.intersection(delimiters):
        return None
    store = _Store(_capacity(source))
    try:
        for block in _blocks(source):
            store.extend(_parse_block(block))
    except _NotSimple:
        return None
    values = store.array[: store.size]
    if len(values) < 3:
        return None  # let the general reader report it with its message
    return array_sample_set(values, dialect)


def _capacity(source) -> int:
    """As many values as the data could hold (one a line of a digit and a newline); a megabyte of them for a
    file whose size is not known."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source) // 2 + 1
    try:
        import os

        return os.fstat(source.fileno()).st_size // 2 + 1
    except (OSError, AttributeError, ValueError):
        return 1 << 20


def array_sample_set(values: np.ndarray, dialect: str = "classic") -> IntegerSampleSet:
    """The statistics of *values* (in input order; reordered in place) as ministat
    computes them: ``sample_set(values.tolist(), dialect)`` without a list."""
    n = len(values)
    integer = values.dtype.kind == "i"
    biggest = max(abs(int(values.min())), abs(int(values.max()))) if integer else _EXACT
    if n * biggest < _EXACT:
        total = float(int(values.sum(dtype=np.int64)))
    else:
        total = _sequential_sum(values, square=False)
    mean = total / n
    half = n // 2
    if dialect == "freebsd":
        values.sort()
        median = (float(values[half]) + float(values[half - 1])) / 2 if n % 2 == 0 else float(values[half])
        variance = c_div(_sequential_sum(values, square=True, shift=mean), n - 1.0)
    else:
        if n * biggest * biggest < _EXACT:
            squares = float(_exact_sum_of_squares(values))
        else:
            squares = _sequential_sum(values, square=True)
        variance = (squares - total * total / n) / (n - 1.0) if n > 1 else c_div(squares - total * total / n, 0.0)
        median = order_statistic(values, half)
    return IntegerSampleSet(
        values,
        n=n,
        minimum=float(values.min()),
        maximum=float(values.max()),
        median=median,
        mean=mean,
        variance=variance,
        stddev=c_sqrt(variance),
    )
