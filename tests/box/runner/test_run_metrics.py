"""--metric NAME=REGEX[:UNIT] parsing and extraction, JSON lines, perf CSV."""

from __future__ import annotations

import pytest

from abstat.box.runner import parse_metric_pattern
from abstat.box.runner.metrics import extract_json_metrics, extract_regex_metrics
from abstat.box.runner.perf import parse_perf_csv

# The ipi_benchmark table of seed 003 (one run's output).
IPI_OUTPUT = """\
Dry-run                 0      495181
Self-IPI         11352737    21549999
Normal IPI      499400218   575433727
Broadcast IPI           0  1700692010
Broadcast lock          0  1663001374
"""

IPI_METRICS = [
    r"dry_run=^Dry-run\s+\d+\s+(\d+)$:ns",
    r"self_ipi=^Self-IPI\s+\d+\s+(\d+)$:ns",
    r"normal_ipi=^Normal IPI\s+\d+\s+(\d+)$:ns",
    r"broadcast_ipi=^Broadcast IPI\s+\d+\s+(\d+)$:ns",
    r"broadcast_lock=^Broadcast lock\s+\d+\s+(\d+)$:ns",
]


def test_the_five_ipi_benchmark_metrics_are_captured():
    patterns = [parse_metric_pattern(spec) for spec in IPI_METRICS]
    values, notes = extract_regex_metrics(IPI_OUTPUT, patterns)
    assert notes == []
    assert values == {
        "dry_run": [495181.0],
        "self_ipi": [21549999.0],
        "normal_ipi": [575433727.0],
        "broadcast_ipi": [1700692010.0],
        "broadcast_lock": [1663001374.0],
    }
    assert {p.unit for p in patterns} == {"ns"}


def test_unit_suffix_is_optional_and_colons_inside_the_regex_survive():
    plain = parse_metric_pattern(r"cycles=cycles per call: (\d+)")
    assert plain.unit is None and plain.regex.pattern == r"cycles per call: (\d+)"
    with_unit = parse_metric_pattern(r"cycles=cycles per call: (\d+):cycles")
    assert with_unit.unit == "cycles" and with_unit.regex.pattern == r"cycles per call: (\d+)"
    values, _ = extract_regex_metrics("cycles per call: 440\ncycles per call: 436\n", [with_unit])
    assert values == {"cycles": [440.0, 436.0]}  # every match is one value


@pytest.mark.parametrize(
    "spec, message",
    [
        ("cycles", "expected NAME=REGEX"),
        ("cycles=(\\d+", "bad regular expression"),
        ("cycles=\\d+", "no capture group"),
        ("wall=(\\d+)", "built-in metric"),
        ("1x=(\\d+)", "bad metric name"),
    ],
)
def test_bad_metric_specs_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_metric_pattern(spec)


def test_a_pattern_that_matches_nothing_or_garbage_gives_notes():
    pattern = parse_metric_pattern(r"x=value: (\S+)")
    values, notes = extract_regex_metrics("value: abc\n", [pattern])
    # it matched, only not a number: one note, not also "matched nothing"
    assert values == {} and len(notes) == 1 and "not a finite number" in notes[0]
    values, notes = extract_regex_metrics("nothing here\n", [pattern])
    assert values == {} and len(notes) == 1 and "matched nothing" in notes[0]


def test_json_lines_give_numeric_fields_only():
    text = (
        'starting\n{"cycles": 440, "name": "xen_version", "ok": true, "nested": {"a": 1}}\n'
        '{"cycles": 436.5}\n[1, 2]\n{"bad json": \n{"wall": 3, "bad key!": 4, "inf": 1e999}\n'
    )
    values, notes = extract_json_metrics(text, reserved={"wall"})
    assert values == {"cycles": [440.0, 436.5]}
    assert notes == ["JSON field 'wall' ignored: it is a built-in metric name"]


def test_perf_csv_parsing_separates_counted_and_unsupported_events():
    text = (
        "# started on Sun Nov 29\n\n"
        "0.69,msec,task-clock,688195,100.00,0.665,CPUs utilized\n"
        "49,,page-faults,688195,100.00,71.201,K/sec\n"
        "<not supported>,,cycles,0,100.00,,\n"
        "<not counted>,,instructions,0,0.00,,\n"
    )
    values, units, missing = parse_perf_csv(text)
    assert values == {"task-clock": 0.69, "page-faults": 49.0}
    assert units == {"task-clock": "msec", "page-faults": "count"}
    assert missing == ["cycles", "instructions"]


# --- Streaming scan: where blocks end must not change what is found (issue 15 §3) ---

import io  # noqa: E402
import re  # noqa: E402

from abstat.box.runner.metrics import BLOCK_BYTES, MAX_JSON_LINE_CHARS, MetricScanner, scan_output  # noqa: E402

# Matches that span line breaks (\s), are anchored (^ $ with MULTILINE), use a lookbehind and \b,
# and one JSON line; "µ" is two bytes in UTF-8, so some blocks end inside a character.
STREAM_TEXT = (
    "warm-up\ntotal:\n  12\nµs per op: 3.5\nx=7\n"
    '{"cycles": 440}\nnoise total:\n\n 99 end\n'
    'ab x=8 yy\nµs per op:\n4.25\n{"cycles": 436}\nx=9'
)
STREAM_PATTERNS = [r"total=total:\s+(\d+)", r"x=^x=(\d+)$", r"us=(?<=µs) per op:\s*([\d.]+)", r"word=\bx=(\d+)\b"]


def _reference(text: str) -> dict[str, list[float]]:
    """The independent reference: Python's re over the whole text at once."""
    found: dict[str, list[float]] = {}
    for spec in STREAM_PATTERNS:
        name, regex = spec.split("=", 1)
        for match in re.finditer(regex, text, re.MULTILINE):
            found.setdefault(name, []).append(float(match.group(1)))
    return found


@pytest.mark.parametrize("overlap", [16, 64])
def test_matches_at_and_across_every_block_boundary_are_found(overlap):
    data = STREAM_TEXT.encode()
    expected = _reference(STREAM_TEXT)
    assert expected["total"] == [12.0, 99.0] and expected["x"] == [7.0, 9.0]  # the text spans lines
    for block_bytes in range(1, len(data) + 2):
        scanner = MetricScanner([parse_metric_pattern(s) for s in STREAM_PATTERNS], json_lines=True, overlap=overlap)
        kept = scan_output(io.BytesIO(data), scanner, block_bytes=block_bytes)
        assert kept == STREAM_TEXT, block_bytes
        assert scanner.regex_values == expected, block_bytes
        assert scanner.json_values == {"cycles": [440.0, 436.0]}, block_bytes
        assert scanner.regex_notes() == []


@pytest.mark.parametrize("shift", range(-8, 9))
def test_a_match_across_a_line_break_at_the_real_block_size_is_found(shift):
    # "total:\n 5": the line break falls on, just before and just after the 1 MiB boundary.
    head = b"y" * (BLOCK_BYTES - len(b"total:") + shift) + b"\n"
    data = b"total:\n".join([head, b" 5\n"]) + b'{"late": 1}\n'
    scanner = MetricScanner([parse_metric_pattern(r"total=total:\s+(\d+)")], json_lines=True)
    scan_output(io.BytesIO(data), scanner)
    assert scanner.regex_values == {"total": [5.0]} and scanner.json_values == {"late": [1.0]}


def test_an_overlong_line_is_not_read_as_json_and_the_next_one_is():
    data = b'{"big": "' + b"z" * (MAX_JSON_LINE_CHARS + 10) + b'", "x": 1}\n{"x": 2}\n'
    scanner = MetricScanner(json_lines=True)
    scan_output(io.BytesIO(data), scanner, block_bytes=1 << 16)
    assert scanner.json_values == {"x": [2.0]}
    assert len(scanner._text) == 0 and scanner._line == []  # nothing of it is held
