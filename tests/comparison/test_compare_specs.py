"""Variant specifications: files, labels, globs, summaries, stdin."""

from __future__ import annotations

import io
import sys

import pytest

from abstat.errors import InputError, UsageError
from abstat.readers.specs import parse_variant_specs
from abstat.readers.summary import Summary, parse_summary


def test_files_labels_globs_and_summaries(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "b.txt").write_text("1\n2\n3\n")  # (a.txt in two variants is refused: attack21 B10)
    (tmp_path / "x=y.txt").write_text("4\n5\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(3):
        (runs / f"r{i}.txt").write_text(f"{i}\n{i + 1}\n")
    v = parse_variant_specs(["a.txt", "new=b.txt", "x=y.txt", "many=runs/r*.txt", "s=98:438.97959:6.6564899"])
    assert list(v) == ["a.txt", "new", "x=y.txt", "many", "s"]
    assert v["a.txt"].data == [1.0, 2.0, 3.0] and not v["a.txt"].nested
    assert v["x=y.txt"].data == [4.0, 5.0]  # an existing file wins over a label
    assert v["many"].nested and v["many"].data == [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    assert v["many"].sources == ["runs/r0.txt", "runs/r1.txt", "runs/r2.txt"]
    assert v["s"].data == Summary(98, 438.97959, 6.6564899)


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1\n2\n3\n")))
    v = parse_variant_specs(["in=-"])
    assert v["in"].data == [1.0, 2.0, 3.0]


def test_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="no file matches"):
        parse_variant_specs(["a=nothing-*.txt"])
    with pytest.raises(InputError):
        parse_variant_specs(["missing.txt"])
    with pytest.raises(UsageError, match="twice"):
        parse_variant_specs(["a=5:2:3", "a=4:5:6"])
    with pytest.raises(UsageError):
        parse_variant_specs(["a="])


@pytest.mark.parametrize("text", ["1:2:3", "0:1:1", "5:1:-1"])
def test_bad_summaries(text):
    with pytest.raises(InputError):
        parse_summary(text)


def test_summary_forms():
    assert parse_summary("5:1e3:2.5") == Summary(5, 1000.0, 2.5)
    assert parse_summary(" 10 : -3 : 0 ") == Summary(10, -3.0, 0.0)
