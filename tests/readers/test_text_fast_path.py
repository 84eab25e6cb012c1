"""``parse_samples``' C-speed path for files of one plain number per line gives what the
general reader gives, values and errors alike (file, line, message), on random files drawn
from the characters that decide between the two paths (issue 42)."""

from __future__ import annotations

import random

import pytest

from abstat.errors import InputError
from abstat.readers import text


def _general(data: bytes) -> list[float]:
    saved = text._one_number_per_line
    text._one_number_per_line = lambda _data: None
    try:
        return text.parse_samples(data, "f")
    finally:
        text._one_number_per_line = saved


def _outcome(read, data: bytes) -> tuple:
    try:
        return ("values", read(data))
    except InputError as err:
        return ("error", str(err))


@pytest.mark.parametrize(
    "data",
    [
        b"1\n2\n3\n",
        b" 1.5 \r\n\r\n-2e3\r\n+4\n",
        b"1 2\n3\n",
        b"1e999\n2\n",
        b"-1e999\n",
        b"1.2.3\n",
        b"",
        b"\n\n",
        b"-\n",
        b"1\x0b2\n",
        b"1\x0c\n2",
        b"e\n",
        b".5\n5.\n",
        b"1\r2\r3",
        b"  \t\n7\n",
        b"0x1p3\n",
        b"1 # two\n",
        b"1,2\n",
        b"nan\n",
        b"\xef\xbb\xbf1\n2\n",
    ],
)
def test_fast_path_reads_as_the_general_reader(data: bytes) -> None:
    assert _outcome(lambda d: text.parse_samples(d, "f"), data) == _outcome(_general, data)


def test_fast_path_on_random_files_reads_as_the_general_reader() -> None:
    rng = random.Random(42)
    alphabet = b"0123456789+-.eE \t\n\r\x0b\x0c#,x"
    taken = 0
    for _ in range(20000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 14)))
        taken += text._one_number_per_line(data) is not None
        assert _outcome(lambda d: text.parse_samples(d, "f"), data) == _outcome(_general, data), data
    assert taken > 500  # the fast path was exercised, not only declined


def test_fast_path_keeps_file_order_and_exact_values() -> None:
    rng = random.Random(7)
    values = [rng.lognormvariate(0, 3) * rng.choice((-1, 1)) for _ in range(5000)]
    data = "\n".join(map(repr, values)).encode()
    assert text._one_number_per_line(data) == values
    assert text.parse_samples(data, "f") == values
