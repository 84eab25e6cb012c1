"""``abstat ministat`` (classic dialect) against Debian's ``/usr/bin/ministat``
itself, run in the same test on the same bytes: standard output and exit
status must be identical.

Inputs: the white space the real program trims (CRLF, trailing blanks and
tabs, ``\\v``, ``\\f``, a CR on the last line without a newline), FreeBSD's
own ``chameleon`` file (``720\\t`` under ``-d ' '``), blank lines, comments,
columns, and generated files of decimals and integers large enough for the
numpy readers (``time`` and ``perf stat`` output), with and without CRLF.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REFERENCE = "/usr/bin/ministat"
pytestmark = pytest.mark.skipif(
    not os.access(REFERENCE, os.X_OK),
    reason="Debian's ministat is not installed at /usr/bin/ministat (apt-get install ministat)",
)

# FreeBSD's usr.bin/ministat/chameleon (freebsd-src, commit 023fc80e): its third line ends in a tab.
CHAMELEON = b"150\n400\n720\t\n500\n930\n"
IGUANA = b"50\n200\n150\n400\n750\n400\n150\n"

SMALL = {
    "crlf": (b"1\r\n2\r\n3\r\n4\r\n", []),
    "crlf-decimals": (b"1.5\r\n2.25\r\n3\r\n4.125\r\n", ["-A"]),
    "trailing-blanks": (b"1 \n2  \n3\t\n4 \t \n", []),
    "vertical-tab-form-feed": (b"1\v\n2\f\n3\n4\n", ["-A"]),
    "last-line-cr": (b"1\n2\n3\r", ["-A"]),
    "cr-inside": (b"1\r 5\n2\n3\n", ["-A"]),
    "blank-cr-line": (b"1\n\r\n2\n3\n", ["-A"]),
    "leading-blanks": (b" 1\n\t2\n  3\n", ["-A"]),
    "comma-trailing-blank": (b"1, 2\n2 ,3\n3,\n", ["-A", "-d", ","]),
    "comma-column-2": (b"a,1 \nb,2\t\nc,3\r\n", ["-A", "-d", ",", "-C", "2"]),
    "comment": (b"# header\n1\n2 # two\n3\n", ["-A"]),
    "invalid": (b"1\n2\nabc\n", ["-A"]),
}


def run(command: list[str], cwd: Path, stdin: bytes = b"") -> tuple[bytes, int]:
    done = subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, timeout=300)
    return done.stdout, done.returncode


def both(args: list[str], cwd: Path, stdin: bytes = b"") -> None:
    theirs = run([REFERENCE, *args], cwd, stdin)
    ours = run([sys.executable, "-m", "abstat", "ministat", *args], cwd, stdin)
    assert ours == theirs, (args, ours, theirs)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_white_space_and_columns_as_debian(tmp_path: Path, name: str) -> None:
    data, flags = SMALL[name]
    both(flags, tmp_path, data)  # standard input
    (tmp_path / "a.txt").write_bytes(data)
    (tmp_path / "b.txt").write_bytes(IGUANA)
    both([*flags, "a.txt", "b.txt"], tmp_path)


def test_freebsds_chameleon_under_a_space_delimiter(tmp_path: Path) -> None:
    (tmp_path / "chameleon").write_bytes(CHAMELEON)
    (tmp_path / "iguana").write_bytes(IGUANA)
    for flags in ([], ["-d", " "], ["-d", " ", "-s"], ["-A", "-d", " "]):
        both([*flags, "chameleon", "iguana"], tmp_path)


def _decimals(rng: random.Random, count: int, centre: float, places: int) -> list[str]:
    return [f"{rng.gauss(centre, centre * 0.05):.{places}f}" for _ in range(count)]


@pytest.mark.parametrize("shape", ["time", "perf-stat", "negative", "crlf", "mixed-integers", "long-digits"])
def test_large_files_through_the_numpy_readers_as_debian(tmp_path: Path, shape: str) -> None:
    rng = random.Random(shape)
    count = 200_000  # > 1 MiB: the numpy readers take them
    names = []
    for side, centre in (("a", 1.048), ("b", 1.061)):
        if shape == "time":
            lines = _decimals(rng, count, centre, 3)
        elif shape == "perf-stat":
            lines = _decimals(rng, count, centre * 1e6, 2)
        elif shape == "negative":
            lines = _decimals(rng, count, centre - 1.055, 4)
        elif shape == "crlf":
            lines = _decimals(rng, count, centre, 3)
        elif shape == "mixed-integers":
            lines = [
                str(round(rng.gauss(centre * 1e3, 30))) if i % 3 else f"{rng.gauss(centre * 1e3, 30):.1f}"
                for i in range(count)
            ]
        else:
            lines = [f"{rng.gauss(centre, 0.01):.17f}" for _ in range(count)]
        newline = "\r\n" if shape == "crlf" else "\n"
        path = tmp_path / f"{side}.txt"
        path.write_bytes((newline.join(lines) + newline).encode())
        names.append(path.name)
    from abstat.ministat.fast import integer_sample_set

    for name in names:
        assert (tmp_path / name).stat().st_size >= 1 << 20
        with open(tmp_path / name, "rb") as handle:
            assert integer_sample_set(handle) is not None  # the numpy reader, not the general one
    for flags in (["-A"], [], ["-c", "99"]):
        both([*flags, *names], tmp_path)
