"""``read_sample_array`` (what ``abstat compare FILE FILE`` reads with, issue 42) gives bit for bit
the values ``read_samples`` gives, as a float64 array, and the same error for every bad file: on
random files of many number formats, on random byte strings drawn from the characters that decide
between numpy's parser and the exact reader, and through the command line."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest
from support.cli import run_abstat as abstat

from abstat.errors import InputError
from abstat.readers.decimals import plain_array, read_sample_array
from abstat.readers.text import read_samples


def _bits(values) -> list[int]:
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def _outcome(read, path) -> tuple:
    try:
        values = read(str(path))
    except InputError as err:
        return ("error", str(err))
    return ("values", _bits(values))


def _number(rng: random.Random) -> str:
    """One number in a format sample files hold: repr, numpy.savetxt's, printf's, integers (TSC
    counts), long mantissas, subnormals, extremes, signed zeros, underflow to zero."""
    value = rng.lognormvariate(0, 6) * rng.choice((-1, 1))
    shape = rng.randrange(12)
    if shape == 0:
        return repr(value)
    if shape == 1:
        return f"{value:.18e}"
    if shape == 2:
        return f"{value:.{rng.randrange(0, 9)}f}"
    if shape == 3:
        return f"{value:{rng.choice(('g', 'G', 'E', '.3e', '.17g'))}}"
    if shape == 4:
        return str(rng.randrange(10**9, 10**12))  # TSC-like counts
    if shape == 5:
        return str(rng.randrange(2**53 - 5, 2**64))  # integers beyond float's exact range: rounding
    if shape == 6:
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(18, 40)))
        return f"{rng.choice(('', '-', '+'))}{digits[:3]}.{digits[3:]}e{rng.randrange(-320, 300)}"
    if shape == 7:
        return rng.choice(("-0", "0", "+0.0", "-0.0e5", "5e-324", "2.4703282292062328e-324", "1e-400"))
    if shape == 8:
        return rng.choice(("1.7976931348623157e308", "-2.2250738585072014e-308", "4.9406564584124654E-324"))
    if shape == 9:
        return rng.choice((".5", "5.", "+.25e1", "-7.E-2", "1e05", "+12"))
    if shape == 10:  # halfway between two doubles, and one digit off it
        base = rng.randrange(2**52, 2**53)
        return f"{base}.5e{rng.randrange(-10, 10)}" if rng.random() < 0.5 else f"{2 * base + 1}e-1"
    return f"{value:.{rng.randrange(1, 25)}e}"


def _random_file(rng: random.Random) -> bytes:
    lines = [_number(rng) for _ in range(rng.randrange(1, 400))]
    end = rng.choice(("\n", "\n", "\r\n", "\r"))
    if rng.random() < 0.3:  # blank lines
        for _ in range(rng.randrange(1, 5)):
            lines.insert(rng.randrange(len(lines) + 1), "")
    text = end.join(lines)
    return (text + end if rng.random() < 0.8 else text).encode()


def test_random_files_read_bit_for_bit_as_read_samples(tmp_path) -> None:
    rng = random.Random(42)
    path = tmp_path / "s.txt"
    numpy_read = 0
    for _ in range(600):
        data = _random_file(rng)
        path.write_bytes(data)
        fast = read_sample_array(str(path))
        assert isinstance(fast, np.ndarray) and fast.dtype == np.float64
        outcome = _outcome(read_samples, path)
        assert ("values", _bits(fast)) == outcome, data[:200]
        parsed = plain_array(data)  # its bytes (standard input): numpy.fromstring
        if parsed is not None:
            numpy_read += 1
            assert ("values", _bits(parsed)) == outcome, data[:200]
    assert numpy_read > 400  # numpy's parser was exercised, not only declined


@pytest.mark.parametrize("width", [1, 2, 5, 10, 14, 15, 16, 19])
def test_fixed_width_counts_read_bit_for_bit_as_read_samples(tmp_path, width: int) -> None:
    rng = random.Random(width)
    path = tmp_path / "s.txt"
    for end in ("\n", "\r\n"):
        for size in (1, 2, 17, 1000):
            lines = ["".join(rng.choice("0123456789") for _ in range(width)) for _ in range(size)]
            lines[0] = "0" * width if size > 1 else lines[0]  # leading zeros
            path.write_bytes((end.join(lines) + end).encode())
            fast = read_sample_array(str(path))
            assert _outcome(read_samples, path) == ("values", _bits(fast))
            assert fast.tolist() == [float(line) for line in lines]


def test_random_byte_strings_give_the_same_values_or_the_same_error(tmp_path) -> None:
    rng = random.Random(7)
    alphabet = b"0123456789+-.eE\n\r \t#,xn"
    path = tmp_path / "s.txt"
    taken = 0
    for _ in range(4000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 14)))
        path.write_bytes(data)
        assert _outcome(read_sample_array, path) == _outcome(read_samples, path), data
        taken += plain_array(data) is not None
    assert taken > 300


@pytest.mark.parametrize(
    "data",
    [
        b"1\n2\n1e400\n",
        b"1\n-1e999\n",
        b"1\n2\nnan\n",
        b"inf\n",
        b"1\n1-2\n",
        b"1.2.3\n",
        b"1e\n",
        b"-\n",
        b"",
        b"\n\r\n",
        b"1\n2 3\n",
        b"1\n2,3\n",
        b"1 # comment\n2\n",
        b"0x1.8p1\n2\n",
        b"\xef\xbb\xbf1\n2\n",
        b"\xff\xfe1\x002\x00",
        b"1\n\x002\n",
        b"1\n\xe9\n",
        b"1\n1_000\n",
        gzip.compress(b"1\n2\n", mtime=0),  # no time stamp: the same test id in every xdist worker
    ],
)
def test_unusual_files_read_as_read_samples_does(tmp_path, data: bytes) -> None:
    path = tmp_path / "s.txt"
    path.write_bytes(data)
    assert _outcome(read_sample_array, path) == _outcome(read_samples, path)


def test_numpy_parser_refusals_go_to_the_exact_reader() -> None:
    assert plain_array(b"1\n2\n") is not None
    for data in (b"1-2\n", b"1..2\n", b"1e400\n", b"1\n2e\n", b"", b"\n", b"+-1\n"):
        assert plain_array(data) is None, data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1\n2\n3\n1e400\n", "b.txt:4: not a finite number: '1e400'"),
        ("1\n2\n1-2\n", "b.txt:3: not a number: '1-2'"),
        ("", "b.txt: no samples found (empty file?)"),
    ],
)
def test_compare_refuses_bad_files_in_one_line_with_status_2(tmp_path, content: str, message: str) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n4\n")
    (tmp_path / "b.txt").write_text(content)
    result = abstat("compare", "a.txt", "b.txt", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == f"abstat compare: {message}\n"


def test_compare_reads_standard_input_as_the_same_crlf_file(tmp_path) -> None:
    import json

    base = [1.5, 2.25, 3.0, 2.5, 1.75, 2.0, 2.125]
    other = [2 * v for v in base]
    (tmp_path / "a.txt").write_bytes(b"\r\n".join(repr(v).encode() for v in base) + b"\r\n")
    (tmp_path / "b.txt").write_bytes(b"\n".join(repr(v).encode() for v in other))
    piped = abstat("compare", "-", "b.txt", "--format", "json", cwd=tmp_path, stdin="\n".join(map(repr, base)))
    filed = abstat("compare", "a.txt", "b.txt", "--format", "json", cwd=tmp_path)
    assert piped.returncode == filed.returncode == 0, piped.stderr + filed.stderr
    ours = [json.loads(result.stdout)["comparisons"][0] for result in (piped, filed)]
    assert ours[0]["centers"] == ours[1]["centers"] == [2.125, 4.25]  # the medians of what was read
    assert ours[0]["delta_pct"] == ours[1]["delta_pct"] == 100.0  # every ratio is exactly 2


@pytest.mark.parametrize("suffix", [".xz", ".bz2", ".gz", ".lzma"])
def test_a_large_plain_file_named_like_compressed_data_is_read_as_its_bytes(tmp_path, suffix) -> None:
    """A path is never handed to numpy, whose data source opens ``x.xz`` as xz data (an internal error,
    LZMAError, when the file was 1 MiB of plain numbers) and a name like a URL over the network."""
    rng = random.Random(7)
    data = "".join(f"{rng.random() * 1000:.4f}\n" for _ in range(150_000)).encode()
    path = tmp_path / f"samples{suffix}"
    path.write_bytes(data)
    assert len(data) > 1 << 20
    assert ("values", _bits(read_sample_array(str(path)))) == _outcome(read_samples, path)
