"""Numbers as C reads them: glibc ``strtod`` in the C locale, byte for byte.

:func:`strtod_prefix` is what ``ministat`` calls on each token;
:func:`parse_c_double` is the whole-token form its readers use
(:mod:`abstat.readers.text`, ``abstat ministat``).  Standard library only, on
the fast start-up path of ``abstat ministat``.
"""

_C_SPACE = b" \t\n\v\f\r"
_DIGITS = b"0123456789"
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_NAN_CHARS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_INF = float("inf")
_FLOAT_FIRST = frozenset(b"0123456789+-.")
_FLOAT_LAST = frozenset(b"0123456789.")


def strtod_prefix(token: bytes) -> tuple[float, int]:
    """Emulate glibc ``strtod`` in the C locale on *token*.

    Returns ``(value, consumed)`` where *consumed* is the number of bytes
    ``strtod`` would consume (0: no conversion).  Decimal and hexadecimal
    forms, ``inf``/``infinity`` and ``nan``/``nan(chars)`` are recognised;
    values are correctly rounded like glibc does.
    """
    n = len(token)
    i = 0
    while i < n and token[i] in _C_SPACE:
        i += 1
    start = i
    negative = False
    if i < n and token[i] in b"+-":
        negative = token[i] == 45
        i += 1
    special = _special(token, i, negative)
    if special is not None:
        return special
    if token[i : i + 2] in (b"0x", b"0X"):
        return _hexadecimal(token, start, i, negative)
    j, digits = _mantissa_end(token, i, _DIGITS)
    if not digits:
        return 0.0, 0
    j = _exponent_end(token, j, b"eE")
    return float(token[start:j]), j


def _special(token: bytes, i: int, negative: bool) -> tuple[float, int] | None:
    """``inf``, ``infinity``, ``nan`` or ``nan(chars)`` at ``i`` (after the sign), else None."""
    lower = token[i : i + 8].lower()
    if lower.startswith(b"inf"):
        consumed = i + (8 if lower == b"infinity" else 3)
        return (-_INF if negative else _INF), consumed
    if not lower.startswith(b"nan"):
        return None
    nan = float("nan")
    return (-nan if negative else nan), _nan_end(token, i + 3)


def _nan_end(token: bytes, j: int) -> int:
    """The end of ``nan``'s ``(chars)`` at ``j``, if they are there and closed; else ``j``."""
    n = len(token)
    if j < n and token[j] == 40:  # "("
        k = j + 1
        while k < n and token[k] in _NAN_CHARS:
            k += 1
        if k < n and token[k] == 41:  # ")"
            j = k + 1
    return j


def _mantissa_end(token: bytes, j: int, digit_set: bytes) -> tuple[int, int]:
    """End of the digits, an optional point and more digits from ``j``, and how many digits there
    were; a lone point (no digit on either side) is not consumed."""
    n = len(token)
    digits = 0
    while j < n and token[j] in digit_set:
        j += 1
        digits += 1
    if j < n and token[j] == 46:  # "."
        k = j + 1
        while k < n and token[k] in digit_set:
            k += 1
            digits += 1
        if digits:
            j = k
    return j, digits


def _hexadecimal(token: bytes, start: int, i: int, negative: bool) -> tuple[float, int]:
    """The hexadecimal form whose ``0x`` is at ``i`` (the sign, if any, at ``start``)."""
    j, digits = _mantissa_end(token, i + 2, _HEX_DIGITS)
    if not digits:
        # "0x" without hex digits: strtod reads the "0" and stops at the "x".
        return (-0.0 if negative else 0.0), i + 1
    mantissa_end = j
    j = _exponent_end(token, j, b"pP")
    text = token[start:j].decode("ascii")
    if j == mantissa_end:
        text += "p0"
    try:
        value = float.fromhex(text)
    except OverflowError:
        value = -_INF if negative else _INF
    return value, j


def _exponent_end(token: bytes, j: int, markers: bytes) -> int:
    """End of an exponent (``e-12``, ``p+3``) starting at ``j``; ``j`` when
    there is none, as strtod backs off an ``e`` not followed by digits."""
    n = len(token)
    if j < n and token[j] in markers:
        k = j + 1
        if k < n and token[k] in b"+-":
            k += 1
        if k < n and token[k] in _DIGITS:
            while k < n and token[k] in _DIGITS:
                k += 1
            return k
    return j


def parse_c_double(token: bytes) -> float | None:
    """The value of *token* if ``strtod`` consumes all of it, else None."""
    # Fast path: Python's float() agrees with strtod on plain decimal text
    # (both round correctly); it also accepts "1_000" and surrounding blanks,
    # which strtod does not, hence the checks on the first and last byte.
    if token and token[0] in _FLOAT_FIRST and token[-1] in _FLOAT_LAST and b"_" not in token:
        try:
            return float(token)
        except ValueError:
            pass
    value, consumed = strtod_prefix(token)
    if consumed and consumed == len(token):
        return value
    return None
