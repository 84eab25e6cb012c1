"""Classic data sets counted by their distinct lines (``abstat.ministat.counted``) against the list path.

The reference is what ``abstat ministat`` computed before: ``sample_set(parse_ministat(...))`` (every value
a float in a list, sorted, sums in input order), itself held against Debian's ministat elsewhere
(``test_ministat_debian.py``, ``test_ministat_conformance.py``).  Every statistic must be the same double
and the plot's column runs the same, for random files of integers (exact sums and sums beyond 2**53),
decimals, ties, negative numbers, blank lines and spellings of one value ("7", "007"; "1.5", "1.50"); and
every input the counting path cannot take must give None (then the general reader decides).
"""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import sys

import pytest

from abstat.ministat import counted
from abstat.ministat.dataset import sample_set
from abstat.readers.text import FGETS_CHUNK, parse_ministat

FIELDS = ("n", "min", "max", "median", "mean", "variance", "stddev")


def _reference(data: bytes):
    return sample_set(parse_ministat(data, "x"), "classic")


def _same(left, right) -> None:
    for field in FIELDS:
        a, b = getattr(left, field), getattr(right, field)
        assert (a == b and str(a) == str(b)) or (a != a and b != b), (field, a, b)
    ordered = right.sorted_values
    for x0, dx in ((ordered[0], (ordered[-1] - ordered[0]) / 70), (ordered[0] - 1.5, 0.37), (0.0, 1e9)):
        if dx:
            assert left.column_counts(x0, dx) == right.column_counts(x0, dx)


def _integers(rng: random.Random, n: int) -> list[str]:
    kind = rng.choice(["small", "normal", "negative", "huge", "tied", "padded"])
    if kind == "small":
        return [str(rng.randint(0, 9)) for _ in range(n)]
    if kind == "normal":
        return [str(round(rng.gauss(52000, 3000))) for _ in range(n)]
    if kind == "negative":
        return [str(rng.randint(-50, 50) or 1) for _ in range(n)]
    if kind == "huge":  # squares beyond 2**53: the sums are the doubles' own, in input order
        return [str(rng.choice([2**26 + 1, 10**8 + 7, 3 * 10**15 + 1, -(10**9) - 3])) for _ in range(n)]
    if kind == "tied":
        return [str(20 * round(rng.gauss(440, 7) / 20)) for _ in range(n)]
    return [rng.choice(["7", "007", "0", "00", "-3", "-03", "12"]) for _ in range(n)]


def _decimals(rng: random.Random, n: int) -> list[str]:
    kind = rng.choice(["time", "perf", "mixed", "spellings", "long"])
    if kind == "time":
        return [f"{rng.gauss(1.05, 0.05):.3f}" for _ in range(n)]
    if kind == "perf":
        return [f"{rng.gauss(1234.5, 60):.2f}" for _ in range(n)]
    if kind == "mixed":
        return [rng.choice(["1.5", "-2.25", "3", ".5", "7.", "-.125", "0.1", "0.2"]) for _ in range(n)]
    if kind == "spellings":
        return [rng.choice(["1.5", "1.50", "01.5", "2", "2.0", "-1.", "-1.000"]) for _ in range(n)]
    return [repr(rng.uniform(-1e6, 1e6)) for _ in range(n)]


def _file(rng: random.Random, lines: list[str]) -> bytes:
    if rng.random() < 0.3:  # blank lines
        for _ in range(rng.randint(1, 4)):
            lines.insert(rng.randint(0, len(lines)), "")
    text = "\n".join(lines)
    return (text + "\n" if rng.random() < 0.8 else text).encode()


@pytest.mark.parametrize("seed", range(60))
def test_counted_equals_the_list_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = rng.choice([3, 4, 5, 10, 101, 1000, 5000])
    lines = (_integers if seed % 2 else _decimals)(rng, n)
    data = _file(rng, lines)
    monkeypatch.setattr(counted, "BLOCK", rng.choice([64, 1000, 1 << 18]))  # lines split across reads
    monkeypatch.setattr(counted, "DISTINCT_SHARE", 1.0)  # (mostly distinct lines counted too)
    monkeypatch.setattr(counted, "MAX_DISTINCT_DECIMALS", counted.MAX_DISTINCT)
    expected = _reference(data)
    for source in (data, io.BytesIO(data)):
        found = counted.counted_sample_set(source, FGETS_CHUNK)
        assert found is not None
        _same(found, expected)


def test_the_sums_are_exact_only_up_to_two_to_the_53() -> None:
    """Σx² just above 2**53: the doubles' running sum is not the exact one, and the counted set still gives
    the doubles' (its exactness test is not loose); just at 2**53 both agree."""
    above = [2**26 + 1] * 3 + [1] * 5 + [2] * 5
    data = "\n".join(map(str, above)).encode() + b"\n"
    exact = sum(value * value for value in above)
    assert exact > 2**53 and float(exact) != _doubles_squares(above)
    _same(counted.counted_sample_set(data, FGETS_CHUNK), _reference(data))
    assert counted.counted_sample_set(data, FGETS_CHUNK, in_order=False) is None  # (numpy's reader then)


def _doubles_squares(values: list[int]) -> float:
    total = 0.0
    for value in values:
        total += float(value) * float(value)
    return total


@pytest.mark.parametrize(
    "data",
    [
        b"1\n2\n-0\n",  # negative zero: where it sorts among zeros is the list sort's
        b"1.5\n2\n-0.0\n0\n",
        b"1\n2\n-.0\n",
        b"1\n2-3\n4\n",
        b"1\n-\n4\n",
        b"1\n.\n4\n",
        b"1.2.3\n1\n2\n",
        b"1\n2\n3\r\n",
        b"1\n2\n# 3\n",
        b"1\n2\nx\n",
        b"1\n2\n",  # fewer than 3 values: the general reader's message
        b"\n\n",
        b"1\n2\n" + b"1" * 400 + b"\n",  # beyond the doubles: the general reader's error
        b"1.5\n2\n" + b"1" * 400 + b".0\n",
        b"1\n2\n" + b"1" * 5000 + b"\n",  # (beyond int's digit limit too)
        b"1\n2\n" + b"1" * FGETS_CHUNK + b"\n",  # fgets would cut the line in two
        b"1.5\n2\n" + b"1" * (FGETS_CHUNK - 2) + b".5\n",
    ],
)
def test_what_it_cannot_take_gives_none(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counted, "DISTINCT_SHARE", 1.0)  # (not for being mostly distinct)
    assert counted.counted_sample_set(data, FGETS_CHUNK) is None


def test_a_line_just_below_fgets_buffer_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counted, "DISTINCT_SHARE", 1.0)
    data = b"1.5\n2\n" + b"0" * (FGETS_CHUNK - 4) + b"1.5\n"
    found = counted.counted_sample_set(data, FGETS_CHUNK)
    assert found is not None
    assert found.max == _reference(data).max


def test_decimals_after_integers_and_many_distinct_lines_give_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counted, "BLOCK", 16)
    assert counted.counted_sample_set(io.BytesIO(b"1\n1\n1\n1\n1\n1\n1\n1\n1\n"), FGETS_CHUNK) is not None
    assert counted.counted_sample_set(io.BytesIO(b"1\n1\n1\n1\n1\n1\n1\n1\n1\n1.5\n"), FGETS_CHUNK) is None
    monkeypatch.setattr(counted, "BLOCK", 1 << 18)  # (one block: the share of distinct lines is the file's)
    monkeypatch.setattr(counted, "MAX_DISTINCT", 5)
    assert counted.counted_sample_set(b"1\n2\n3\n4\n5\n6\n" * 3, FGETS_CHUNK) is None
    assert counted.counted_sample_set(b"1\n2\n3\n4\n5\n5\n" * 3, FGETS_CHUNK) is not None
    monkeypatch.setattr(counted, "MAX_DISTINCT", 1000)
    assert counted.counted_sample_set(b"1\n2\n3\n4\n5\n6\n7\n", FGETS_CHUNK) is not None  # (few lines read)
    monkeypatch.setattr(counted, "SHARE_FROM", 1)
    assert counted.counted_sample_set(b"1\n2\n3\n4\n5\n6\n7\n", FGETS_CHUNK) is None  # mostly distinct
    assert counted.counted_sample_set(b"1\n2\n3\n1\n2\n3\n1\n", FGETS_CHUNK) is not None
    monkeypatch.setattr(counted, "MAX_DISTINCT_DECIMALS", 5)  # decimals: a lower bound (a dictionary's cost)
    assert counted.counted_sample_set(b"1.5\n2\n3\n4\n5\n6\n" * 3, FGETS_CHUNK) is None
    assert counted.counted_sample_set(b"1.5\n2\n3\n4\n5\n5\n" * 3, FGETS_CHUNK) is not None
    assert counted.counted_sample_set(b"1\n2\n3\n4\n5\n6\n" * 3, FGETS_CHUNK) is not None  # (integers)


def test_without_in_order_only_exact_integers_are_counted() -> None:
    assert counted.counted_sample_set(b"1.5\n2.5\n1.5\n2.5\n", FGETS_CHUNK, in_order=False) is None
    assert counted.counted_sample_set(b"1\n2\n1\n2\n", FGETS_CHUNK, in_order=False) is not None


def test_long_line_check_against_the_lengths() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        chunk = rng.choice([7, 8, 9, 16, 1023])
        lengths = [rng.choice([0, 1, 2, chunk - 2, chunk - 1, chunk, chunk + 1, 3 * chunk]) for _ in range(6)]
        block = b"\n".join(b"1" * length for length in lengths[: rng.randint(0, 6)]) + rng.choice([b"", b"\n"])
        tokens = block.split()
        assert counted._long_line(block, tokens, chunk) == (bool(tokens) and max(map(len, tokens)) >= chunk)


MINISTAT = shutil.which("ministat")


@pytest.mark.skipif(MINISTAT is None, reason="Debian's ministat is not installed (apt-get install ministat)")
@pytest.mark.parametrize("options", [["-A"], [], ["-n"], ["-s", "-w", "60"]])
def test_against_debian_ministat(tmp_path, options: list[str]) -> None:
    """Through the command: files below and above 1 MiB (above, quantized integers are counted, the rest goes
    to numpy's reader)."""
    rng = random.Random(7)
    files = []
    for index, lines in enumerate(
        [
            [str(round(rng.gauss(52000, 3000))) for _ in range(200_000)],  # 1.2 MB
            [str(20 * round(rng.gauss(460, 7) / 20)) for _ in range(300_000)],
            [f"{rng.gauss(1.05, 0.05):.3f}" for _ in range(20_000)],
        ]
    ):
        path = tmp_path / f"f{index}.txt"
        path.write_text("\n".join(lines) + "\n")
        files.append(str(path))
    for pair in (files[:2], files[1:]):
        ours = subprocess.run(
            [sys.executable, "-m", "abstat", "ministat", *options, *pair], capture_output=True, check=True
        )
        theirs = subprocess.run([str(MINISTAT), *options, *pair], capture_output=True, check=True)
        assert ours.stdout == theirs.stdout


def test_which_files_the_command_counts(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """From 128 KiB any plain file, unless more than half its lines (of at least SHARE_FROM) are distinct
    below 1 MiB, or more than MAX_DISTINCT above; from 16 MiB (made smaller here) only those of at most FEW
    distinct lines (TSC counts): the others go to numpy's reader."""
    from abstat.ministat import cli, reading

    rng = random.Random(3)
    shapes = {
        "small": ([str(rng.randint(0, 99)) for _ in range(1000)], False),  # 4 KB: the list's sort
        "decimals": ([f"{rng.gauss(1.05, 0.05):.3f}" for _ in range(40_000)], True),  # 240 KB
        "mostly-distinct": ([str(rng.randint(0, 10**9)) for _ in range(60_000)], False),  # 600 KB
        "tsc": ([str(20 * round(rng.gauss(460, 7) / 20)) for _ in range(300_000)], True),  # 1.2 MB
        "distinct": ([str(round(rng.gauss(52000, 3000))) for _ in range(200_000)], True),  # 1.2 MB
        "large-decimals": ([f"{rng.gauss(1.05, 0.05):.3f}" for _ in range(200_000)], True),
        "large-distinct": ([str(rng.randint(0, 10**9)) for _ in range(120_000)], False),  # > MAX_DISTINCT
    }
    made = []
    original = counted.CountedSampleSet.__init__

    def recording(self, *args) -> None:
        made.append(1)
        original(self, *args)

    monkeypatch.setattr(counted.CountedSampleSet, "__init__", recording)
    for name, (lines, expected) in shapes.items():
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n")
        made.clear()
        assert cli.main(["-A", str(path), str(path)]) == 0
        assert bool(made) == expected, name
        assert capsys.readouterr().out.count("No difference proven") == 1
    monkeypatch.setattr(reading, "FEW_ONLY_FROM", 1 << 20)
    for name, expected in (("tsc", True), ("distinct", False), ("large-decimals", False)):
        made.clear()
        assert cli.main(["-A", str(tmp_path / f"{name}.txt"), str(tmp_path / f"{name}.txt")]) == 0
        assert bool(made) == expected, name
        assert capsys.readouterr().out.count("No difference proven") == 1
