"""numpy reader for blocks of plain decimal numbers (what ``time`` and
``perf stat`` print: ``1.048``, ``-0.25``, ``12.``, ``.5``), one per line.

Exactness: a line's digits make an integer mantissa ``m`` (the dot left
out) and ``f`` digits follow the dot; when ``m < 2**53`` and ``f <= 22``
both ``m`` and ``10**f`` are exact doubles, so the IEEE quotient
``m / 10**f`` is the correctly rounded value of the decimal, which is what
glibc's ``strtod`` returns (Clinger's fast path).  Lines of 16 or more
digits send the piece to ``np.fromstring``, which rounds correctly too
(CPython's dtoa).

A block qualifies when every line is ``[-](digits[.digits]|.digits|digits.)``
or empty (what ``strtod`` consumes entirely), at most ``MAX_LINE`` bytes,
with no negative zero (where it lands in a sort depends on qsort).  Any
other block returns None and the exact general reader decides.
"""
from __future__ import annotations

import warnings

import numpy as np
from numpy.lib.stride_tricks import as_strided

MAX_LINE = 40
PIECE = 1 << 19  # bytes parsed at once: the temporaries stay small beside the values
_EXACT = 2**53
_POWERS = 10.0 ** np.arange(23)
_INT_POWERS = 10 ** np.arange(19, dtype=np.int64)


def parse_decimal_block(block: bytes) -> np.ndarray | None:
    """The values of a block of complete lines (each ending in a newline), or None."""
    if len(block) <= PIECE:
        return _parse(block)
    parts = []
    start = 0
    while start < len(block):
        end = len(block) - 1
        if start + PIECE < len(block):
            end = block.rfind(b"\n", start, start + PIECE)
            if end < start:
                return None  # a line longer than a piece
        values = _parse(block[start:end + 1])
        if values is None:
            return None
        parts.append(values)
        start = end + 1
    return np.concatenate(parts)


def _parse(block: bytes) -> np.ndarray | None:
    raw = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    if not len(ends) or ends[-1] != len(raw) - 1:
        return None
    digits = int(np.count_nonzero((raw - np.uint8(48)) < 10))
    dots = int(np.count_nonzero(raw == 46))
    minus = int(np.count_nonzero(raw == 45))
    if digits + len(ends) + dots + minus != len(raw):
        return None  # anything but digits, "-", "." and newlines
    lengths = np.diff(ends, prepend=-1) - 1
    keep = lengths > 0
    if not bool(np.all(keep)):  # empty lines hold no value
        ends, lengths = ends[keep], lengths[keep]
        if not len(ends):
            return np.empty(0)
    width = int(lengths.max())
    if width > 16:
        return _general(block, len(ends)) if width <= MAX_LINE else None
    negative = raw[ends - lengths] == 45
    if int(np.count_nonzero(negative)) != minus:
        return None  # a "-" not in front: "5-3", "--5"
    words = _words(raw, ends, lengths, 8 if width <= 8 else 16)
    full = np.zeros(len(ends), dtype=np.uint64)
    fraction = np.zeros(len(ends), dtype=np.int64)
    has_dot = np.zeros(len(ends), dtype=bool)
    for index, word in enumerate(words):  # most significant first
        digits_of, dot_at = _swar(word)
        found = dot_at >= 0
        if bool(np.any(found & has_dot)):
            return None  # two dots in a line
        fraction = np.where(found, dot_at + 8 * (len(words) - 1 - index), fraction)
        has_dot |= found
        full = full * np.uint64(10**8) + digits_of
    if int(np.count_nonzero(has_dot)) != dots:
        return None  # two dots in one word of a line
    if bool(np.any(lengths - has_dot - negative < 1)):
        return None  # "-", ".", "-.": no digit, strtod converts nothing
    full = full.astype(np.int64)
    # The dot, read as a 0 digit, multiplied the digits left of it by 10 once more: take that back.
    low = full % _INT_POWERS[fraction]
    mantissa = np.where(has_dot, (full - low) // 10 + low, full)
    if int(mantissa.max()) >= _EXACT:
        return _general(block, len(ends))
    if bool(np.any(negative & (mantissa == 0))):
        return None  # "-0.0": a negative zero
    values = mantissa.astype(np.float64)
    values /= _POWERS[fraction]
    np.negative(values, out=values, where=negative)
    return values


def _words(raw: np.ndarray, ends: np.ndarray, lengths: np.ndarray, width: int) -> list[np.ndarray]:
    """Each line right-aligned in ``width`` bytes (``"0"`` on the left), as little-endian
    uint64 words, the most significant (leftmost) first."""
    padded = np.concatenate([np.full(width, 48, dtype=np.uint8), raw])
    windows = as_strided(padded, shape=(len(padded) - width + 1, width), strides=(1, 1), writeable=False)
    rows = windows[ends]  # the ``width`` bytes before each newline
    words = rows.view(np.uint64)  # (lines, width // 8)
    result = []
    for index in range(width // 8):
        word = words[:, index].copy()
        # bytes that belong to earlier lines (left of this line) become "0"
        before = np.clip(width - lengths - 8 * index, 0, 8).astype(np.uint64) * np.uint64(8)
        mask = np.where(before >= 64, _ALL, (np.uint64(1) << np.minimum(before, np.uint64(63))) - np.uint64(1))
        word &= ~mask
        word |= _ZEROS & mask
        result.append(word)
    return result


_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZEROS = np.uint64(0x3030303030303030)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_DOTS = np.uint64(0x1E1E1E1E1E1E1E1E)  # "." ^ "0" in every byte


def _swar(word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the 8 characters as a decimal number, "-" and "." read as 0; the number of
    characters right of the "." or -1), for 8 characters per word (SIMD within a register)."""
    x = word ^ _ZEROS  # digits 0..9, "." 0x1E, "-" 0x1D
    y = x ^ _DOTS  # the "." byte is 0
    dot_byte = ~((((y & _LOW7) + _LOW7) | y) | _LOW7)  # 0x80 in the byte of the "." (exact, no borrow)
    big = ((x + np.uint64(0x7676767676767676)) & _HIGH) >> np.uint64(7)  # 1 in the bytes above 9
    x &= ~(big * np.uint64(0xFF))
    x = (x * np.uint64(10) + (x >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    x = (x * np.uint64(100) + (x >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    x = (x * np.uint64(10000) + (x >> np.uint64(32))) & np.uint64(0x00000000FFFFFFFF)
    position = np.full(len(word), -1, dtype=np.int64)
    present = dot_byte != 0
    if bool(np.any(present)):
        byte = np.log2(dot_byte[present].astype(np.float64)).astype(np.int64) // 8  # 0 = leftmost character
        position[present] = 7 - byte
    return x, position


def _general(block: bytes, count: int) -> np.ndarray | None:
    """Long tokens: numpy's own correctly rounded parser (slower)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            values = np.fromstring(block, dtype=np.float64, sep="\n")
        except (ValueError, DeprecationWarning):
            return None
    if len(values) != count or bool(np.any((values == 0) & np.signbit(values))):
        return None
    return values
