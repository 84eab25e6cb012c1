"""Importers of other tools' files (abstat report), checked against the tools themselves."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import statistics
import subprocess

import pytest

from abstat.errors import InputError, UsageError
from abstat.readers import peers
from abstat.report.export import to_hyperfine
from support import paths

DATA = os.path.join(str(paths.DATA), "report", "peers")
HYPERFINE = shutil.which("hyperfine") or "/usr/bin/hyperfine"


def data(name: str) -> str:
    return os.path.join(DATA, name)


def read(path: str):
    text = peers.read_text(path)
    fmt = peers.detect_format(path, text)
    assert fmt is not None, path
    return fmt, peers.read_peer(path, fmt, text=text)


def roundtrip(sets, tmp_path):
    """Export as hyperfine JSON, read it back: same values, same command and
    parameters (abstat's other labels are not hyperfine parameters)."""
    out = tmp_path / "export.json"
    out.write_text(json.dumps(to_hyperfine(sets)))
    fmt, again = read(str(out))
    assert fmt == "hyperfine"
    assert len(again) == len(sets)
    for before, after in zip(sets, again):
        assert after.values == pytest.approx(before.values, rel=1e-15)
        if "command" in before.labels:
            assert after.labels["command"] == before.labels["command"]
        assert after.extra.get("parameters") == before.extra.get("parameters")
    return again


# -- hyperfine ---------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists(HYPERFINE), reason="hyperfine is not installed")
def test_hyperfine_export_made_now_reads_back_with_hyperfine_statistics(tmp_path):
    out = tmp_path / "now.json"
    subprocess.run(
        [
            HYPERFINE,
            "--runs",
            "7",
            "--warmup",
            "1",
            "-N",
            "--style",
            "none",
            "-n",
            "short",
            "-n",
            "longer",
            "sleep 0.001",
            "sleep 0.003",
            "--export-json",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    fmt, sets = read(str(out))
    assert fmt == "hyperfine"
    doc = json.loads(out.read_text())
    assert [s.labels["command"] for s in sets] == ["short", "longer"]
    for sample_set, result in zip(sets, doc["results"]):
        assert sample_set.values == result["times"]
        assert sample_set.unit == "s"
        # hyperfine's own statistics of the same times (an independent oracle)
        assert statistics.fmean(sample_set.values) == pytest.approx(result["mean"], rel=1e-12)
        assert statistics.median(sample_set.values) == pytest.approx(result["median"], rel=1e-12)
        assert statistics.stdev(sample_set.values) == pytest.approx(result["stddev"], rel=1e-9)
    again = roundtrip(sets, tmp_path)
    exported = json.loads((tmp_path / "export.json").read_text())["results"]
    for mine, theirs in zip(exported, doc["results"]):
        for key in ("mean", "median", "min", "max", "stddev"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-9)
        assert mine["exit_codes"] == theirs["exit_codes"]
    assert again[1].labels["command"] == "longer"


def test_hyperfine_parameters_become_labels():
    _, sets = read(data("hyperfine-params.json"))
    assert [s.labels["ms"] for s in sets] == ["5", "10"]
    assert all(len(s.values) == 5 and s.labels["metric"] == "wall" for s in sets)


def test_hyperfine_nonzero_exit_codes_are_noted():
    _, sets = read(data("hyperfine-exitcodes.json"))
    ok, failed = sets
    assert ok.notes == []
    assert len(failed.notes) == 1 and "6 of 6 runs exited non-zero" in failed.notes[0]
    assert failed.extra["exit_codes"] == [1] * 6


def test_hyperfine_runs_killed_by_a_signal_are_failed_runs(tmp_path):
    """attack21 B8: hyperfine writes ``null`` for a run killed by a signal (``-i``); such runs were counted as
    good ones without a note, and exit codes of another length than the times were dropped silently."""
    import json

    doc = json.loads(open(data("hyperfine-exitcodes.json")).read())
    doc["results"][1]["exit_codes"] = [None, 0, None, 0, 0, 0]
    (tmp_path / "killed.json").write_text(json.dumps(doc))
    _, sets = read(str(tmp_path / "killed.json"))
    assert sets[1].notes and "2 of 6 runs failed (2 killed by a signal)" in sets[1].notes[0]
    doc["results"][1]["exit_codes"] = [0, 0]
    (tmp_path / "short.json").write_text(json.dumps(doc))
    _, sets = read(str(tmp_path / "short.json"))
    assert sets[1].notes and "2 exit codes for 6 times" in sets[1].notes[0]


def test_hyperfine_fixture_roundtrip(tmp_path):
    _, sets = read(data("hyperfine-exitcodes.json"))
    again = roundtrip(sets, tmp_path)
    assert again[1].extra["exit_codes"] == [1] * 6


def test_hyperfine_without_times_is_an_error(tmp_path):
    path = tmp_path / "old.json"
    path.write_text('{"results": [{"command": "x", "mean": 1.0}]}')
    with pytest.raises(InputError, match="no 'times'") as err:
        peers.read_hyperfine(str(path))
    assert str(path) in str(err.value)


# -- pyperf ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pyperf-before.json", "pyperf-after.json", "pyperf-suite.json"])
def test_pyperf_values_match_pyperf_api(name):
    expected = json.loads(open(data("pyperf-expected.json")).read())["files"][name]
    fmt, sets = read(data(name))
    assert fmt == "pyperf"
    assert [s.labels["benchmark"] for s in sets] == list(expected)
    for sample_set in sets:
        mine = expected[sample_set.labels["benchmark"]]
        assert sample_set.runs == mine["values_per_run"]  # warmups, calibration skipped
        assert sample_set.n == mine["nvalue"]
        assert statistics.fmean(sample_set.values) == pytest.approx(mine["mean"], rel=1e-12)
        assert sample_set.unit == "s" and mine["unit"] == "second"
        assert sample_set.machine["hostname"] == sample_set.labels["host"]


def test_pyperf_calibration_run_is_skipped():
    doc = json.loads(open(data("pyperf-after.json")).read())
    runs = doc["benchmarks"][0]["runs"]
    assert "values" not in runs[0]  # the fixture really has a calibration run
    _, sets = read(data("pyperf-after.json"))
    assert len(sets[0].runs) == len(runs) - 1


def test_pyperf_gzip_and_roundtrip(tmp_path):
    packed = tmp_path / "suite.json.gz"
    packed.write_bytes(gzip.compress(open(data("pyperf-suite.json"), "rb").read()))
    fmt, sets = read(str(packed))
    assert fmt == "pyperf" and len(sets) == 2
    roundtrip(sets, tmp_path)


def test_pyperf_without_values_is_an_error(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(
        json.dumps({"version": "1.0", "metadata": {"name": "x"}, "benchmarks": [{"runs": [{"warmups": [[1, 0.5]]}]}]})
    )
    with pytest.raises(InputError, match="no measured values"):
        peers.read_pyperf(str(path))


# -- Go benchmark format ---------------------------------------------------------


def test_go_units_configuration_and_sub_benchmarks():
    fmt, sets = read(data("go-old.txt"))
    assert fmt == "go"
    by_key = {(s.labels["format"], s.labels["metric"]): s for s in sets}
    assert sorted(by_key) == sorted((f, u) for f in ("json", "gob") for u in ("ns/op", "MB/s", "B/op", "allocs/op"))
    json_ns = by_key[("json", "ns/op")]
    assert json_ns.labels["benchmark"] == "Encode"
    assert json_ns.labels["gomaxprocs"] == "8"
    assert json_ns.labels["goos"] == "linux" and json_ns.labels["note"] == "before"
    assert json_ns.labels["cpu"] == "AMD EPYC 7713 64-Core Processor"
    # the values, read independently of the reader: 3rd field of each json line
    lines = [l.split() for l in open(data("go-old.txt")) if l.startswith("BenchmarkEncode/format=json")]
    assert json_ns.values == [float(f[2]) for f in lines]
    assert by_key[("json", "MB/s")].values == [float(f[4]) for f in lines]
    assert json_ns.unit == "ns/op"


GO_TEXT = """\
Unit text-bytes assume=exact

note: before
BenchmarkSize 1 100 text-bytes
BenchmarkSize/big 1 300 text-bytes

note: after
BenchmarkSize 1 105 text-bytes
BenchmarkSize/big 1 310 text-bytes
--- BENCH: BenchmarkSize
PASS
ok  	example.org/x	0.1s
"""


def test_go_configuration_changes_mid_file(tmp_path):
    path = tmp_path / "units.txt"
    path.write_text(GO_TEXT)
    sets = peers.read_gobench(str(path))
    found = {(s.labels["note"], s.labels["benchmark"]): s.values for s in sets}
    assert found == {
        ("before", "Size"): [100.0],
        ("before", "Size/big"): [300.0],
        ("after", "Size"): [105.0],
        ("after", "Size/big"): [310.0],
    }


def test_go_value_without_unit_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("goos: linux\nBenchmarkX-4 100 12.5 ns/op 7\n")
    with pytest.raises(InputError) as err:
        peers.read_gobench(str(path))
    assert str(err.value).startswith(f"{path}:2: ")


def test_go_roundtrip_of_time_unit(tmp_path):
    _, sets = read(data("go-new.txt"))
    times = [s for s in sets if s.unit == "ns/op"]
    out = tmp_path / "go.json"
    out.write_text(json.dumps(to_hyperfine(times)))
    again = peers.read_hyperfine(str(out))
    for before, after in zip(times, again):
        assert after.values == pytest.approx([v * 1e-9 for v in before.values], rel=1e-15)
    with pytest.raises(UsageError, match="not times"):
        to_hyperfine([s for s in sets if s.unit == "MB/s"])


# -- CSV ---------------------------------------------------------------------


def test_csv_numeric_columns_are_metrics_unless_chosen():
    fmt, sets = read(data("results.csv"))
    assert fmt == "csv"
    assert {s.labels["metric"] for s in sets} == {"run", "cycles"}
    chosen = peers.read_csv(data("results.csv"), value_columns=["cycles"])
    assert len(chosen) == 4
    milan_before = [s for s in chosen if s.labels == {"host": "milan", "variant": "before", "metric": "cycles"}]
    assert milan_before[0].values == [440, 438, 436, 441, 439]


def test_csv_label_columns_and_errors(tmp_path):
    sets = peers.read_csv(data("results.csv"), value_columns=["cycles"], label_columns=["host", "variant", "run"])
    assert len(sets) == 12
    with pytest.raises(UsageError, match="no CSV column 'nope'"):
        peers.read_csv(data("results.csv"), value_columns=["nope"])
    bad = tmp_path / "bad.csv"
    bad.write_text("variant,ns\nbefore,12\nafter,twelve\n")
    with pytest.raises(InputError) as err:
        peers.read_csv(str(bad), value_columns=["ns"])
    assert str(err.value).startswith(f"{bad}:3: ")


# -- detection and bad input -----------------------------------------------------


def test_plain_sample_files_are_not_peer_formats(tmp_path):
    path = tmp_path / "before"
    path.write_text("440\n438\n# comment\n441\n")
    assert peers.detect_format(str(path), path.read_text()) is None
    commas = tmp_path / "commas"
    commas.write_text("1,2\n3,4\n")
    assert peers.detect_format(str(commas), commas.read_text()) is None


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\xff\xfe1\x002\x00", "UTF-16"),
        (b"12\n\x00\x01\x02", "binary"),
        (b"12\n\xe9t\xe9\n", "not UTF-8"),
    ],
)
def test_bad_bytes_are_named(tmp_path, content, message):
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as err:
        peers.read_text(str(path))
    assert str(path) in str(err.value)


def test_bad_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"results": [\n  {"command": "x",\n')
    with pytest.raises(InputError) as err:
        peers.read_hyperfine(str(path))
    assert str(err.value).startswith(f"{path}:3: bad JSON")


def test_csv_roundtrip_of_a_time_column(tmp_path):
    path = tmp_path / "times.csv"
    path.write_text("variant,wall,rss\nbefore,0.25,100\nbefore,0.5,101\nafter,0.125,99\n")
    sets = peers.read_csv(str(path), value_columns=["wall"])
    assert [(s.labels, s.values) for s in sets] == [
        ({"variant": "before", "metric": "wall"}, [0.25, 0.5]),
        ({"variant": "after", "metric": "wall"}, [0.125]),
    ]
    roundtrip(sets, tmp_path)
    with pytest.raises(UsageError, match="not times"):
        to_hyperfine(peers.read_csv(str(path), value_columns=["rss"]))


def test_export_refuses_values_of_unknown_unit(tmp_path):
    from abstat.cli.flags import namer
    from abstat.report.sampleset import SampleSet

    with pytest.raises(UsageError, match="say so with label metric=wall") as raised:
        to_hyperfine([SampleSet(labels={"variant": "x"}, runs=[[1.0]], source="cycles.txt")])
    assert "say so with --label metric=wall" in raised.value.named(namer("report"))  # the library names the field
