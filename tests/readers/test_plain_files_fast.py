"""A plain sample file (numbers alone) is told from peers' formats without their readers (issue 42,
start-up): the answer is the one the full detection gives, every peer and kernel-tool file of
tests/data still goes to its reader, and ``compare A B`` of plain files imports none of them."""

from __future__ import annotations

import os

import pytest
from support import paths
from support.cli import imported_modules
from support.cli import run_abstat as abstat

from abstat.readers.peers import detect_format
from abstat.readers.specs import _NUMBERS_ALONE, _peer_format

PLAIN = ["1\n2\n3\n", "1.5e3\n2.25E-3\n-4\n+5\n", "  1.0\t2.0\r\n3.0 \n", "\n\n7\n", "1e5 2e5 3e5\n"]


@pytest.mark.parametrize("text", PLAIN)
def test_numbers_alone_are_plain_as_the_full_detection_says(tmp_path, text):
    path = tmp_path / "a.txt"
    path.write_text(text)
    assert _NUMBERS_ALONE.fullmatch(text.encode())
    assert detect_format(str(path), text) is None and _peer_format(str(path)) is None


def _data_files() -> list[str]:
    found = []
    for folder in ("kernel", "peers"):
        for root, _, names in os.walk(os.path.join(paths.DATA, folder)):
            found += [os.path.join(root, n) for n in names if n not in ("SOURCE.md", "README")]
    return sorted(found)


def test_every_peer_file_still_goes_to_its_reader():
    files = _data_files()
    assert len(files) >= 20
    for path in files:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
        assert not _NUMBERS_ALONE.fullmatch(head), path  # never taken for a plain file


def test_compare_of_plain_files_imports_no_peer_reader(tmp_path):
    for name, values in (("a.txt", "10\n11\n12\n13\n"), ("b.txt", "11\n12\n13\n14\n")):
        (tmp_path / name).write_text(values)
    imported, stdout = imported_modules(tmp_path, "compare", "a.txt", "b.txt")
    assert "abstat.readers.specs" in imported  # the import log was read
    assert not imported & {"abstat.readers.peers", "abstat.readers.kernel", "abstat.readers.fio"}
    assert stdout == abstat("compare", "a.txt", "b.txt", cwd=tmp_path).stdout
