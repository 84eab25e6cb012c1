"""Read numeric samples from text files.

Two readers share this module:

* :func:`read_ministat` reads a file exactly as ``ministat`` does (``fgets``
  into an 8 KiB buffer, ``strtok`` over the delimiters, ``strtod`` on the
  chosen column, ``#`` starts a comment token).  Both dialects drop all
  trailing white space of each line (so CRLF files read), as Debian's
  ministat 20150715 and FreeBSD's do; they differ in fgets' buffer size.
* :func:`read_samples` is the lenient reader the rest of abstat uses: CRLF,
  blank lines, ``#`` comments, white space or comma separated columns.

Both return the values in file order and reject what ministat would crash on
(NaN, infinities) or what is not a sample file at all (binary, UTF-16,
empty) with an :class:`~abstat.errors.InputError` naming the file and line.
Only the standard library is imported here: this module sits on the fast
start-up path of ``abstat ministat``.
"""

import sys

from abstat.errors import InputError
from abstat.readers.cnumber import parse_c_double, strtod_prefix  # noqa: F401 -- ministat's numbers, read here too

TYPE_CHECKING = False  # typing stays off ministat's start-up path (tests/ministat/test_ministat_cli.py)
if TYPE_CHECKING:
    from typing import Any

# fgets(buf, BUFSIZ, f) returns at most BUFSIZ - 1 bytes: glibc's BUFSIZ is
# 8192 (classic ministat, built on Linux), FreeBSD's is 1024.
FGETS_CHUNK = 8191
FGETS_CHUNK_FREEBSD = 1023
STDIN_NAME = "<stdin>"
_C_SPACE = b" \t\n\v\f\r"
_INF = float("inf")


MAX_INPUT_BYTES = 2 << 30  # any input: an endless one (a device, a FIFO) stops here
_CHUNK = 1 << 20


def read_bytes(path: str, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """Return the raw contents of *path* (``"-"`` is standard input), at most ``limit`` bytes.

    Raises InputError (naming the file) when it cannot be opened or read, is larger than ``limit``,
    or starts with a megabyte of NUL bytes (``/dev/zero``: refused at once, not read to the limit).
    """
    name = STDIN_NAME if path == "-" else path
    if path == "-":
        if sys.stdin is None:  # standard input closed
            return b""
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            text = sys.stdin.read()
            return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
        return _read_limited(stream, name, limit)
    try:
        with open(path, "rb") as handle:
            return _read_limited(handle, name, limit)
    except OSError as err:
        raise InputError(f"cannot open: {err.strerror or err}", path=path) from None


def _read_limited(stream: "Any", name: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := stream.read(min(_CHUNK, limit + 1 - size)):
            if not chunks and len(chunk) == _CHUNK:
                if not chunk.strip(b"\0"):
                    raise InputError("binary data (NUL bytes only), not a text file", path=name)
                from abstat.readers.bulk import whole_file  # (files above a chunk only: not on start-up's path)

                chunk = whole_file(stream, limit, _CHUNK) or chunk
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise InputError(f"larger than {limit >> 20} MiB: not read", path=name)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", path=name) from None
    return b"".join(chunks)  # (one chunk: itself, not a copy)


def _describe_token(token: bytes) -> str:
    text = token.decode("utf-8", "backslashreplace")
    if len(text) > 40:
        text = text[:37] + "..."
    return repr(text)


def _hint(data: bytes) -> str:
    """Why a whole file is unreadable, if it looks like one of the usual suspects."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return " (the file is UTF-16 encoded; convert it to ASCII/UTF-8 text)"
    if b"\0" in data[:4096]:
        return " (binary data, not a text file of numbers)"
    return ""


def _fgets_lines(data: bytes, chunk: int = FGETS_CHUNK):
    """Yield the successive buffers ``fgets(buf, chunk + 1, f)`` would return."""
    pos = 0
    size = len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        end = size if end < 0 else end + 1
        while end - pos > chunk:
            yield data[pos : pos + chunk]
            pos += chunk
        yield data[pos:end]
        pos = end


_PLAIN_BYTES = frozenset(b"0123456789-.\n")


def _plain_numbers(data: bytes, chunk: int) -> list[float] | None:
    """Values of a file holding one plain decimal number per line, or None.

    The common case, read at C speed: only digits, "-", "." and newlines,
    every line shorter than fgets' buffer.  Python's ``float`` rounds such
    a number correctly, as ``strtod`` does, so the values are the same; any
    token ``float`` rejects ("-", "1.2.3", "5-3") sends the file to the
    general reader, which reports it as ministat would.
    """
    if data.translate(None, b"0123456789-.\n"):
        return None
    tokens = data.split()  # the lines that are not empty (no other white space here)
    if len(data) >= chunk and max(map(len, tokens), default=0) >= chunk:
        return None  # fgets would cut a line in two
    try:
        return list(map(float, tokens))
    except ValueError:
        return None


def parse_ministat(
    data: bytes,
    name: str,
    *,
    column: int = 1,
    delimiters: str | bytes = " \t",
    dialect: str = "classic",
) -> list[float]:
    """Parse the bytes of a ministat data file; see :func:`read_ministat`."""
    delims, table = _delimiter_table(delimiters, column, name)
    chunk = FGETS_CHUNK_FREEBSD if dialect == "freebsd" else FGETS_CHUNK
    if column == 1 and not _PLAIN_BYTES.intersection(delims):
        plain = _plain_numbers(data, chunk)
        if plain is not None:
            return plain
    return _ministat_values(data, name, column, delims[:1], table, chunk)


def _delimiter_table(delimiters: str | bytes, column: int, name: str) -> tuple[bytes, bytes | None]:
    """The delimiters as bytes, and the table mapping all of them to the first (None: just one)."""
    delims = delimiters.encode("utf-8", "surrogateescape") if isinstance(delimiters, str) else bytes(delimiters)
    if not delims:
        raise InputError("empty delimiter string", path=name)
    if column < 1:
        raise InputError("column number should be positive", path=name)
    if len(delims) == 1:
        return delims, None
    return delims, bytes.maketrans(delims[1:], delims[:1] * (len(delims) - 1))


def _ministat_values(data: bytes, name: str, column: int, first: bytes, table: bytes | None, chunk: int) -> list[float]:
    """The general reader: ``fgets``, ``strtok`` and ``strtod`` as ministat does, line by line."""
    values: list[float] = []
    append = values.append
    line = 0
    for buf in _fgets_lines(data, chunk):
        line += 1
        nul = buf.find(b"\0")
        if nul >= 0:
            buf = buf[:nul]
        buf = buf.rstrip(_C_SPACE)  # both programs trim trailing white space (CRLF files, "1 " under -d ' ')
        if table is not None:
            buf = buf.translate(table)
        token = None
        index = 0
        for part in buf.split(first):
            if not part:
                continue
            if part[0] == 35:  # "#"
                break
            index += 1
            if index == column:
                token = part
                break
        if token is None:
            continue
        value = parse_c_double(token)
        if value is None:
            raise InputError(f"invalid data {_describe_token(token)}{_hint(data)}", path=name, line=line)
        if value != value or value in (_INF, -_INF):
            raise InputError(
                f"{_describe_token(token)} is not a finite number (ministat cannot use NaN or infinity)",
                path=name,
                line=line,
            )
        append(value)
    return values


def read_ministat(
    path: str,
    *,
    column: int = 1,
    delimiters: str = " \t",
    dialect: str = "classic",
) -> list[float]:
    """Read *path* with ministat's exact rules; ``"-"`` is standard input.

    Lines are read as ``fgets`` does (at most 8191 bytes at a time, 1023 for
    FreeBSD, whose BUFSIZ is 1024; the rest of a longer line counts as the
    next line), split with ``strtok`` on any of the
    *delimiters*, a token starting with ``#`` ends the line, the *column*-th
    token (1-based) must be entirely a ``strtod`` number (decimal, hex,
    exponent).  Lines without that column are skipped.  Trailing white space
    is ignored (CRLF files are accepted), in both dialects.  Raises
    InputError naming file and line for invalid data and for NaN/infinity.
    The ministat minimum of three values is not checked here.
    """
    name = STDIN_NAME if path == "-" else path
    return parse_ministat(read_bytes(path), name, column=column, delimiters=delimiters, dialect=dialect)


# --------------------------------------------------------------------------
# Lenient reader


def decode_text(data: bytes, name: str, *, latin1: bool = False) -> str:
    """``data`` as text: UTF-8, a UTF-8 byte-order mark dropped.

    The one check every text reader of abstat shares: UTF-16 (with or
    without a byte-order mark), binary data (a NUL byte) and bytes that are
    not UTF-8 raise InputError naming ``name`` and the line.  With
    ``latin1`` (e-mail texts), non-UTF-8 bytes are read as Latin-1 unless
    control characters show the data to be binary.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("file is UTF-16 encoded; convert it to UTF-8 or ASCII text", path=name, line=1)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        if len(data) > 1 and (data[1:2] == b"\0" or data[0:1] == b"\0") and nul < 2:
            raise InputError("file looks UTF-16 encoded (NUL bytes); convert it to UTF-8 text", path=name, line=line)
        raise InputError("binary data (NUL byte), not a text file", path=name, line=line)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        if latin1:
            return _latin1_text(data, name, line)
        raise InputError("not UTF-8 text (binary data?)", path=name, line=line) from None


def _latin1_text(data: bytes, name: str, line: int) -> str:
    """``data`` (not UTF-8 from ``line`` on) read as Latin-1, unless control characters show it binary."""
    text = data.decode("latin-1")
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f" or 0x7F <= ord(ch) < 0xA0)
    if controls <= _LATIN1_CONTROL_LIMIT * len(text):
        return text
    raise InputError("binary data, not a text file", path=name, line=line) from None


_LATIN1_CONTROL_LIMIT = 0.05  # share of control characters beyond which Latin-1 "text" is binary
_decode_text = decode_text


def _lenient_float(token: str) -> float | None:
    if "_" in token or not token.isascii():  # float() reads Arabic-Indic digits and strips Unicode spaces
        return None
    try:
        return float(token)
    except ValueError:
        pass
    if token.isascii():
        return parse_c_double(token.encode("ascii"))  # hexadecimal forms
    return None


def _ascii_lines(text: str) -> list[str]:
    """Lines ended by LF, CRLF or CR only: not by U+2028, NEL or form feed as ``str.splitlines`` does."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


_DECIMAL_BYTES = b"0123456789+-.eE\n\r"
_BLANKS = b" \t\x0b\x0c"  # ASCII white space within a line


def _one_number_per_line(data: bytes) -> list[float] | None:
    """Values of a file holding at most one plain decimal number per line (ASCII white space
    around it, blank lines), read at C speed (``bytes.split`` and ``float``), or None:
    anything else (comments, commas, several columns, a token ``float`` refuses, infinity
    from an overflowing exponent, no value) goes to the general reader, which says what and
    where.  The values are those the general reader gives."""
    others = data.translate(None, _DECIMAL_BYTES)
    if others and others.translate(None, _BLANKS):
        return None
    tokens = data.split()
    if others and len(data.translate(None, _BLANKS).split()) != len(tokens):
        return None  # a line of several tokens (they run together without the blanks: fewer)
    try:
        values = list(map(float, tokens))
    except ValueError:
        return None
    if not values or _INF in values or -_INF in values:
        return None
    return values


def parse_samples(data: bytes, name: str, *, column: int = 1, delimiters: str | None = None) -> list[float]:
    """Parse sample text leniently; see :func:`read_samples`."""
    if column < 1:
        raise InputError(f"column must be 1 or more, not {column}", path=name)
    if column == 1 and delimiters is None:
        fast = _one_number_per_line(data)
        if fast is not None:
            return fast
    text = _decode_text(data, name)
    if delimiters is not None and delimiters == "":
        raise InputError("empty delimiter string", path=name)
    values: list[float] = []
    for number, raw in enumerate(_ascii_lines(text), start=1):
        fields = _lenient_fields(raw, delimiters, name, number, columns=column > 1)
        if not fields:
            continue
        values.append(_column_value(fields, column, name, number))
    if not values:
        raise InputError("no samples found (empty file?)", path=name)
    return values


def _lenient_fields(raw: str, delimiters: str | None, name: str, number: int, columns: bool = False) -> list[str]:
    """The fields of a line, a ``#`` comment cut off: separated by white space and commas, or by
    any of ``delimiters``; ``columns``: a column beyond the first was asked for, so a comma between
    digits separates columns, unless white space already does (else it may be a decimal comma: refused)."""
    hash_at = raw.find("#")
    if hash_at >= 0:
        raw = raw[:hash_at]
    if not raw.isascii():
        from abstat.readers.line_checks import refuse_unicode_space

        refuse_unicode_space(raw, name, number)
    if delimiters is None:
        if "," in raw and (not columns or len(raw.split()) > 1):  # "1 12,5": white space makes the columns
            from abstat.readers.line_checks import refuse_ambiguous_comma

            refuse_ambiguous_comma(raw, name, number)
        return raw.replace(",", " ").split()
    fields = [raw]
    for delim in delimiters:
        fields = [piece for field in fields for piece in field.split(delim)]
    return [field.strip() for field in fields if field.strip()]


def _column_value(fields: list[str], column: int, name: str, number: int) -> float:
    """The value in the ``column``-th field of a line (InputError when the line has fewer)."""
    if len(fields) < column:
        raise InputError(
            f"line has {len(fields)} column{'s' if len(fields) != 1 else ''}, column {column} was asked for",
            path=name,
            line=number,
        )
    return _lenient_value(fields[column - 1], name, number)


def _lenient_value(token: str, name: str, number: int) -> float:
    value = _lenient_float(token)
    if value is None or value != value or value in (_INF, -_INF):
        shown = token if len(token) <= 40 else token[:37] + "..."
        what = "not a number" if value is None else "not a finite number"
        raise InputError(f"{what}: {shown!r}", path=name, line=number)
    return value


def read_samples(path: str, *, column: int = 1, delimiters: str | None = None) -> list[float]:
    """Read numeric samples from *path* leniently; ``"-"`` is standard input.

    Accepts CRLF or LF line ends, blank lines, ``#`` comments (whole line or
    trailing), fields separated by white space and/or commas (or by any of
    *delimiters* when given) and picks the 1-based *column*.  Rejects NaN,
    infinities, non-numbers, binary and UTF-16 files and files without any
    value with an InputError naming the file and line.
    """
    name = STDIN_NAME if path == "-" else path
    return parse_samples(read_bytes(path), name, column=column, delimiters=delimiters)
