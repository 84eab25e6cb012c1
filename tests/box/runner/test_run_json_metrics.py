"""``run``'s metrics from JSON: perf stat -j lines (each event its own metric, counter-value a string)
and ``--metric [NAME=]json:PATH`` (one value per run from the JSON document a tool prints).

References: perf's -j output, fio's and iperf3's JSON made on this machine (tests/data/kernel),
read again here with json.loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from abstat.box.runner.jsonpath import parse_json_metric
from abstat.box.runner.metrics import MetricScanner, extract_json_metrics
from abstat.box.runner.sources import RegexMetric, decode_source
from support import paths

KERNEL = os.path.join(str(paths.DATA), "kernel")


def _text(name: str) -> str:
    with open(os.path.join(KERNEL, name)) as handle:
        return handle.read()


def test_perf_stat_json_lines_are_one_metric_per_event_not_pooled():
    text = _text("perf_stat_runs.jsonl")
    reference: dict[str, list[float]] = {}
    for line in text.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            reference.setdefault(obj["event"], []).append(float(obj["counter-value"]))
    values, notes = extract_json_metrics(text)
    assert values == reference  # no event-runtime, pcnt-running, metric-value pooled across events
    assert notes == []


def test_perf_stat_json_units_and_multiplexing_note():
    scanner = MetricScanner(json_lines=True)
    scanner.feed(
        '{"counter-value" : "1000.5", "unit" : "msec", "event" : "task-clock", "pcnt-running" : 100.00}\n'
        '{"counter-value" : "77", "unit" : "", "event" : "cycles", "pcnt-running" : 50.00}\n'
        '{"counter-value" : "<not supported>", "unit" : "", "event" : "instructions"}\n'
    )
    scanner.finish()
    assert scanner.json_values == {"task-clock": [1000.5], "cycles": [77.0]}
    assert scanner.json_units == {"task-clock": "msec"}
    notes = scanner.json_notes()
    assert any("cycles counted 50% of the time" in n for n in notes)
    assert any("instructions not counted" in n for n in notes)


@pytest.mark.parametrize(
    "spec, name, path, unit",
    [
        ("json:jobs[0].read.iops", "jobs.0.read.iops", ("jobs", 0, "read", "iops"), None),
        ("iops=json:jobs[0].read.iops:IO/s", "iops", ("jobs", 0, "read", "iops"), "IO/s"),
        (
            "p99=json:jobs[0].read.clat_ns.percentile['99.000000']:ns",
            "p99",
            ("jobs", 0, "read", "clat_ns", "percentile", "99.000000"),
            "ns",
        ),
        ("bps=json:end.sum_received.bits_per_second", "bps", ("end", "sum_received", "bits_per_second"), None),
    ],
)
def test_json_metric_forms(spec, name, path, unit):
    parsed = parse_json_metric(spec)
    assert (parsed.name, parsed.path, parsed.unit) == (name, path, unit)
    source = RegexMetric.parse(spec)
    assert decode_source(source.to_json()).compiled() == parsed  # the spec travels to a test box intact
    assert RegexMetric.parse(source.text).compiled() == parsed


@pytest.mark.parametrize(
    "spec, message",
    [
        ("json:", "empty JSON path"),
        ("json:[0].x", "name the metric"),
        ("x=json:a[b", "bad JSON path"),
        ("x=json:a.b:no unit!", "bad unit"),
    ],
)
def test_bad_json_metrics_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        RegexMetric.parse(spec)


def _scan(text: str, *specs: str, block: int | None = None):
    scanner = MetricScanner([RegexMetric.parse(spec).compiled() for spec in specs])
    step = block or len(text) or 1
    for start in range(0, len(text), step):
        scanner.feed(text[start : start + step])
    scanner.finish()
    return scanner.regex_values, scanner.regex_notes(), scanner.json_notes()


@pytest.mark.parametrize("block", [None, 7, 1000])
def test_fio_and_iperf3_values_one_per_run(block):
    fio = _text("fio_randread.json")
    doc = json.loads(fio)
    values, notes, _ = _scan(
        "fio: a warning printed first\n" + fio,
        "json:jobs[0].read.iops",
        "p99=json:jobs[0].read.clat_ns.percentile['99.000000']",
        block=block,
    )
    assert values == {
        "jobs.0.read.iops": [doc["jobs"][0]["read"]["iops"]],
        "p99": [doc["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]],
    }
    assert notes == []
    iperf = json.loads(_text("iperf3_loopback.json"))
    values, notes, _ = _scan(_text("iperf3_loopback.json"), "bps=json:end.sum_received.bits_per_second")
    assert values == {"bps": [iperf["end"]["sum_received"]["bits_per_second"]]}


def test_a_missing_path_fails_the_run_and_strings_are_numbers():
    values, notes, _ = _scan('{"a": {"b": "12.5"}, "c": "text"}\n', "x=json:a.b", "y=json:a.z", "z=json:c")
    assert values == {"x": [12.5]}
    assert any("y: JSON path 'a.z': not in the output's 1 JSON document" in n for n in notes)
    assert any("z: JSON path 'c' holds 'text'" in n for n in notes)
    values, notes, _ = _scan("no json here\n", "x=json:a")
    assert values == {} and "no JSON document" in notes[0]
    values, notes, remarks = _scan('{"a": 1}\n{"a": 2}\n', "x=json:a")
    assert values == {"x": [1.0]} and notes == [] and "the first is taken" in remarks[0]


def test_run_cli_json_metric_records_one_value_per_run(tmp_path):
    bench = tmp_path / "bench.py"
    bench.write_text(
        "import json, os\nprint('starting')\n"
        "iops = 1000 + len(os.environ.get('X', ''))\n"
        "print(json.dumps({'jobs': [{'read': {'iops': iops}}]}, indent=2))\n"
    )
    store = tmp_path / "store"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "3",
            "--no-progress",
            "--store",
            str(store),
            "--format",
            "json",
            "--metric",
            "iops=json:jobs[0].read.iops:IO/s",
            "-v",
            f"a={sys.executable} {bench}",
            "-v",
            f"b=env X=abc {sys.executable} {bench}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "abstat", "report", "--store", str(store), "--metric", "iops", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "1003" in shown.stdout and "1000" in shown.stdout


def test_a_json_line_nested_too_deeply_is_the_runs_error_not_a_crash(tmp_path):
    """attack19 F15: a benchmark printing 200,000 nested ``[`` on a line gave "internal error:
    RecursionError" and lost the run; now that run fails with its reason, as a metric that does not parse."""
    deep = '{"x": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
    scanner = MetricScanner(json_lines=True)
    scanner.feed('{"ok": 1}\n' + deep)
    scanner.finish()
    assert scanner.json_values == {"ok": [1.0]}
    assert scanner.json_errors() == ["1 JSON output line(s) nested too deeply to read: the run's values are not known"]
    bench = tmp_path / "deep.py"
    bench.write_text(f"import sys\nsys.stdout.write({deep!r})\n")
    store = tmp_path / "s.db"
    argv = [sys.executable, "-m", "abstat", "run", "-n", "2", "--no-progress", "--store", str(store)]
    argv += ["--experiment", "e", "-v", f"a={sys.executable} {bench}", "-v", "b=true"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "internal error" not in out.stderr, out.stderr
    assert "run 1 of variant 'a' failed: 1 JSON output line(s) nested too deeply" in out.stderr.splitlines()[-1]
    listed = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--store", str(store)], capture_output=True, text=True
    )
    row = listed.stdout.split("\n")[1].split()
    assert row[:2] == ["e", "a,b"] and row[3] == "1", listed.stdout  # the failed run is recorded
