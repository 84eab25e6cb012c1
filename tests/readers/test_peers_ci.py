"""Peers' files read as their own tools read them (issue 25), checked on the peers' own test
files (tests/data/peers, sources in its README) against what the peers print for them."""

from __future__ import annotations

import json
import math
import os
import statistics

import pytest

from abstat.errors import AbstatError, InputError
from abstat.readers import peers
from abstat.readers.source import read_text
from abstat.report import api
from abstat.report.inputs import load_files
from support import paths

DATA = os.path.join(str(paths.DATA), "peers")
REPORT_PEERS = os.path.join(str(paths.DATA), "report", "peers")
HISTORY = os.path.join(str(paths.DATA), "history")
CRIT = os.path.join(DATA, "criterion", "Fibonacci", "Iterative")


def _p(*parts: str) -> str:
    return os.path.join(DATA, *parts)


def _by(sets, **labels):
    found = [s for s in sets if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (labels, [s.labels for s in sets])
    return found[0]


# Every format, one file each, and what it must be detected as.
SAMPLES = {
    "gbench": _p("gbench", "test1_run1.json"),
    "pytest-benchmark": _p("pytest-benchmark", "0001-stats-only.json"),
    "bmf": _p("bmf", "report_latency.json"),
    "criterion": os.path.join(CRIT, "base", "sample.json"),
    "criterion-csv": os.path.join(CRIT, "base", "raw.csv"),
    "asv": "asv",  # written by the fixture below from asv's own test/example_results
    "pyperf": os.path.join(REPORT_PEERS, "pyperf-before.json"),
    "hyperfine": os.path.join(REPORT_PEERS, "hyperfine-params.json"),
    "go": os.path.join(REPORT_PEERS, "go-old.txt"),
    "csv": os.path.join(REPORT_PEERS, "results.csv"),
}


def _asv_files(directory) -> list[str]:
    """Two of asv's own results files (machine cheetah), from tests/data/history."""
    packed = json.load(open(os.path.join(HISTORY, "asv-example-results.json")))["files"]
    paths = []
    for name in ("cheetah/05d283b9-py2.7-Cython-numpy1.8.json", "cheetah/13dd6571-py2.7-Cython-numpy1.8.json"):
        path = os.path.join(str(directory), os.path.basename(name))
        with open(path, "w") as handle:
            handle.write(packed[name])
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return dict(SAMPLES, asv=_asv_files(tmp_path_factory.mktemp("asv"))[0])


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_detection_never_mistakes_one_format_for_another(fmt, samples):
    path = samples[fmt]
    assert peers.detect_format(path, read_text(path)) == fmt
    extra = [
        _p("gbench", "user_guide.json"),
        _p("gbench", "test3_run0.json"),
        _p("bmf", "report_bmf_mixed.json"),
        _p("pytest-benchmark", "bencher-two.json"),
        os.path.join(CRIT, "base", "estimates.json"),
        _p("pyperf-tags", "mult_list_py36_tags.json.gz"),
    ]
    expected = ["gbench", "gbench", "bmf", "pytest-benchmark", "criterion", "pyperf"]
    assert [peers.detect_format(p, read_text(p)) for p in extra] == expected


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_every_reader_refuses_every_other_format(fmt, samples):
    """Each reader given each other format's file: a one-line InputError, never a wrong
    reading or an internal error (csv reads any CSV, so only non-CSV files are fed to it)."""
    for other, path in samples.items():
        if other == fmt or (fmt == "csv" and other == "criterion-csv"):
            continue
        text = read_text(path)
        with pytest.raises(AbstatError) as err:
            peers.read_peer(path, fmt, text=text)
        assert "\n" not in str(err.value), (fmt, other)


# --------------------------------------------------------------------------
# Google Benchmark

# google/benchmark tools/gbench/report.py, TestReportDifference.test_json_diff_report_pretty_printing:
# compare.py's columns Time Old, Time New, CPU Old, CPU New (as printed, in each file's time_unit).
COMPARE_PY_TEST1 = [
    ("BM_SameTimes", 10, 10, 10, 10),
    ("BM_2xFaster", 50, 25, 50, 25),
    ("BM_2xSlower", 50, 100, 50, 100),
    ("BM_1PercentFaster", 100, 99, 100, 99),
    ("BM_1PercentSlower", 100, 101, 100, 101),
    ("BM_10PercentFaster", 100, 90, 100, 90),
    ("BM_10PercentSlower", 100, 110, 100, 110),
    ("BM_100xSlower", 100, 10000, 100, 10000),
    ("BM_100xFaster", 10000, 100, 10000, 100),
    ("BM_10PercentCPUToTime", 100, 110, 100, 90),
    ("BM_ThirdFaster", 100, 67, 100, 67),
]


def test_gbench_values_and_units_as_compare_py_prints_them():
    old = load_files([_p("gbench", "test1_run1.json")])
    new = load_files([_p("gbench", "test1_run2.json")])
    for name, real_old, real_new, cpu_old, cpu_new in COMPARE_PY_TEST1:
        for sets, real, cpu in ((old, real_old, cpu_old), (new, real_new, cpu_new)):
            r = _by(sets, benchmark=name, metric="real_time")
            c = _by(sets, benchmark=name, metric="cpu_time")
            assert r.unit == c.unit == "s"
            assert round(r.values[0] * 1e9) == real and round(c.values[0] * 1e9) == cpu
    # BM_NotBadTimeUnit is written in seconds: 0.4 s -> 0.04 s real time, compare.py's -0.9000
    a = _by(old, benchmark="BM_NotBadTimeUnit", metric="real_time").values[0]
    b = _by(new, benchmark="BM_NotBadTimeUnit", metric="real_time").values[0]
    assert math.isclose(b / a - 1, -0.9)
    # the complexity aggregates (BigO, RMS) summarise no repetitions: left out, with a note
    assert any("MyComplexityTest" in n for s in old for n in s.notes)
    assert not [s for s in old if s.labels["benchmark"].startswith("MyComplexityTest")]


def test_gbench_repetitions_are_the_samples_compare_py_u_tests():
    """test3: compare.py's U test over the repetitions prints BM_Two time p 1.0000, cpu 0.6667 and
    short 0.7671, 0.2000 (report.py, TestReportDifferenceWithUTest): the same samples give the same
    p-values, and abstat (Holm over the table) finds nothing significant either."""
    from scipy.stats import mannwhitneyu

    old = load_files([_p("gbench", "test3_run0.json")])
    new = load_files([_p("gbench", "test3_run1.json")])
    expected = {
        ("BM_Two", "real_time"): 1.0,
        ("BM_Two", "cpu_time"): 0.6667,
        ("short", "real_time"): 0.7671,
        ("short", "cpu_time"): 0.2000,
    }
    for (name, metric), p in expected.items():
        a = _by(old, benchmark=name, metric=metric).values
        b = _by(new, benchmark=name, metric=metric).values
        assert round(mannwhitneyu(a, b, alternative="two-sided").pvalue, 4) == p
    report = api.build(old + new)
    assert report.comparisons and not any(c.significant for c in report.comparisons)


def test_gbench_counters_and_context():
    sets = load_files([_p("gbench", "user_guide.json")])
    items = _by(sets, benchmark="BM_SetInsert/1024/8", metric="items_per_second")
    assert items.values == [246693.0] and items.unit == "items/s"
    assert _by(sets, benchmark="BM_SetInsert/1024/1", metric="bytes_per_second").unit == "B/s"
    real = _by(sets, benchmark="BM_SetInsert/1024/10", metric="real_time")
    assert math.isclose(real.values[0], 32724e-9) and real.machine["host_name"] == "my-host"


def test_gbench_aggregates_only_read_as_summaries(tmp_path):
    doc = {
        "context": {"library_build_type": "release"},
        "benchmarks": [
            {
                "name": "BM_x_mean",
                "run_name": "BM_x",
                "run_type": "aggregate",
                "aggregate_name": "mean",
                "repetitions": 9,
                "iterations": 9,
                "real_time": 12.0,
                "cpu_time": 11.0,
                "time_unit": "us",
            },
            {
                "name": "BM_x_stddev",
                "run_name": "BM_x",
                "run_type": "aggregate",
                "aggregate_name": "stddev",
                "repetitions": 9,
                "iterations": 9,
                "real_time": 0.5,
                "cpu_time": 0.25,
                "time_unit": "us",
            },
        ],
    }
    path = tmp_path / "agg.json"
    path.write_text(json.dumps(doc))
    real = _by(load_files([str(path)]), metric="real_time")
    assert real.summary.n == 9 and math.isclose(real.summary.mean, 12e-6) and math.isclose(real.summary.stddev, 5e-7)
    with pytest.raises(InputError, match="no readable result"):
        load_files([_p("gbench", "test4_run0.json")])  # a percentage aggregate alone: nothing to compare


# --------------------------------------------------------------------------
# criterion


def test_criterion_time_per_iteration_matches_criterions_estimates():
    (sample,) = load_files([os.path.join(CRIT, "base", "sample.json")])
    estimates = json.load(open(os.path.join(CRIT, "base", "estimates.json")))
    values = sample.values
    assert sample.unit == "ns" and len(values) == 100 and not sample.notes
    assert math.isclose(statistics.mean(values), estimates["Mean"]["point_estimate"], rel_tol=1e-12)
    assert math.isclose(statistics.median(values), estimates["Median"]["point_estimate"], rel_tol=1e-12)
    assert math.isclose(statistics.stdev(values), estimates["StdDev"]["point_estimate"], rel_tol=1e-12)
    assert sample.labels["benchmark"] == "Fibonacci/Iterative" and sample.labels["variant"] == "base"
    (raw,) = load_files([os.path.join(CRIT, "base", "raw.csv")])  # the same samples, one a row
    assert raw.labels["variant"] == "base"
    assert [round(v, 6) for v in raw.values] == [round(v, 6) for v in values]
    (via_estimates,) = load_files([os.path.join(CRIT, "new", "estimates.json")])
    assert via_estimates.values == values and via_estimates.labels["variant"] == "new"


def test_criterion_directory_compares_base_with_new(tmp_path):
    report = api.build(load_files([os.path.join(DATA, "criterion")]))
    assert report.baseline == "base" and report.columns == ["base", "new"]
    (cell,) = report.comparisons
    assert cell.comparison.delta_pct == 0.0  # the book's base and new are the same run
    bad = tmp_path / "sample.json"
    bad.write_text('{"iters": [1, 0], "times": [5, 6]}')
    with pytest.raises(InputError, match="sample 1"):
        load_files([str(bad)])


# --------------------------------------------------------------------------
# pytest-benchmark and bencher


def test_pytest_benchmark_stats_and_data():
    (saved,) = load_files([_p("pytest-benchmark", "0001-stats-only.json")])
    assert saved.summary.n == 9987 and saved.unit == "s"
    assert math.isclose(saved.summary.mean, 2.622408132654948e-07)
    assert saved.labels["rev"] == "5b78858eb718649a31fb93d8dc96ca2cee41a4cd"
    # bencher's adapter test (adapter_python_pytest_two): test_fib_10 24088.681333229408 ns, spread
    # stddev 6175.09...; the file's 5 data values are not its 38523 rounds: the stats are read
    sets = load_files([_p("pytest-benchmark", "bencher-two.json")])
    fib10 = _by(sets, benchmark="bench.py::test_fib_10")
    assert math.isclose(fib10.summary.mean * 1e9, 24088.681333229408)
    assert math.isclose((fib10.summary.mean - fib10.summary.stddev) * 1e9, 17913.59114336808)
    assert fib10.summary.n == 38523 and "38523" in fib10.notes[0]


def test_bmf_values_and_why_they_cannot_be_judged():
    sets = load_files([_p("bmf", "report_bmf_mixed.json")])
    assert _by(sets, benchmark="benchmark-b", metric="latency").values == [3443.0]
    assert "one value" in sets[0].notes[0]
    report = api.build(load_files([_p("bmf", "report_latency.json")]) + sets, by="variant")
    assert not any(c.significant for c in report.comparisons)


def test_asv_results_compared_as_asv_compare_does(tmp_path):
    """asv results format 1 (asv's own test/example_results): one value per benchmark and commit,
    the numbers asv compare divides; columns by commit."""
    old, new = _asv_files(tmp_path)
    docs = [json.load(open(p)) for p in (old, new)]
    report = api.build(load_files([f"{old}", f"{new}"]), by="rev")
    assert report.columns == [docs[0]["commit_hash"], docs[1]["commit_hash"]]
    names = [
        n
        for n, v in docs[0]["results"].items()
        if isinstance(v, (int, float)) and isinstance(docs[1]["results"].get(n), (int, float))
    ]
    assert names
    new_hash = docs[1]["commit_hash"]
    cells = {row.metric: row.cells for row in report.rows}
    for name in names:  # one result per side: shown, and "not compared" (one value has no spread)
        assert cells[name][new_hash].sample_set.values == [docs[1]["results"][name]]
        assert cells[name][new_hash].comparison is None


# --------------------------------------------------------------------------
# pyperf tags, hyperfine grids


def test_pyperf_tags_give_pyperf_compare_to_tables():
    """pyperf 2.11.0 `compare_to --table mult_list_py36_tags.json mult_list_py37_tags.json`:
    tag bar: 1.42x slower, 1.31x slower, geometric mean 1.37x slower; tag foo: 1.02x faster,
    1.42x slower, 1.18x slower; all benchmarks: geometric mean 1.22x slower."""
    files = [_p("pyperf-tags", f"mult_list_py3{v}_tags.json.gz") for v in (6, 7)]
    sets = load_files(files)
    assert _by(sets, benchmark="[1,2]*1000", variant="mult_list_py36_tags").labels["tags"] == "bar+foo"
    for where, geomean in (({"tags": {"bar", "bar+foo"}}, 1.37), ({"tags": {"foo", "bar+foo"}}, 1.18), (None, 1.22)):
        report = api.build(sets, where=where, center="mean")
        (summary,) = report.summaries
        assert round(summary.ratio, 2) == geomean
    ratios = {c.row[0]: 1 + c.comparison.delta_pct / 100 for c in api.build(sets, center="mean").comparisons}
    assert {k: round(v, 2) for k, v in ratios.items()} == {"[1]*1000": 0.98, "[1,2]*1000": 1.42, "[1,2,3]*1000": 1.31}
    assert round(1 / ratios["[1]*1000"], 2) == 1.02


def test_hyperfine_grid_compared_along_one_parameter():
    sets = load_files([_p("hyperfine-grid.json")])
    report = api.build(sets, by="a")
    assert report.row_keys == ["b"] and report.columns == ["1", "2"]
    assert len(report.comparisons) == 2
    report_b = api.build(sets, by="b")
    assert report_b.row_keys == ["a"] and len(report_b.comparisons) == 2
