"""A comma between an integer and a digit under the default delimiters is refused (attack18 M1): read as two
columns, ``12,5`` gave 12 and hid a -4.4% change (Welch's t on the decimal-comma values: p 0.0005)."""

from __future__ import annotations

import pytest
from scipy import stats

from abstat.cli import main
from abstat.errors import InputError
from abstat.readers.text import parse_samples

DC_A = b"12,5\n12,7\n12,9\n13,1\n12,6\n12,8\n"
DC_B = b"12,1\n12,3\n12,2\n12,0\n12,4\n12,0\n"


def _decimal_comma(data: bytes) -> list[float]:
    return [float(line.replace(",", ".")) for line in data.decode().split()]


def test_the_decimal_comma_values_differ() -> None:
    # the reference: what the files mean, read as decimal commas
    assert stats.ttest_ind(_decimal_comma(DC_A), _decimal_comma(DC_B), equal_var=False).pvalue < 0.001


@pytest.mark.parametrize("data", [DC_A, b"1,234\n1,240\n", b"  -3,5 # x\n", b"7\n8,25\n"])
def test_an_integer_comma_digit_is_refused_with_its_line(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        parse_samples(data, "f.txt")
    assert "decimal comma" in str(caught.value)
    assert caught.value.line == data.count(b"\n", 0, data.index(b",")) + 1


@pytest.mark.parametrize(
    ("data", "values"),
    [
        (b"1.5,2.3\n1.6,2.2\n", [1.5, 1.6]),  # a decimal point first: columns
        (b"12, 5\n13, 6\n", [12.0, 13.0]),  # a comma and a space: columns
        (b"12 ,5\n", [12.0]),
        (b"1e3,4\n", [1000.0]),
    ],
)
def test_unambiguous_columns_are_read(data: bytes, values: list[float]) -> None:
    assert parse_samples(data, "f.txt") == values


def test_delimiters_given_read_commas_as_columns() -> None:
    assert parse_samples(DC_A, "f.txt", delimiters=",") == [12.0, 12.0, 12.0, 13.0, 12.0, 12.0]


def test_a_column_beyond_the_first_reads_commas_as_columns() -> None:
    # asking for column 2 says the file has columns: '2,20' is 2 and 20 (tests/ministat's lenient reader too)
    assert parse_samples(b"1, 10\n2,20\n3 30\n", "f.txt", column=2) == [10.0, 20.0, 30.0]


def test_compare_exits_2_naming_the_file_and_line(tmp_path, capsys) -> None:
    a, b = tmp_path / "dc_a.txt", tmp_path / "dc_b.txt"
    a.write_bytes(DC_A)
    b.write_bytes(DC_B)
    try:
        status = main(["compare", str(a), str(b)])
    except SystemExit as exited:
        status = exited.code
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dc_a.txt:1:" in err[0] and "'12,5'" in err[0]
