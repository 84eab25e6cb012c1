"""abstat.readers.text: ministat's strict reader and the lenient sample reader."""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import math
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from abstat.errors import InputError
from abstat.readers.text import parse_ministat, read_ministat, read_samples, strtod_prefix

_LIBC_NAME = ctypes.util.find_library("c")
libc = ctypes.CDLL(_LIBC_NAME) if _LIBC_NAME else None
needs_libc = pytest.mark.skipif(libc is None or not sys.platform.startswith("linux"), reason="needs glibc")


def c_strtod(token: bytes) -> tuple[float, int]:
    libc.strtod.restype = ctypes.c_double
    libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    buffer = ctypes.create_string_buffer(token)
    end = ctypes.c_char_p()
    value = libc.strtod(buffer, ctypes.byref(end))
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)
    return value, consumed


number_text = st.text(alphabet="0123456789+-.eExXpPabcdfinINFtyAN_() \t\v", min_size=1, max_size=14)


@needs_libc
@settings(max_examples=3000, deadline=None)
@given(number_text)
@example("0x1.8p3")
@example("0x")
@example("0x.")
@example("1e")
@example("1e+")
@example(".e1")
@example("infinity")
@example("infinit")
@example("nan(12_ab)")
@example("nan(")
@example("  -0x1P-3")
@example("1_000")
@example("0x1p99999")
@example("1e-400")
def test_strtod_prefix_agrees_with_glibc(text):
    token = text.encode("ascii")
    value, consumed = strtod_prefix(token)
    expected, expected_consumed = c_strtod(token)
    assert consumed == expected_consumed
    if consumed:
        if math.isnan(expected):
            assert math.isnan(value)
        else:
            assert value == expected
            assert math.copysign(1.0, value) == math.copysign(1.0, expected)


def _parse(text: str | bytes, **options) -> list[float]:
    data = text.encode() if isinstance(text, str) else text
    return parse_ministat(data, "t.txt", **options)


def test_ministat_number_forms():
    assert _parse("1\n+2\n.5\n5.\n0x10\n1e3\n-0\n  7\n\t8\n") == [1, 2, 0.5, 5, 16, 1000, 0, 7, 8]
    assert math.copysign(1.0, _parse("-0\n")[0]) < 0


def test_ministat_comments_blank_lines_and_columns():
    assert _parse("# head\n1 # one\n\n2 #two\n#3\n4\n") == [1, 2, 4]
    table = "a 1 10\nb 2 20\nc 3\n# x 4 40\nd # 5 50\n"
    assert _parse(table, column=3) == [10, 20]
    assert _parse("1,2\n3,4\n", column=2, delimiters=",") == [2, 4]
    assert _parse("1:2 3\n", column=3, delimiters=": ") == [3]


@pytest.mark.parametrize("line", ["abc", "3x", "1_000", "1e", "0x", "1,5", "--1"])
def test_ministat_invalid_tokens(line):
    with pytest.raises(InputError) as caught:
        _parse(f"1\n2\n{line}\n")
    assert caught.value.line == 3 and caught.value.path == "t.txt"


@pytest.mark.parametrize("dialect", ["classic", "freebsd"])
def test_crlf_and_trailing_blanks_are_trimmed_in_both_dialects(dialect):
    # Debian's ministat 20150715 trims trailing white space as FreeBSD's does
    # (tests/ministat/test_ministat_debian.py checks the real program)
    assert _parse("1\r\n2\r\n", dialect=dialect) == [1, 2]
    assert _parse("1\r\n2 \t\r\n", dialect=dialect) == [1, 2]
    assert _parse("1,2 \n", column=2, delimiters=",", dialect=dialect) == [2]
    assert _parse("150\n720\t\n", delimiters=" ", dialect=dialect) == [150, 720]  # FreeBSD's chameleon
    with pytest.raises(InputError):
        _parse("1\r 5\n", dialect=dialect)  # a CR inside the line is data


def test_fgets_buffer_splits_long_lines():
    # ministat reads 8191 bytes at a time: the rest of a long line is a new "line"
    assert _parse("1" + " " * 8195 + "2\n3\n") == [1, 2, 3]
    with pytest.raises(InputError) as caught:
        _parse("1" + " " * 8195 + "x\n")
    assert caught.value.line == 2
    # FreeBSD's BUFSIZ is 1024: it splits much shorter lines
    assert _parse("1" + " " * 1030 + "2\n", dialect="freebsd") == [1, 2]
    assert _parse("1" + " " * 1030 + "2\n") == [1]


def test_nul_ends_the_line_like_strlen():
    assert _parse(b"1\n2\x00junk\n3\n") == [1, 2, 3]


@pytest.mark.parametrize("token", ["nan", "inf", "-infinity", "1e400"])
def test_ministat_rejects_non_finite(token):
    with pytest.raises(InputError) as caught:
        _parse(f"1\n{token}\n")
    assert caught.value.line == 2 and "finite" in str(caught.value)
    assert str(caught.value).startswith("t.txt:2: ")


def test_read_ministat_files_and_stdin(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text("3\n1\n2\n")
    assert read_ministat(str(path)) == [3, 1, 2]  # input order is kept
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"4\n5\n")))
    assert read_ministat("-") == [4, 5]
    with pytest.raises(InputError) as caught:
        read_ministat(str(tmp_path / "missing.txt"))
    assert "missing.txt" in str(caught.value)


# ---------------------------------------------------------------- lenient reader


def _samples(tmp_path, content: bytes | str, **options) -> list[float]:
    path = tmp_path / "s.txt"
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return read_samples(str(path), **options)


def test_read_samples_is_lenient(tmp_path):
    assert _samples(tmp_path, "1\r\n2\r\n\r\n# c\n3 # three\n") == [1, 2, 3]
    assert _samples(tmp_path, "1, 10\n2,20\n3 30\n", column=2) == [10, 20, 30]
    assert _samples(tmp_path, "a;1\nb;2\n", column=2, delimiters=";") == [1, 2]
    assert _samples(tmp_path, b"\xef\xbb\xbf5\n6\n") == [5, 6]
    assert _samples(tmp_path, "1e3\n0x10\n-2.5\n") == [1000, 16, -2.5]
    assert _samples(tmp_path, "7\n8") == [7, 8]  # no final newline


def test_read_samples_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1\n2\n")))
    assert read_samples("-") == [1, 2]


@pytest.mark.parametrize(
    "content, line, words",
    [
        ("1\n2\nnan\n", 3, "finite"),
        ("1\ninf\n", 2, "finite"),
        ("1\n-Infinity\n", 2, "finite"),
        ("1\n2\nabc\n", 3, "not a number"),
        ("1\n1_000\n", 2, "not a number"),
        ("1 2\n3\n", 2, "column"),
        (b"1\n2\n\x00\x01\x02", 3, "binary"),
        (b"1\n\xff\xfe\xfa\n", 2, "UTF-8"),
        ("1\n2\n".encode("utf-16"), 1, "UTF-16"),
        ("1\n2\n".encode("utf-16-le"), 1, "UTF-16"),
    ],
)
def test_read_samples_errors_name_file_and_line(tmp_path, content, line, words):
    options = {"column": 2} if words == "column" else {}
    with pytest.raises(InputError) as caught:
        _samples(tmp_path, content, **options)
    assert caught.value.line == line
    assert caught.value.path.endswith("s.txt")
    assert words in str(caught.value)


@pytest.mark.parametrize("content", ["", "\n\n", "# nothing\n"])
def test_read_samples_rejects_empty(tmp_path, content):
    with pytest.raises(InputError) as caught:
        _samples(tmp_path, content)
    assert "no samples" in str(caught.value)


def test_read_samples_missing_file(tmp_path):
    with pytest.raises(InputError) as caught:
        read_samples(str(tmp_path / "nope.txt"))
    assert "nope.txt" in str(caught.value)
