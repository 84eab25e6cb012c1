"""The fast paths of ``abstat ministat`` give exactly what the general ones gave.

* the counting median (integers with a small range) against
  ``ndarray.partition``, the previous method, on tied and untied data;
* the plain-number reader against the general fgets/strtod reader;
* both against Debian's ministat when it is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from abstat.ministat import fast
from abstat.readers import text


def _partition_median(values: np.ndarray, rank: int) -> float:
    copy = values.copy()
    copy.partition(rank)
    return float(copy[rank])


SHAPES = {
    "tsc-5-values": lambda rng, n: 20 * np.rint(rng.normal(440, 7, n) / 20),
    "two-values": lambda rng, n: rng.integers(0, 2, n),
    "constant": lambda rng, n: np.full(n, 7),
    "negative-ties": lambda rng, n: rng.integers(-3, 3, n),
    "distinct": lambda rng, n: rng.permutation(n) * 3 - n,
    "normal-distinct": lambda rng, n: np.rint(rng.normal(52000, 3000, n)),
    "one-outlier": lambda rng, n: np.r_[rng.integers(100, 104, n - 1), [10**6]],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("n", [3, 4, 101, 1000, 3_000_001])
def test_counting_order_statistic_equals_partition(shape: str, n: int) -> None:
    rng = np.random.default_rng(n)
    values = SHAPES[shape](rng, n).astype(np.int32)
    for rank in {0, n // 2, n - 1, (n - 1) // 2}:
        expected = _partition_median(values, rank)
        assert fast.order_statistic(values.copy(), rank) == expected
        low, high = int(values.min()), int(values.max())
        if high - low < fast.COUNTING_RANGE:
            assert fast._counting_order_statistic(values, rank, low, high) == expected


def test_counting_path_is_taken_for_quantized_data(monkeypatch: pytest.MonkeyPatch) -> None:
    values = (20 * np.rint(np.random.default_rng(1).normal(440, 7, 10_000) / 20)).astype(np.int32)
    called = []
    original = fast._counting_order_statistic
    monkeypatch.setattr(fast, "_counting_order_statistic", lambda *a: called.append(1) or original(*a))
    assert fast.order_statistic(values, 5_000) == _partition_median(values, 5_000)
    assert called


def _general(data: bytes, dialect: str) -> list[float]:
    original = text._plain_numbers
    text._plain_numbers = lambda *_: None
    try:
        return text.parse_ministat(data, "x", dialect=dialect)
    finally:
        text._plain_numbers = original


PLAIN_INPUTS = [
    b"1\n2\n3\n",
    b"440\n460\n440\n420\n440",
    b"-0\n0\n-5\n007\n",
    b"1.5\n.5\n5.\n-.25\n0.1\n",
    b"\n\n3\n\n4\n5\n\n",
    b"123456789012345678901234567890\n9007199254740993\n1\n",
    b"0.30000000000000001665\n2.2250738585072011e-308\n1\n",  # "e": the general reader
]
FALLBACK_INPUTS = [b"1\n-\n3\n", b"1.2.3\n4\n5\n", b"5-3\n1\n2\n", b".\n1\n2\n", b"1 2\n3\n4\n", b"1\r\n2\n3\n"]


@pytest.mark.parametrize("dialect", ["classic", "freebsd"])
@pytest.mark.parametrize("data", PLAIN_INPUTS)
def test_plain_reader_equals_general_reader(data: bytes, dialect: str) -> None:
    ours = text.parse_ministat(data, "x", dialect=dialect)
    reference = _general(data, dialect)
    assert [v.hex() for v in ours] == [v.hex() for v in reference]  # -0.0 stays -0.0


@pytest.mark.parametrize("data", FALLBACK_INPUTS)
def test_plain_reader_declines_anything_else(data: bytes) -> None:
    assert text._plain_numbers(data, text.FGETS_CHUNK) is None


def test_plain_reader_declines_lines_fgets_would_cut() -> None:
    long_line = b"1" * text.FGETS_CHUNK + b"\n2\n3\n"
    assert text._plain_numbers(long_line, text.FGETS_CHUNK) is None
    assert text._plain_numbers(b"1" * (text.FGETS_CHUNK - 1) + b"\n2\n", text.FGETS_CHUNK) is not None


@pytest.mark.skipif(shutil.which("ministat") is None, reason="Debian's ministat is not installed")
@pytest.mark.parametrize("shape", ["tsc-5-values", "normal-distinct"])
@pytest.mark.parametrize("n", [20_000, 400_000])
def test_fast_paths_byte_identical_to_debian_ministat(tmp_path, shape: str, n: int) -> None:
    paths = []
    for seed in (1, 2):
        values = SHAPES[shape](np.random.default_rng(seed), n).astype(np.int64)
        path = tmp_path / f"{seed}.txt"
        path.write_text("\n".join(map(str, values.tolist())) + "\n")
        paths.append(str(path))
    for flags in (["-A"], []):
        reference = subprocess.run(["ministat", *flags, *paths], capture_output=True, check=True).stdout
        ours = subprocess.run(
            [sys.executable, "-m", "abstat", "ministat", *flags, *paths], capture_output=True, check=True
        ).stdout
        assert ours == reference
