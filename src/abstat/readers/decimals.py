"""Sample files read straight into float64 arrays, for ``abstat compare FILE FILE`` (issue 42).

``read_samples`` gives a list of Python floats, and the comparison then converts it to an array
several times (about 50 ms per conversion of 10^6 values, as long as parsing it).
:func:`read_sample_array` gives the array at once: a file of one plain decimal number per line
(digits, ``+-.eE``, LF or CRLF line ends, blank lines) is parsed by numpy's C parser
(``numpy.fromstring(data, sep=" ")`` on the bytes read; not ``numpy.loadtxt`` given the path, about a
third faster at 10^6 values, because numpy's data source opens a path by its name: ``x.xz`` as xz data,
a name like a URL over the network), with the same rounding: numpy hands each token to
``PyOS_string_to_double``, the correctly rounding parser ``float`` uses, so every value is bit
for bit what ``read_samples`` gives.  The parse
is kept only when it can be seen to have read exactly one finite number per token: numpy stops
(with a warning, made an error here) at a token it cannot parse and reads ``1-2`` or ``1.2.3``
as two numbers, so a count that differs from the tokens' tells those apart.  Every other file
(comments, columns, hexadecimal floats, ``inf``, ``1e400``, a byte-order mark, binary data, no
value) is read by ``read_samples`` itself: its values, its error messages.  Lines of the same
number of digits (TSC and cycle counts, at most 15 digits: exact in float64) skip parsing: the
digits are summed column by column, twice numpy's parsing speed.  From ``LINES_FROM`` bytes, a file of
the plain bytes is first given to :func:`abstat.readers.decimal_lines.parse_lines` (``float``'s values,
vectorized; issue 42).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from abstat.readers.text import STDIN_NAME, parse_samples, read_bytes

_PLAIN = b"0123456789+-.eE\r\n"  # what numpy's path takes; anything else goes to read_samples
LINES_FROM = 1 << 16  # bytes from which readers/decimal_lines.py parses (2-3x numpy's parser at 10^6 lines)


def read_sample_array(path: str, *, column: int = 1, delimiters: str | None = None) -> Any:
    """:func:`abstat.readers.text.read_samples`' values of *path* as a float64 array."""
    name = STDIN_NAME if path == "-" else path
    data = read_bytes(path)
    if column == 1 and delimiters is None:
        values = _fixed_width_integers(data)
        if values is None and len(data) >= LINES_FROM:
            from abstat.readers.decimal_lines import parse_lines  # (its tables: not on start-up's path)

            values = parse_lines(data)  # (None for any other byte: no need to look for them first)
            if values is not None and not np.isfinite(values).all():
                values = None
        if values is None and not data.translate(None, _PLAIN):
            values = plain_array(data)
        if values is not None:
            return values
    return np.asarray(parse_samples(data, name, column=column, delimiters=delimiters), dtype=np.float64)


def plain_array(data: bytes) -> Any:
    """The values of ``data`` (only the bytes of ``_PLAIN``, checked by the caller) as an array, or
    None when it is anything but one finite number per line (blank lines allowed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "string or file could not be read to its end": a bad token
        try:
            values = np.fromstring(data, dtype=np.float64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
    if not values.size or values.size != _tokens(data) or not np.isfinite(values).all():
        return None
    return values


def _tokens(data: bytes) -> int:
    """The number of white-space separated tokens of ``data`` (no blanks but CR and LF in it)."""
    if b"\r" in data or b"\n\n" in data or data.startswith(b"\n"):
        return len(data.split())
    return data.count(b"\n") + (not data.endswith(b"\n"))  # every line one token


def _fixed_width_integers(data: bytes) -> Any:
    """The values of lines of the same number of digits (at most 15: every such integer is exact in
    float64, as ``float`` gives it), each ended by LF: TSC and cycle counts, read by column
    arithmetic without parsing; else None."""
    width = data.find(b"\n")
    if not 0 < width <= 15 or len(data) % (width + 1) or data.translate(None, b"0123456789\n"):
        return None
    rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, width + 1)
    if data.count(b"\n") != len(rows) or not (rows[:, width] == 10).all():
        return None  # lines of other lengths
    values = np.zeros(len(rows), dtype=np.int64)
    for column in range(width):
        values *= 10
        values += rows[:, column] - 48
    return values.astype(np.float64)
