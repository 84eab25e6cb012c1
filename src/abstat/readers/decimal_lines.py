"""Files of one decimal number per line parsed by numpy, each value Python's ``float`` of its line (issue 42).

:func:`parse_lines` takes the bytes of a file holding only digits, ``+-.eE`` and line ends (the caller
checks), and returns the float64 values of its lines that are not empty, in order, or None when any line
is not a number ``float`` reads (the caller's general reader then says which and where).

How: the lines are grouped by their length and, within a length, by where their non-digit bytes are; a
group's lines are the rows of a matrix, so every line of a group has the same layout (sign, digits, dot,
exponent marker, exponent sign, exponent digits), checked once against ``float``'s grammar. A line's
digits make an integer significand ``w`` (at most 19 digits: exact in uint64) and its dot and exponent a
power of ten ``q``.  The value is then exact by one of two proofs, per line:

* Clinger's: ``w < 2**53`` and ``|q| <= 22``: ``w`` and ``10**|q|`` are exact doubles, so one IEEE
  multiplication or division rounds the exact value correctly;
* Eisel and Lemire's: ``w`` shifted to 64 bits times ``floor(5**q * 2**(s + 64))`` (128 bits, a table
  made here with Python integers) gives a product whose top 128 bits are below the exact value's by less
  than 2 (the low half of the power is only multiplied in where the first product's bits leave it open);
  its top 54 bits are the exact value's unless the 9 bits below them are all ones and its low 64 bits
  within 2 of a carry, and rounding is decided unless the product sits exactly on a half-way point.

Those lines, lines of more than 19 digits, and values outside the normal range are read by ``float`` itself.

Lines of more than ``MAX_LINE`` bytes, a lone CR, or a layout ``float`` refuses give None.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any, NamedTuple

import numpy as np

MAX_LINE = 40
MAX_DIGITS = 19  # 10**19 < 2**64
# float's grammar for these bytes (the lines of a group share it; a group mixing layouts -- or two layouts
# whose keys collide -- has a column of mixed kinds: None)
_LAYOUT = re.compile(r"s?(D+\.?D*|\.D+)(es?D+)?")
_U64 = np.uint64
_LOW32 = _U64(0xFFFFFFFF)
_POW10 = 10.0 ** np.arange(23)
# x87 extended precision (Linux and BSD on x86-64): a 64-bit significand, stored in 16 bytes
_EXTENDED = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16 and sys.byteorder == "little"
_POW10_EXTENDED = np.array([10**k for k in range(28)], dtype=np.longdouble)  # exact: 5**27 < 2**64
_ZEROS = _U64(0x3030303030303030)
_HIGH = _U64(0x8080808080808080)
_BYTE_MASKS = np.array([(1 << 8 * k) - 1 for k in range(9)], dtype=np.uint64)
_LOW_NIBBLES = _U64(0x0F0F0F0F0F0F0F0F)
_COMBINE = (  # 10 * 2**8 + 1 ...: each step adds ten (100, 10**4) times the left neighbour to each digit group
    (_U64(2561), _U64(8), _U64(0x00FF00FF00FF00FF)),
    (_U64(6553601), _U64(16), _U64(0x0000FFFF0000FFFF)),
    (_U64(42949672960001), _U64(32), None),
)
_Q_MIN, _Q_MAX = -342, 308


def _table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``floor(5**q * 2**(s + 64))`` in [2**127, 2**128) as high and low 64 bits, and ``s``, for q from
    _Q_MIN to _Q_MAX."""
    powers, shifts = [], []
    for q in range(_Q_MIN, _Q_MAX + 1):
        if q >= 0:
            shift = 128 - (5**q).bit_length()
            power = 5**q << shift if shift >= 0 else 5**q >> -shift
        else:
            shift = 127 + (5**-q).bit_length()
            power = (1 << shift) // 5**-q
        powers.append(power)
        shifts.append(shift - 64)
    mask = (1 << 64) - 1
    high = np.array([power >> 64 for power in powers], dtype=np.uint64)
    low = np.array([power & mask for power in powers], dtype=np.uint64)
    return high, low, np.array(shifts, dtype=np.int64)


_POWERS, _POWERS_LOW, _SHIFTS = _table()


class _Rows(NamedTuple):
    """Lines of one length: line ``i`` is ``base[offset + i * stride :][:length]``; ``base`` runs at least 8
    bytes past the last line (whole 8-byte words are read at any column); ``ends``: where they end in the
    (newline-ended) data."""

    base: np.ndarray
    offset: int
    stride: int
    size: int
    length: int
    ends: np.ndarray

    def column(self, column: int, dtype: str = "u1") -> np.ndarray:
        """Byte ``column`` of every line (``<u8``: the 8 bytes from there, the first the lowest)."""
        return np.ndarray((self.size,), dtype, self.base, self.offset + column, (self.stride,))

    def matrix(self, extra: int = 0) -> np.ndarray:
        """The lines as the rows of a matrix (a view), with ``extra`` bytes after each."""
        return np.ndarray((self.size, self.length + extra), "u1", self.base, self.offset, (self.stride, 1))


def parse_lines(data: bytes) -> np.ndarray | None:
    """The values of the lines of ``data`` that are not empty, each ``float(line)``, or None (see the module;
    any byte but digits, ``+-.eE`` and line ends gives None)."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            return None
    if not data.endswith(b"\n"):
        data += b"\n"
    width = data.find(b"\n")
    count = len(data) // (width + 1)
    if 0 < width <= MAX_LINE and count * (width + 1) == len(data):
        pattern = data.translate(_PATTERN)  # lines of one length and layout tile the data: read in place
        if _tiled(pattern, width + 1):
            return None if b"?" in pattern[:width] else _one_layout(data, width, count, pattern[:width].decode())
    if data.translate(None, b"0123456789+-.eE\n"):
        return None
    return _lines_of_any_length(data)


def _tiled(pattern: bytes, stride: int) -> bool:
    """Every ``stride`` bytes of ``pattern`` (its length a multiple of it) the same as its first (what
    ``pattern.count(first) == len(pattern) // stride`` says): its first ``lcm(stride, 8)`` bytes tiled by
    them, and the rest compared with those as uint64 words, a period a row (the bytes after the last whole
    period with the period's start)."""
    first = pattern[:stride]
    period = math.lcm(stride, 8)
    if len(pattern) < 4 * period:
        return pattern == first * (len(pattern) // stride)
    whole = len(pattern) // period * period
    if pattern[:period] != first * (period // stride) or pattern[whole:] != pattern[: len(pattern) - whole]:
        return False
    words = np.frombuffer(pattern, np.uint64, whole // 8).reshape(-1, period // 8)
    return bool((words == words[0]).all())


def _one_layout(data: bytes, width: int, count: int, layout: str) -> np.ndarray | None:
    """The values of ``count`` lines of ``width`` bytes and one layout: read where they are, the last line
    or few (8 bytes are read at a time: past the end of the data there) by ``float``."""
    if not _LAYOUT.fullmatch(layout):
        return None
    values = np.empty(count)
    inside = max(count - 8 // (width + 1) - 1, 0)
    ends = np.arange(width, inside * (width + 1), width + 1)
    if inside:
        values[:inside] = _parse_layout(
            data, _Rows(np.frombuffer(data, np.uint8), 0, width + 1, inside, width, ends), layout
        )
    for row in range(inside, count):
        values[row] = float(data[row * (width + 1) : row * (width + 1) + width])
    return values


def _pattern_table() -> bytes:
    """Digits to D, signs to s, exponent markers to e, dots and newlines kept, any other byte to "?"."""
    table = bytearray(b"?" * 256)
    for kind, found in ((b"D", b"0123456789"), (b"s", b"+-"), (b"e", b"eE"), (b".", b"."), (b"\n", b"\n")):
        for byte in found:
            table[byte] = kind[0]
    return bytes(table)


_PATTERN = _pattern_table()


def _lines_of_any_length(data: bytes) -> np.ndarray | None:
    """The values of lines of any lengths: grouped by length and non-digit bytes (hashed to 16 bits to be
    sorted by radix, then compared exactly; lines of digits around one dot, as ``repr`` writes most floats:
    by length and the dot's place), each group gathered into the rows of a matrix."""
    base = np.frombuffer(data + b"0" * (MAX_LINE + 8), dtype=np.uint8)
    ends = np.flatnonzero(base[: len(data)] == 10)
    lengths = np.diff(ends, prepend=-1) - 1
    if int(lengths.min()) == 0:
        keep = lengths > 0
        ends, lengths = ends[keep], lengths[keep]
    if not len(ends) or int(lengths.max()) > MAX_LINE:
        return None
    starts = ends - lengths
    keys = _dotted(data, base, starts, ends)
    words = [] if keys is not None else _non_digits(base, starts, lengths)  # (keys exact: nothing to compare)
    if keys is None:
        mixed = lengths.astype(np.uint64)
        for word in words:
            mixed *= _U64(0x9E3779B97F4A7C15)
            mixed += word
        mixed *= _U64(0xBF58476D1CE4E5B9)
        keys = (mixed >> _U64(48)).astype(np.uint16)
    order = np.argsort(keys, kind="stable")
    values = np.empty(len(ends))
    for mine in np.split(order, np.flatnonzero(np.diff(keys[order])) + 1):
        first, length = mine[0], int(lengths[mine[0]])
        if words and not all(bool((word[mine] == word[first]).all()) for word in [lengths, *words]):
            return None  # two layouts with one key: left to the general reader
        windows = np.lib.stride_tricks.as_strided(base, shape=(len(base) - length - 7, length + 8), strides=(1, 1))
        lines = _Rows(windows[starts[mine]].ravel(), 0, length + 8, len(mine), length, ends[mine])
        found = _parse_layout(data, lines, lines.matrix()[0].tobytes().translate(_PATTERN).decode())
        if found is None:
            return None
        values[mine] = found
    return values


def _dotted(data: bytes, base: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Each line's layout as a number (its length, where its dot is, whether a minus leads it) when every
    line is digits around one dot, a minus at most before them; else None."""
    if data.translate(None, b"0123456789.-\n"):
        return None
    dots = np.flatnonzero(base[: len(data)] == 46)  # (one a line: the i-th dot in the i-th line)
    if len(dots) != len(ends) or not (bool((dots < ends).all()) and bool((dots >= starts).all())):
        return None
    keys = ((ends - starts) * 128 + (dots - starts) * 2).astype(np.uint16)  # (< 2**13: sorted by radix)
    if b"-" in data:
        minus = base[starts] == 45
        if int(np.count_nonzero(base[: len(data)] == 45)) != int(np.count_nonzero(minus)):
            return None  # a minus inside a line
        keys += minus
    return keys


def _non_digits(base: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    """Each line's bytes 8 at a time (uint64, the first the lowest), digits and bytes past its end made 0
    (SIMD within a register)."""
    windows = np.ndarray((len(base) - 7,), "<u8", base, 0, (1,))
    words = []
    shortest = int(lengths.min())
    for start in range(0, int(lengths.max()), 8):
        word = windows[starts + start] ^ _ZEROS  # digits 0..9, the other bytes above 9
        other = word + _U64(0x7676767676767676)  # no carry: no byte above 0x75 here
        other &= _HIGH
        other >>= _U64(7)
        other *= _U64(0xFF)
        word &= other
        if start + 8 > shortest:
            word &= _BYTE_MASKS[np.clip(lengths - start, 0, 8)]  # the line's bytes only
        words.append(word)
    return words


def _parse_layout(data: bytes, lines: _Rows, layout: str) -> np.ndarray | None:
    """The values of lines of one layout, or None: the layout is not a number's."""
    if not _LAYOUT.fullmatch(layout):
        return None
    mantissa, _, _ = layout.partition("e")
    runs = [(match.start(), match.end()) for match in re.finditer("D+", mantissa)]
    q = _powers(lines, layout)
    if q is None or sum(end - start for start, end in runs) > MAX_DIGITS:
        found, failed = np.zeros(lines.size), np.ones(lines.size, dtype=bool)
    else:
        found, failed = _values(_significands(lines, runs), q)
    if layout[0] == "s":
        np.negative(found, out=found, where=lines.column(0) == 45)
    if failed.any():
        _by_float(data, lines, found, failed)
    return found


def _powers(lines: _Rows, layout: str) -> Any:
    """The power of ten of each line's digits read as an integer: minus the digits after the dot, plus the
    exponent written after the marker (a sign, then at most 8 digits); None: more."""
    mantissa, marker, exponent = layout.partition("e")
    dot = mantissa.find(".")
    q = 0 if dot < 0 else dot + 1 - len(mantissa)
    if not marker:
        return q
    first = len(mantissa) + 1 + exponent.startswith("s")
    if len(layout) - first > 8:
        return None
    written = _digits(lines, first, len(layout) - first).astype(np.int64)
    if exponent.startswith("s"):
        np.negative(written, out=written, where=lines.column(first - 1) == 45)
    return written + q


def _significands(lines: _Rows, runs: list[tuple[int, int]]) -> np.ndarray:
    """The digits of the runs of each line as one integer (at most 19 digits: exact in uint64)."""
    total = None
    for start, end in runs:
        part = _digits(lines, start, end - start)
        total = part if total is None else total * _U64(10 ** (end - start)) + part
    assert total is not None
    return total


def _digits(lines: _Rows, start: int, size: int) -> np.ndarray:
    """The number written by ``size`` digits from column ``start`` of each line, 8 at a time: each 8 bytes
    read as one uint64 (the first the lowest) and combined in three multiply-and-shift steps (SIMD within a
    register, as simdjson does); a first chunk of one or two digits byte by byte (fewer passes)."""
    first = size % 8 or 8
    total = _few_digits(lines, start, first) if first <= 2 else _eight_digits(lines, start, first)
    for at in range(start + first, start + size, 8):
        total *= _U64(10**8)
        total += _eight_digits(lines, at, 8)
    return total


def _few_digits(lines: _Rows, start: int, size: int) -> np.ndarray:
    total = lines.column(start).astype(np.uint64) & _U64(15)
    for at in range(start + 1, start + size):
        total *= _U64(10)
        total += lines.column(at) & np.uint8(15)
    return total


def _eight_digits(lines: _Rows, start: int, size: int) -> np.ndarray:
    word = lines.column(start, "<u8") & _LOW_NIBBLES  # "0".."9" -> 0..9
    if size < 8:
        word <<= _U64(64 - 8 * size)  # the chunk's bytes high, zeros (digits 0) coming in below
    for factor, shift, mask in _COMBINE:
        word *= factor
        word >>= shift
        if mask:
            word &= mask
    return word


def _values(w: np.ndarray, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """The doubles nearest ``w * 10**q`` and the lines neither proof covers (see the module)."""
    q = np.asarray(q)
    if bool(w.max() < 2**53) and int(q.min()) >= -22 and int(q.max()) <= 22:
        values = w.astype(np.float64)
        np.multiply(values, _POW10[np.maximum(q, 0)], out=values)
        np.divide(values, _POW10[np.maximum(-q, 0)], out=values)
        return values, np.zeros(len(w), dtype=bool)
    if _EXTENDED and int(q.min()) >= -27 and int(q.max()) <= 27:
        return _extended(w, q)
    return _eisel_lemire(w, np.broadcast_to(q, w.shape))


def _extended(w: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``w * 10**q`` rounded once to x87's 64-bit significand (``w`` and ``10**|q|``, |q| <= 27, are exact
    there), then to 53 bits: the nearest double unless the first rounding landed on a half-way point
    between two doubles (its 11 low bits 10000000000), where the line is left to ``float``."""
    values = w.astype(np.longdouble)
    if int(q.max()) > 0:
        np.multiply(values, _POW10_EXTENDED[np.maximum(q, 0)], out=values)
    if int(q.min()) < 0:
        np.divide(values, _POW10_EXTENDED[np.maximum(-q, 0)], out=values)
    low_bits = values.view(np.uint64)[::2] & _U64(0x7FF)  # x86's 80-bit format: the significand first
    return values.astype(np.float64), low_bits == _U64(0x400)


def _eisel_lemire(w: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    zero = w == 0
    inside = (q >= _Q_MIN) & (q <= _Q_MAX)
    index = np.where(inside, q - _Q_MIN, 0)
    bits = np.frexp(np.maximum(w, _U64(1)).astype(np.float64))[1]  # w's bit length, or one more (rounded up)
    bits -= (w >> (bits - 1).astype(np.uint64)) == 0
    zeros = 64 - bits
    w = w << zeros.astype(np.uint64)
    high, low = _multiply(w, _POWERS[index])
    _add_second_product(w, index, high, low)
    upper = (high >> _U64(63)).astype(np.int64)
    shift = upper + 9
    mantissa = high >> shift.astype(np.uint64)
    below = high & ((_U64(1) << shift.astype(np.uint64)) - _U64(1))
    unsure = ((high & _U64(0x1FF)) == _U64(0x1FF)) & (low >= _U64(2**64 - 2))  # the error could carry
    unsure |= ((mantissa & _U64(1)) == _U64(1)) & (below == 0) & (low == 0)  # exactly half-way?
    mantissa += mantissa & _U64(1)
    mantissa >>= _U64(1)
    power = 65 + shift + q - _SHIFTS[index] - zeros
    unsure |= (power < -1000) | (power > 960) | ~inside
    values = np.ldexp(mantissa.astype(np.float64), np.clip(power, -1100, 960).astype(np.int32))
    values[zero] = 0.0
    return values, unsure & ~zero


def _add_second_product(w: np.ndarray, index: np.ndarray, high: np.ndarray, low: np.ndarray) -> None:
    """Where the first product's 9 bits below the rounding bit are all ones, add the high half of ``w`` times
    the power's low 64 bits (in place): the 128-bit product is then below the exact one by less than 2."""
    where = np.flatnonzero((high & _U64(0x1FF)) == _U64(0x1FF))
    if not len(where):
        return
    added = low[where] + _multiply(w[where], _POWERS_LOW[index[where]])[0]
    high[where] += added < low[where]  # the carry
    low[where] = added


def _multiply(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 128-bit products of two uint64 arrays, as (high, low) 64-bit halves."""
    a1, a0 = a >> _U64(32), a & _LOW32
    b1, b0 = b >> _U64(32), b & _LOW32
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    middle = (p00 >> _U64(32)) + (p01 & _LOW32) + (p10 & _LOW32)
    low = (middle << _U64(32)) | (p00 & _LOW32)
    high = a1 * b1 + (p01 >> _U64(32)) + (p10 >> _U64(32)) + (middle >> _U64(32))
    return high, low


def _by_float(data: bytes, lines: _Rows, found: np.ndarray, failed: np.ndarray) -> None:
    """``float`` of the lines ``failed`` (their values into ``found``)."""
    where = np.flatnonzero(failed)
    for row, end in zip(where.tolist(), lines.ends[where].tolist(), strict=True):
        found[row] = float(data[end - lines.length : end])
