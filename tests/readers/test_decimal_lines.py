"""readers/decimal_lines.py: every value Python's ``float`` of its line, bit for bit; None for any line
``float`` refuses (issue 42)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from abstat.readers import decimal_lines
from abstat.readers.decimal_lines import parse_lines


def _reference(lines: list[str]) -> np.ndarray:
    return np.array([float(line) for line in lines if line], dtype=np.float64)


def _check(lines: list[str], end: str = "\n") -> None:
    data = end.join(lines).encode() + end.encode()
    found = parse_lines(data)
    assert found is not None
    expected = _reference(lines)
    assert found.shape == expected.shape
    assert found.view(np.int64).tolist() == expected.view(np.int64).tolist()


def _doubles(rng: np.random.Generator, count: int) -> np.ndarray:
    """Doubles of every magnitude and both signs (random bit patterns, finite ones kept)."""
    bits = rng.integers(0, 2**63, count, dtype=np.int64) * rng.choice([-1, 1], count)
    values = bits.view(np.float64)
    return values[np.isfinite(values)]


FORMATS = ["{!r}", "{:.17g}", "{:.18e}", "{:.16e}", "{:.15g}", "{:.3f}", "{:g}", "{:.19e}", "{:.20e}", "{:.6E}"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_doubles_every_format(fmt: str) -> None:
    rng = np.random.default_rng(len(fmt))
    values = np.concatenate([_doubles(rng, 3000), rng.normal(1000, 10, 3000), rng.lognormal(0, 3, 3000)])
    if "f" in fmt:
        values = values[np.abs(values) < 1e30]  # lines of at most 40 bytes
    _check([fmt.format(float(v)) for v in values])


@pytest.mark.parametrize("fmt", ["{:.18e}", "{!r}", "{:.17g}"])
def test_one_width_lines_read_in_place(fmt: str) -> None:
    """The layout every line shares (savetxt's "%.18e" of one magnitude): the path without gathering."""
    rng = np.random.default_rng(3)
    lines = [fmt.format(float(v)) for v in rng.uniform(1000, 9999, 20000)]
    width = len(lines[0])
    lines = [line for line in lines if len(line) == width]
    _check(lines)


def test_half_way_and_hard_cases() -> None:
    lines = [
        "9007199254740993",  # 2**53 + 1: half-way, even rounds down
        "9007199254740995",
        "9007199254740993.0",
        "18014398509481990",
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",
        "4.9406564584124654e-324",
        "1e-320",
        "1.7976931348623157e308",
        "1e23",
        "8.589973e9",
        "0.1",
        "-0",
        "-0.0",
        "+.5",
        "5.",
        "1E5",
        "1e+05",
        "1e-05",
        "0000000000000000000000000001.5",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
        "7.2057594037927933e16",
        "1e-99999",
        "3.0000000000000004",
        "179769313486231570000000000000000000000",
    ]
    _check(lines)
    for line in lines:
        _check([line] * 5)


def test_exact_half_way_decimals_of_the_extended_path() -> None:
    """Decimals exactly half-way between two doubles, with at most 19 digits (the cases a double rounding
    would get wrong)."""
    rng = np.random.default_rng(5)
    lines = []
    for value in rng.uniform(2**53, 10**19, 2000):
        double = float(value)
        middle = str(int(double) + int(np.spacing(double)) // 2)
        lines += [middle, f"{middle[0]}.{middle[1:]}e+{len(middle) - 1}", f"{middle}.000"]
    _check(lines)


def test_blank_lines_crlf_and_no_final_newline() -> None:
    lines = ["1.5", "", "-2.25e3", "", "", "3"]
    _check(lines, end="\r\n")
    data = b"\n\n1.25\n2.5\n\n3.75"
    found = parse_lines(data)
    assert found is not None and found.tolist() == [1.25, 2.5, 3.75]


@pytest.mark.parametrize(
    "bad", ["1.2.3", "1e", "e5", "--1", "1-2", ".", "-", "+-1", "1e5.5", "1ee5", "1e+", "+", "-.e5", "1.e-", "5e-3-"]
)
def test_lines_float_refuses(bad: str) -> None:
    for lines in ([bad], ["1.5", bad, "2.5"], ["1.25"] * 3 + [bad], [bad.rjust(4, "1")] * 3):
        text = "\n".join(lines) + "\n"
        try:
            [float(line) for line in lines]
        except ValueError:
            assert parse_lines(text.encode()) is None
        else:
            _check(lines)


def _dotted_keys(data: bytes):
    base = np.frombuffer(data + b"0" * 48, dtype=np.uint8)
    ends = np.flatnonzero(base[: len(data)] == 10)
    return decimal_lines._dotted(data, base, ends - (np.diff(ends, prepend=-1) - 1), ends)


def test_lines_of_one_dot_grouped_by_where_it_is() -> None:
    """``repr`` of timings (digits around one dot, of many lengths, some negative): grouped by length, the
    dot's place and a leading minus alone, without comparing the lines' bytes; anything else in a line
    (a second dot, a minus inside, an exponent) leaves the data to the hashed layouts."""
    rng = np.random.default_rng(5)
    values = rng.normal(1000, 10, 3000) * rng.choice([1, -1, 1e-3, -1e3], 3000)
    lines = [repr(v) for v in values.tolist()] + ["-.5", "3.", ".25", "-7.0"]
    data = ("\n".join(lines) + "\n").encode()
    keys = _dotted_keys(data)
    assert keys is not None
    layouts = [line.translate(str.maketrans("0123456789-", "DDDDDDDDDDs")) for line in lines]
    assert len(set(zip(keys.tolist(), layouts, strict=True))) == len(set(keys.tolist())) == len(set(layouts))
    _check(lines)
    for other in (["1.5", "1-.5"], ["1.5", "-1.5-"], ["1.5.", "5"], ["15", "1..5"], ["1.5", "2.5e3"], ["1.5", "2"]):
        text = ("\n".join(other) + "\n").encode()
        assert _dotted_keys(text) is None
        assert (parse_lines(text) is None) == ("e" not in other[1] and other[1] != "2")


def test_lone_cr_and_long_lines_left_to_the_general_reader() -> None:
    assert parse_lines(b"1.5\r2.5\n") is None
    assert parse_lines(b"1" * 41 + b"\n") is None
    assert parse_lines(b"\n\n") is None


def test_tables_exact() -> None:
    """The powers of ten and five the proofs rest on, against Python integers."""
    assert [int(p) for p in decimal_lines._POW10_EXTENDED] == [10**k for k in range(28)]
    for q in (-342, -300, -27, -1, 0, 1, 27, 55, 308):
        index = q - decimal_lines._Q_MIN
        power = int(decimal_lines._POWERS[index]) << 64 | int(decimal_lines._POWERS_LOW[index])
        shift = int(decimal_lines._SHIFTS[index]) + 64
        assert power == math.floor(Fraction(5) ** q * Fraction(2) ** shift)
        assert 2**127 <= power < 2**128


def test_eisel_lemire_alone_against_float() -> None:
    """The 128-bit path (the one taken beyond |q| = 27, and where x87's format is missing) on its own."""
    rng = np.random.default_rng(11)
    w = rng.integers(1, 10**19, 20000, dtype=np.uint64, endpoint=False)
    w[:5000] //= np.uint64(10**6)
    q = rng.integers(-340, 300, 20000)
    found, unsure = decimal_lines._eisel_lemire(w, q)
    expected = np.array([float(f"{a}e{b}") for a, b in zip(w.tolist(), q.tolist(), strict=True)])
    sure = ~unsure
    assert unsure.mean() < 0.1
    assert found[sure].view(np.int64).tolist() == expected[sure].view(np.int64).tolist()


def test_extended_alone_against_float() -> None:
    if not decimal_lines._EXTENDED:
        pytest.skip("no x87 extended precision here")
    rng = np.random.default_rng(12)
    w = rng.integers(1, 10**19, 20000, dtype=np.uint64)
    q = rng.integers(-27, 28, 20000)
    found, unsure = decimal_lines._extended(w, q)
    expected = np.array([float(f"{a}e{b}") for a, b in zip(w.tolist(), q.tolist(), strict=True)])
    assert found[~unsure].view(np.int64).tolist() == expected[~unsure].view(np.int64).tolist()


def test_without_extended_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decimal_lines, "_EXTENDED", False)
    rng = np.random.default_rng(13)
    _check([f"{float(v):.18e}" for v in rng.normal(1000, 10, 5000)] + [repr(float(v)) for v in _doubles(rng, 5000)])


def test_large_files_read_through_it(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """read_sample_array gives a large file's values by parse_lines (float()'s), and a bad line still the
    general reader's error naming file and line."""
    from abstat.errors import InputError
    from abstat.readers import decimals

    calls = []
    real = decimal_lines.parse_lines
    monkeypatch.setattr(decimal_lines, "parse_lines", lambda data: calls.append(1) or real(data))
    rng = np.random.default_rng(21)
    lines = [repr(float(v)) for v in rng.lognormal(0, 2, 20000)]
    path = tmp_path / "x.txt"
    path.write_text("\n".join(lines) + "\n")
    assert len(path.read_bytes()) >= decimals.LINES_FROM
    found = decimals.read_sample_array(str(path))
    assert calls and found.view(np.int64).tolist() == _reference(lines).view(np.int64).tolist()
    lines[12345] = "1.5e"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"x\.txt.*12346.*1\.5e"):
        decimals.read_sample_array(str(path))


def test_tiled_says_what_counting_the_first_line_says() -> None:
    """``_tiled`` (a period of uint64 words at a time) against ``bytes.count`` of the first line: one byte
    changed anywhere (the first period, the words, the tail after the last whole period), and lines that
    alternate so that every period is the same but not every line."""
    import random

    rnd = random.Random(7)
    for stride in (1, 3, 4, 5, 8, 12, 25, 41):
        row = bytes(rnd.choice(b"Ds.e") for _ in range(stride - 1)) + b"\n"
        for rows in (1, 2, 3, 33, 130, 1000):
            tiled = row * rows
            assert decimal_lines._tiled(tiled, stride)
            for at in [*range(0, len(tiled), max(1, len(tiled) // 60)), len(tiled) - 1]:
                changed = bytearray(tiled)
                changed[at] = ord("D") if tiled[at] != ord("D") else ord(".")
                expected = changed.count(changed[:stride]) == rows
                assert decimal_lines._tiled(bytes(changed), stride) == expected, (stride, rows, at)
        if stride > 1:  # (period 8 at stride 4, 24 at 12: two lines, every period alike)
            other = (b"D" if row[0] != ord("D") else b".") + row[1:]
            assert not decimal_lines._tiled((row + other) * 500, stride)
