"""numpy reader for blocks of plain decimal numbers (what ``time`` and
``perf stat`` print: ``1.048``, ``-0.25``, ``12.``, ``.5``), one per line.

Exactness: a line's digits make an integer mantissa ``m`` (the dot left
out) and ``f`` digits follow the dot; when ``m < 2**53`` and ``f <= 22``
both ``m`` and ``10**f`` are exact doubles, so the IEEE quotient
``m / 10**f`` is the correctly rounded value of the decimal, which is what
glibc's ``strtod`` returns (Clinger's fast path).  Lines of 16 or more
digits send the piece to ``np.fromstring``, which rounds correctly too
(CPython's dtoa).

Speed: each line's last 8 (or 16) characters are read as one little-endian
uint64 and its digits combined in three multiply-and-shift steps (SIMD
within a register); when every line has its dot at the same place
("%.3f"), the dot is shifted out first and the whole block divided by one
power of ten.  Arrays are reused in place: under load a fresh array's page
faults cost more than its arithmetic.

A block qualifies when every line is ``[-](digits[.digits]|.digits|digits.)``
or empty (what ``strtod`` consumes entirely), at most ``MAX_LINE`` bytes,
with no negative zero (where it lands in a sort depends on qsort).  Any
other block returns None and the exact general reader decides.
"""

from __future__ import annotations

import warnings

import numpy as np

MAX_LINE = 40
PIECE = 1 << 19  # bytes parsed at once: the temporaries stay small beside the values
_EXACT = 2**53
_POWERS = 10.0 ** np.arange(23)
_INT_POWERS = 10 ** np.arange(19, dtype=np.int64)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZEROS = np.uint64(0x3030303030303030)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_DOTS = np.uint64(0x1E1E1E1E1E1E1E1E)  # "." ^ "0" in every byte
_COMBINE = tuple(
    (np.uint64(shift), np.uint64(factor), np.uint64(mask))
    for shift, factor, mask in (
        (8, 10, 0x00FF00FF00FF00FF),
        (16, 100, 0x0000FFFF0000FFFF),
        (32, 10000, 0x00000000FFFFFFFF),
    )
)


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
        values = _parse(block[start : end + 1])
        if values is None:
            return None
        parts.append(values)
        start = end + 1
    return np.concatenate(parts)


def _parse(block: bytes) -> np.ndarray | None:
    try:
        return _values(block)
    except _NegativeZero:
        return None


def _values(block: bytes) -> np.ndarray | None:
    dots, minus = block.count(b"."), block.count(b"-")
    if not _plain(block, dots, minus):
        return None
    raw = np.frombuffer(block, dtype=np.uint8)
    ends, lengths = _value_lines(raw)
    if not len(ends):
        return np.empty(0)
    width = int(lengths.max())
    if width > 16:
        return _general(block, len(ends)) if width <= MAX_LINE else None
    negative = raw[ends - lengths] == 45
    if int(np.count_nonzero(negative)) != minus:
        return None  # a "-" not in front: "5-3", "--5"
    kept = lengths - negative  # the characters read: the "-" is read as a "0"
    fixed = _fixed_fraction(block, raw, ends, lengths, dots) if width <= 8 else None
    if fixed is not None:  # every line has its dot at the same place ("%.3f")
        return _fixed_values(raw, ends, kept, fixed, negative if minus else None)
    return _any_values(block, raw, (ends, kept), width, dots, negative if minus else None)


def _plain(block: bytes, dots: int, minus: int) -> bool:
    """Only digits, "-", "." and newlines, the last byte a newline (bytes methods: C loops, no arrays)."""
    return len(block.translate(None, b"0123456789")) == block.count(b"\n") + dots + minus and block[-1:] == b"\n"


def _value_lines(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each line that is not empty ends (its newline) and its length: empty lines hold no value."""
    ends = np.flatnonzero(raw == 10)
    lengths = np.diff(ends, prepend=-1) - 1
    if int(lengths.min()) == 0:
        keep = lengths > 0
        ends, lengths = ends[keep], lengths[keep]
    return ends, lengths


def _any_values(
    block: bytes,
    raw: np.ndarray,
    lines: tuple[np.ndarray, np.ndarray],
    width: int,
    dots: int,
    negative: np.ndarray | None,
) -> np.ndarray | None:
    """The values of lines of at most 16 characters, the dot anywhere (None: not all read); the general
    reader's when a mantissa is too large to be exact; ``negative``: the lines with a "-", if any."""
    ends, kept = lines
    found = _any_fraction(raw, ends, kept, width, dots)
    if found is None:
        return None
    mantissa, fraction = found
    values = mantissa.astype(np.float64)
    values /= _POWERS[fraction]
    if int(mantissa.max()) >= _EXACT:
        return _general(block, len(ends))
    if negative is not None:
        _negate(values, mantissa, negative)
    return values


def _fixed_values(
    raw: np.ndarray, ends: np.ndarray, kept: np.ndarray, fixed: int, negative: np.ndarray | None
) -> np.ndarray | None:
    """The values of lines of at most 8 characters with ``fixed`` digits after the dot on every line (None:
    a line without a digit); ``negative``: the lines with a "-", if any."""
    if bool(np.any(kept < 2)):
        return None  # "." or "-.": no digit
    word = _word(raw, ends, kept)
    _close_gap(word, 7 - fixed)
    mantissa = _swar(word, dots=False)[0].view(np.int64)  # < 10**8: exact
    values = mantissa.astype(np.float64)
    values /= _POWERS[fixed]
    if negative is not None:
        _negate(values, mantissa, negative)
    return values


def _negate(values: np.ndarray, mantissa: np.ndarray, negative: np.ndarray) -> None:
    if bool(np.any(negative & (mantissa == 0))):
        raise _NegativeZero  # "-0.0": where it lands in a sort depends on qsort
    np.negative(values, out=values, where=negative)


class _NegativeZero(Exception):
    pass


def _fixed_fraction(block: bytes, raw: np.ndarray, ends: np.ndarray, lengths: np.ndarray, dots: int) -> int | None:
    """The number of digits after the dot when every line has one dot, at the same place."""
    first = block.find(b".")
    if dots != len(ends) or not 0 <= first < int(ends[0]):
        return None
    fraction = int(ends[0]) - first - 1
    if fraction > 7 or not bool(np.all(lengths > fraction)):
        return None  # (the dot inside every line: else it could be an earlier line's)
    if int(np.count_nonzero(raw[ends - fraction - 1] == 46)) != len(ends):
        return None
    return fraction


def _any_fraction(
    raw: np.ndarray, ends: np.ndarray, kept: np.ndarray, width: int, dots: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(mantissas, digits after the dot) of lines with their dots anywhere, or None."""
    if width > 8:  # two words, the left one first
        words = [_word(raw, ends, kept - 8, 8), _word(raw, ends, kept)]
    else:
        words = [_word(raw, ends, kept)]
    full = np.zeros(len(ends), dtype=np.uint64)
    fraction = np.zeros(len(ends), dtype=np.int64)
    has_dot = np.zeros(len(ends), dtype=bool)
    for index, word in enumerate(words):
        digits, dot_at = _swar(word)
        assert dot_at is not None
        found = dot_at >= 0
        if bool(np.any(found & has_dot)):
            return None  # two dots in a line
        np.copyto(fraction, dot_at + 8 * (len(words) - 1 - index), where=found)
        has_dot |= found
        full *= np.uint64(10**8)
        full += digits
    if int(np.count_nonzero(has_dot)) != dots:
        return None  # two dots in one word of a line
    if bool(np.any(kept - has_dot < 1)):
        return None  # "-", ".", "-.": no digit, strtod converts nothing
    signed = full.view(np.int64)
    # The dot, read as a 0 digit, multiplied the digits left of it by 10 once more: take that back.
    low = signed % _INT_POWERS[fraction]
    return np.where(has_dot, (signed - low) // 10 + low, signed), fraction


def _word(raw: np.ndarray, ends: np.ndarray, keep: np.ndarray, skip: int = 0) -> np.ndarray:
    """The 8 characters before each line's end (``skip`` more to the left), little-endian in a
    uint64 (the leftmost character in the lowest byte); those left of the line's last ``keep``
    characters (earlier lines, its "-") read as "0"."""
    padded = np.concatenate([np.full(8 + skip, 48, dtype=np.uint8), raw])
    windows = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))  # unaligned
    word = windows[ends]  # padded[end : end + 8] = raw[end - 8 - skip : end - skip]
    if int(keep.min()) >= 8:
        return word  # every character is the line's
    if int(keep.min()) >= 1 and int(keep.max()) <= 8:
        shift = (64 - 8 * keep).astype(np.uint64)
        inside = np.left_shift(_ALL, shift)  # the line's characters, in the high bytes
    else:
        shift = (64 - 8 * np.clip(keep, 0, 8)).astype(np.uint64)
        inside = np.where(shift >= 64, np.uint64(0), _ALL << np.minimum(shift, np.uint64(63)))
    word &= inside
    np.invert(inside, out=inside)
    inside &= _ZEROS
    word |= inside
    return word


def _close_gap(word: np.ndarray, byte: int) -> None:
    """Take the character at ``byte`` (the dot) out of each word, the characters left of it
    moved one place right, a "0" coming in on the left (in place)."""
    left = word & np.uint64((1 << (8 * byte)) - 1)
    word &= ~np.uint64((1 << (8 * byte + 8)) - 1)
    left <<= np.uint64(8)
    word |= left
    word |= np.uint64(0x30)


def _swar(word: np.ndarray, dots: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(the 8 characters as a decimal number, "-" and "." read as 0; the number of
    characters right of the "." or -1, when ``dots``), for 8 characters per word (SIMD
    within a register).  ``word`` is reused (in place)."""
    x = word
    x ^= _ZEROS  # digits 0..9, "." 0x1E, "-" 0x1D
    if not dots:  # only digits left: combine them
        t = np.empty_like(x)
        _combine(x, t)
        return x, None
    t = x ^ _DOTS  # the "." byte is 0
    dot_byte = t & _LOW7
    dot_byte += _LOW7
    dot_byte |= t
    dot_byte |= _LOW7
    np.invert(dot_byte, out=dot_byte)  # 0x80 in the byte of the "." (exact, no borrow)
    np.add(x, np.uint64(0x7676767676767676), out=t)
    t &= _HIGH
    t >>= np.uint64(7)
    t *= np.uint64(0xFF)  # 0xFF in the bytes above 9
    np.invert(t, out=t)
    x &= t
    _combine(x, t)
    position = np.full(len(word), -1, dtype=np.int64)
    present = dot_byte != 0
    if bool(np.any(present)):
        byte = np.log2(dot_byte[present].astype(np.float64)).astype(np.int64) // 8  # 0 = leftmost character
        position[present] = 7 - byte
    return x, position


def _combine(x: np.ndarray, t: np.ndarray) -> None:
    """Eight digit bytes (0..9, the leftmost lowest) into their number, in place (``t``: scratch)."""
    for shift, factor, mask in _COMBINE:
        np.right_shift(x, shift, out=t)
        x *= factor
        x += t
        x &= mask


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
