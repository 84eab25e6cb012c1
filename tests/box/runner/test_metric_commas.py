"""attack20 A2: ``--metric NAME=REGEX`` read a decimal comma as a thousands separator (``0,41`` stored as 41,
``12,5`` as 125, ``1.234,5`` as 1.2345).  A comma is read only where it groups digits by three and nothing else
makes it ambiguous; any other comma leaves the value unread, the run failed with a note naming the metric and the
text, as compare refuses ``12,5`` in a sample file."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from abstat.box.runner import parse_metric_pattern
from abstat.box.runner.metrics import extract_regex_metrics
from support import paths

KERNEL = paths.DATA / "kernel"
PATTERNS = [r"task_clock=^\s*(\S+) msec task-clock", r"elapsed=^\s*(\S+) seconds time elapsed"]


def _extract(text: str) -> tuple[dict[str, list[float]], list[str]]:
    return extract_regex_metrics(text, [parse_metric_pattern(spec) for spec in PATTERNS])


def test_perf_printed_in_de_DE_is_not_read_as_other_numbers():
    """The same two recordings printed by ``perf stat report`` in de_DE and in C (tests/data/kernel/SOURCE.md):
    the C text gives the reference values; the de_DE text (``1.508,55``, ``6,272092984``) gives no value and
    a note for each, never 1.50855 or 6272092984."""
    reference, notes = _extract((KERNEL / "perf_stat_report_C.txt").read_text())
    assert notes == [] and reference == {"task_clock": [1508.55, 1252.89], "elapsed": [6.272092984, 4.966566977]}
    values, notes = _extract((KERNEL / "perf_stat_report_de_DE.txt").read_text())
    assert values == {}
    assert [note.split(",")[0] for note in notes] == [
        "metric task_clock: matched '1.508",
        "metric task_clock: matched '1.252",
        "metric elapsed: matched '6",
        "metric elapsed: matched '4",
    ]
    assert all("a decimal comma or a thousands separator?" in note for note in notes), notes


@pytest.mark.parametrize("value", [1234567.0, 1234567.5, -9876543210.25, 1234.5, 100000.125, 12345678.0])
def test_thousands_grouped_by_three_are_read(value):
    """Python's own grouping (format spec ``,``, PEP 378) as the reference spelling of each value."""
    text = f"x: {value:,}\n"
    assert "," in text
    values, notes = extract_regex_metrics(text, [parse_metric_pattern(r"x=x: (\S+)")])
    assert notes == [] and values == {"x": [value]}


@pytest.mark.parametrize("text", ["0,41", "12,5", "1.234,5", "1,2,3", "1,234", "0,123,456", "1,234,56", "1,2345.6"])
def test_other_commas_are_not_read(text):
    """``1,234`` alone is 1.234 in de_DE (``%.3f``) and 1234 in en_US (``%'d``): not read, as the perf reader
    refuses a count whose one separator is followed by three digits (docs/peers.md)."""
    values, notes = extract_regex_metrics(f"x: {text}\n", [parse_metric_pattern(r"x=x: (\S+)")])
    assert values == {} and notes == [
        f"metric x: matched {text!r}, a decimal comma or a thousands separator? "
        + ("print numbers with '.' as the decimal point (LC_ALL=C)")
    ]


def test_run_fails_the_runs_that_print_a_decimal_comma_and_compare_refuses_the_same_file(tmp_path):
    bench = tmp_path / "b.sh"
    bench.write_text("#!/bin/sh\necho 'x: 0,41'\n")
    bench.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(paths.SRC)}
    run = [sys.executable, "-m", "abstat", "run", "-n", "2", "--store", str(tmp_path / "s.db"), "--no-progress"]
    done = subprocess.run(
        [*run, "--metric", r"x=x: (\S+)", "-v", f"a={bench}", "-v", "b=echo x: 2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "metric x: matched '0,41', a decimal comma or a thousands separator?" in done.stderr
    (tmp_path / "a.txt").write_text("0,41\n0,42\n")
    (tmp_path / "b.txt").write_text("2\n2.1\n")
    plain = subprocess.run(
        [sys.executable, "-m", "abstat", "compare", "a.txt", "b.txt"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env=env,
    )
    assert plain.returncode == 2 and "a decimal comma" in plain.stderr, plain.stderr
