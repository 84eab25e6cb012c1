"""Issue 15 §1: inputs outside the statistics give a one-line error or a correct result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.errors import InputError
from abstat.readers.summary import parse_summary
from abstat.readers.text import parse_samples
from support import paths

SRC = paths.SRC


def abstat(*args, cwd=None) -> subprocess.CompletedProcess:
    argv = [os.fsencode(a) for a in (sys.executable, "-m", "abstat", *args)]
    result = subprocess.run(argv, capture_output=True, cwd=cwd, env=dict(os.environ, PYTHONPATH=SRC), timeout=120)
    result.stdout = result.stdout.decode("utf-8", "replace")
    result.stderr = result.stderr.decode("utf-8", "replace")
    return result


def one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def test_a_summary_with_5000_digits_is_a_one_line_error():
    nines = "9" * 5000
    one_line_error(abstat("compare", f"x={nines}:1:1", "y=5:1:1"), "n has 5000 digits")
    one_line_error(abstat("compare", f"x=5:{nines}:1", "y=5:1:1"), "finite")


def test_summary_fields_are_ascii():
    with pytest.raises(InputError, match="n must be a whole number"):
        parse_summary("٥:1:1")
    with pytest.raises(InputError, match="mean must be a finite number"):
        parse_summary("5:١:1")


@pytest.mark.parametrize(
    "data, message",
    [
        ("1\n٢\n3\n".encode(), ":2: not a number: '٢'"),  # Arabic-Indic digit
        ("1\n1\u00a0234\n3\n".encode(), ":2: non-ASCII space U+00A0"),  # no-break space as a thousands separator
        ("1\n2\u20283\n4\n".encode(), ":2: non-ASCII space U+2028"),  # a line separator inside a line
        ("1\n2\n3\u2003\n".encode(), ":3: non-ASCII space U+2003"),
    ],
)
def test_the_lenient_reader_takes_ascii_numbers_only(data, message):
    with pytest.raises(InputError) as caught:
        parse_samples(data, "f.txt")
    assert message in f"{caught.value}"


def test_non_ascii_text_in_comments_is_fine():
    assert parse_samples("1 # ½ µs\u00a0\n2\r3\r\n".encode(), "f.txt") == [1.0, 2.0, 3.0]


def test_a_non_utf8_file_name_works_everywhere(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_text("1\n2\n3\n4\n5\n")
    odd = os.fsdecode(bytes(tmp_path) + b"/b\xff.txt")
    Path(odd).write_bytes(b"2\n3\n4\n5\n6\n")
    for args in (
        ["compare", str(plain), odd],
        ["compare", "--format", "json", str(plain), odd],
        ["report", "--format", "html", "-o", str(tmp_path / "r.html"), str(plain), odd],
        ["report", "--format", "markdown", str(plain), odd],
    ):
        result = abstat(*args)
        assert result.returncode == 0, (args, result.stderr)
    assert "b\\xff" in (tmp_path / "r.html").read_text()


def test_audit_of_a_block_with_a_400_digit_n(tmp_path):
    mail = tmp_path / "mail.txt"
    mail.write_text(
        "    N           Min           Max        Median           Avg        Stddev\n"
        f"x {'9' * 400}         1         5         3         3     1.5811388\n"
        "+ 5         2         6         4         4     1.5811388\n"
    )
    result = abstat("audit", str(mail))
    assert result.returncode == 1 and "internal error" not in result.stderr  # 1: the report has errors
    assert "N has 400 digits" in result.stdout and "DAMAGED" in result.stdout
