"""The kernel world's tools read as files: perf stat (text, -x, CSV, -j JSON), fio, iperf3, hackbench,
perf bench, schbench, stress-ng, kernbench, sysbench, will-it-scale.

References: outputs made on this machine by the tools themselves (tests/data/kernel, see its SOURCE.md)
read again here by brute force, and LKP's stats fixtures (tests/data/lkp: intel/lkp-tests
spec/fixtures/stats, each output with the values LKP's own parsers expect from it).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from abstat.errors import InputError
from abstat.readers import peers
from support import paths

HERE = str(paths.TESTS)
KERNEL = os.path.join(HERE, "data", "kernel")
LKP = os.path.join(HERE, "data", "lkp")


def read(path: str):
    text = peers.read_text(path)
    fmt = peers.detect_format(path, text)
    assert fmt is not None, path
    return fmt, peers.read_peer(path, fmt, text=text)


def _text(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def by_metric(sets, **labels):
    return {s.labels["metric"]: s for s in sets if all(s.labels.get(k) == v for k, v in labels.items())}


def lkp_expected(name: str) -> dict[str, float]:
    """LKP's expected values: ``key: number`` lines of its .yaml."""
    found = {}
    with open(os.path.join(LKP, name + ".yaml")) as handle:
        for line in handle:
            key, _, value = line.rpartition(": ")
            try:
                found[key.strip()] = float(value)
            except ValueError:
                continue
    return found


# -- perf stat: the defects first ---------------------------------------------------------------------


def _csv_reference(path: str) -> dict[str, tuple[list[float], str]]:
    """Brute force: value,unit,event,... rows, comments skipped."""
    found: dict[str, tuple[list[float], str]] = {}
    for line in _text(path).splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        found.setdefault(fields[2], ([], fields[1]))[0].append(float(fields[0]))
    return found


@pytest.mark.parametrize("name", ["perf_stat_runs.csv", "perf_stat_r5.csv"])
def test_perf_csv_first_row_is_data_and_every_value_and_unit_is_read(name):
    path = os.path.join(KERNEL, name)
    fmt, sets = read(path)
    assert fmt == "perf-stat-csv"  # not the general CSV reader, which took the first row as a header
    got = by_metric(sets)
    reference = _csv_reference(path)
    assert set(got) == set(reference) == {"task-clock", "context-switches", "page-faults"}
    for event, (values, unit) in reference.items():
        assert got[event].runs == [values]
        assert got[event].unit == (unit or None)
        assert got[event].extra["pcnt_running"] == [100.0] * len(values)
    assert got["task-clock"].unit == "msec"


def test_perf_csv_of_r_runs_says_each_value_is_a_mean_with_its_standard_error():
    sets = by_metric(read(os.path.join(KERNEL, "perf_stat_r5.csv"))[1])
    line = _text(os.path.join(KERNEL, "perf_stat_r5.csv")).splitlines()[0].split(",")
    assert any(f"± {line[3]} standard error" in note for note in sets["task-clock"].notes)


@pytest.mark.parametrize("name", ["perf_stat_runs.jsonl", "perf_stat_r5.jsonl"])
def test_perf_json_counter_value_strings_are_read_per_event(name):
    path = os.path.join(KERNEL, name)
    fmt, sets = read(path)
    assert fmt == "perf-stat-json"
    reference: dict[str, list[float]] = {}
    for line in _text(path).splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            reference.setdefault(obj["event"], []).append(float(obj["counter-value"]))
    got = by_metric(sets)
    assert {event: s.runs[0] for event, s in got.items()} == reference
    assert got["task-clock"].unit == "msec" and got["page-faults"].unit is None


def test_perf_text_r_block_becomes_summary_statistics_with_sd_from_the_standard_error():
    path = os.path.join(KERNEL, "perf_stat_r5.txt")
    fmt, sets = read(path)
    assert fmt == "perf-stat"
    got = by_metric(sets)
    text = _text(path)
    for line in text.splitlines():
        fields = line.split()
        if "task-clock" in fields:
            mean, pct = float(fields[0]), float(line.split("+-")[1].split("%")[0])
    summary = got["task-clock"].summary
    assert summary.n == 5 and summary.mean == mean
    assert summary.stddev == pytest.approx(mean * pct / 100 * math.sqrt(5), rel=1e-12)
    assert any("standard error of the mean" in n for n in got["task-clock"].notes)
    elapsed = got["seconds-time-elapsed"].summary
    value, se = (float(x) for x in text.split("seconds time elapsed")[0].split()[-3::2])
    assert (elapsed.mean, elapsed.stddev) == (value, pytest.approx(se * math.sqrt(5)))


def test_perf_multiplexed_counts_are_noted_and_not_supported_events_named(tmp_path):
    # perf's -x, row layout with an event counted half the time (this VM has no PMU to multiplex)
    path = tmp_path / "mux.csv"
    path.write_text(
        "1000,,cycles,500,50.00,,\n2000,,instructions,1000,100.00,2.00,insn per cycle\n"
        "<not supported>,,branch-misses,0,100.00,,\n"
    )
    sets = by_metric(read(str(path))[1])
    assert sets["cycles"].extra["pcnt_running"] == [50.0]
    assert any("counted 50% of the time" in note for note in sets["cycles"].notes)
    assert not any("counted" in note for note in sets["instructions"].notes if "multiplexed" in note)
    assert "branch-misses" not in sets
    assert any("not counted: branch-misses" in note for s in sets.values() for note in s.notes)
    _, unsupported = read(os.path.join(KERNEL, "perf_stat_notsupported.csv"))
    assert [s.labels["metric"] for s in unsupported] == ["task-clock"]


def test_perf_interval_and_per_cpu_prefixes(tmp_path):
    path = tmp_path / "interval.csv"
    path.write_text(
        "1.001000000,CPU0,10,,page-faults,1000,100.00,1.0,K/sec\n1.001000000,CPU1,12,,page-faults,1000,100.00,,\n"
        "2.002000000,CPU0,11,,page-faults,1000,100.00,,\n"
    )
    sets = by_metric(read(str(path))[1])
    assert sets["page-faults.CPU0"].runs == [[10.0, 11.0]] and sets["page-faults.CPU1"].runs == [[12.0]]
    assert any("time series" in note for note in sets["page-faults.CPU0"].notes)


def test_perf_csv_compare_cli_reads_events_not_a_header():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "compare",
            "--format",
            "json",
            "--metric",
            "page-faults",
            "a=" + os.path.join(KERNEL, "perf_stat_runs.csv"),
            "b=" + os.path.join(KERNEL, "perf_stat_runs.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "page-faults" in out.stdout and "0.62" not in out.stdout.split("metric")[0]


# -- other tools made here ----------------------------------------------------------------------------


def test_fio_json_made_here():
    path = os.path.join(KERNEL, "fio_randread.json")
    doc = json.loads(_text(path))
    sets = by_metric(read(path)[1], job="randread")
    read_part = doc["jobs"][0]["read"]
    assert sets["read.iops"].runs == [[read_part["iops"]]]
    assert sets["read.bw"].runs == [[read_part["bw"]]]
    assert sets["read.clat_p99"].runs == [[read_part["clat_ns"]["percentile"]["99.000000"]]]
    assert not any(m.startswith("write.") for m in sets)  # no I/O written: no write metrics


def test_iperf3_json_made_here():
    path = os.path.join(KERNEL, "iperf3_loopback.json")
    end = json.loads(_text(path))["end"]
    sets = by_metric(read(path)[1])
    assert sets["receiver.bits_per_second"].runs == [[end["sum_received"]["bits_per_second"]]]
    assert sets["sender.bits_per_second"].unit == "bit/s"


@pytest.mark.parametrize(
    "name, fmt, metric, regex_word",
    [
        ("hackbench_3runs.txt", "hackbench", "time", "Time:"),
        ("perf_bench_messaging_3runs.txt", "perf-bench", "total-time", "Total time:"),
    ],
)
def test_text_tools_give_one_value_per_run(name, fmt, metric, regex_word):
    path = os.path.join(KERNEL, name)
    got_fmt, sets = read(path)
    assert got_fmt == fmt
    expected = [float(line.split(regex_word)[1].split()[0]) for line in _text(path).splitlines() if regex_word in line]
    assert len(expected) == 3 and by_metric(sets)[metric].runs == [expected]


def test_stress_ng_text_and_yaml_of_the_same_run_agree():
    text_sets = by_metric(read(os.path.join(KERNEL, "stress-ng_cpu.txt"))[1], stressor="cpu")
    fmt, yaml_sets = read(os.path.join(KERNEL, "stress-ng_cpu.yaml"))
    assert fmt == "stress-ng-yaml"
    yaml_sets = by_metric(yaml_sets, stressor="cpu")
    assert text_sets["bogo-ops"].runs == yaml_sets["bogo-ops"].runs == [[2707.0]]
    assert yaml_sets["bogo-ops-per-second-real-time"].runs[0][0] == pytest.approx(
        text_sets["bogo-ops-per-sec-real-time"].runs[0][0], abs=0.005
    )


def test_sysbench_and_perf_bench_pipe():
    sets = by_metric(read(os.path.join(KERNEL, "sysbench_cpu.txt"))[1])
    assert sets["events-per-second"].runs == [[3070.84]] and sets["latency-p95"].unit == "ms"
    pipe = by_metric(read(os.path.join(KERNEL, "perf_bench_sched_pipe.txt"))[1], benchmark="sched/pipe")
    assert pipe["usecs-per-op"].runs == [[2.012750]] and pipe["ops-per-sec"].runs == [[496832.0]]


# -- LKP's stats fixtures: abstat reads what LKP's parsers read -------------------------------------


def test_lkp_hackbench_times_give_lkp_throughputs():
    expected = lkp_expected("hackbench_hackbench")
    times = by_metric(read(os.path.join(LKP, "hackbench_hackbench"))[1])["time"].runs[0]
    assert min(times) / max(times) == pytest.approx(expected["throughput_worst"] / expected["throughput_best"])
    work = expected["throughput_best"] * min(times)  # throughput = work / time
    assert work / (sum(times) / len(times)) == pytest.approx(expected["throughput_avg"], abs=0.01)


def test_lkp_hackbench_instances_are_kept_apart():
    expected = lkp_expected("hackbench_hackbench-multi-instance")
    sets = read(os.path.join(LKP, "hackbench_hackbench-multi-instance"))[1]
    times = {s.labels["instance"]: s.runs[0] for s in sets}
    for instance in ("1", "2"):
        ratio = expected[f"throughput_worst.instance{instance}"] / expected[f"throughput.instance{instance}"]
        assert ratio == pytest.approx(min(times[instance]) / max(times[instance]))


@pytest.mark.parametrize("name", ["kernbench_01", "kernbench_02"])
def test_lkp_kernbench(name):
    expected = lkp_expected(name)
    for sample_set in read(os.path.join(LKP, name))[1]:
        key = sample_set.labels["metric"].replace("-", "_")
        if sample_set.summary is not None:
            assert (sample_set.summary.mean, sample_set.summary.stddev) == (expected[key], expected[key + "_stddev"])
            assert sample_set.summary.n == 5
        else:
            assert sample_set.runs == [[expected[key]]]


def test_lkp_will_it_scale():
    expected = lkp_expected("will-it-scale_1")
    sets = by_metric(read(os.path.join(LKP, "will-it-scale_1"))[1], tasks="104")
    for column in ("processes", "processes_idle", "threads", "threads_idle", "linear"):
        assert sets[column].runs == [[expected["104." + column]]]
    assert int(sets["processes"].runs[0][0] / 104) == expected["per_process_ops"]


def test_lkp_schbench_end_latencies():
    expected = lkp_expected("schbench_01")
    sets = by_metric(read(os.path.join(LKP, "schbench_01"))[1])
    assert len(sets["wakeup-latency.p50.0"].runs[0]) == 3  # three iterations
    for kind in ("wakeup", "request"):
        for pct, key in (("50.0", "50%"), ("90.0", "90%"), ("99.0", "99%"), ("99.9", "99.9%")):
            assert max(sets[f"{kind}-latency.p{pct}"].runs[0]) == expected[f"{kind}_end_latency_{key}_us_max"]


@pytest.mark.parametrize("name", ["stress-ng_02", "stress-ng_05"])
def test_lkp_stress_ng(name):
    expected = lkp_expected(name)
    sets = read(os.path.join(LKP, name))[1]
    got = {(s.labels["stressor"], s.labels["metric"]): s.runs[0] for s in sets}
    checked = 0
    for key, value in expected.items():
        stressor, _, what = key.partition(".")
        if what.endswith("pass"):
            continue
        mine = {"ops": "bogo-ops", "ops_per_sec": "bogo-ops-per-sec-real-time"}.get(what, what.replace("_", "-"))
        assert got[(stressor, mine)] == [value], key
        checked += 1
    assert checked >= 3


def test_lkp_perf_bench_iperf_fio():
    expected = lkp_expected("perf-bench-sched-messaging_01")
    assert by_metric(read(os.path.join(LKP, "perf-bench-sched-messaging_01"))[1])["total-time"].runs == [
        [expected["total_time_sec"]]
    ]
    expected = lkp_expected("iperf_1")
    sets = by_metric(read(os.path.join(LKP, "iperf_1"))[1])
    assert sets["sender.bits_per_second"].runs == [[expected["tcp.sender.bps"]]]
    assert sets["receiver.bits_per_second"].runs == [[expected["tcp.receiver.bps"]]]
    udp = by_metric(read(os.path.join(LKP, "iperf_3"))[1])["bits_per_second"].runs[0]
    assert len(udp) == 2 and sum(udp) / 2 == lkp_expected("iperf_3")["udp.bps"]  # two documents, two runs
    expected = lkp_expected("fio_01")
    fio = by_metric(read(os.path.join(LKP, "fio_01"))[1])
    assert fio["read.iops"].runs == [[expected["read_iops"]]]
    assert fio["read.bw"].runs[0][0] / 1024 == expected["read_bw_MBps"]
    assert fio["read.clat_mean"].runs == [[expected["read_clat_mean_ns"]]]
    for pct in ("90", "95", "99"):
        assert fio[f"read.clat_p{pct}"].runs == [[expected[f"read_clat_{pct}%_ns"]]]


# -- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"counter-value" : "x1", "unit" : "", "event" : "page-faults"}\n', "not a number"),
        ("Running in process mode with 4 groups using 40\nTime: 1e999\n", "finite"),
        ('{"fio version": "fio-3", "jobs": []}', "no job"),
    ],
)
def test_bad_kernel_tool_files_name_the_problem(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read(str(path))


def test_perf_text_multiplexing_in_both_notations(tmp_path):
    path = tmp_path / "old.txt"  # perf before 4.x wrote [ 50.00%], later (50.00%)
    path.write_text(
        " Performance counter stats for './a':\n\n"
        "     1,234,567 cycles             #    2.1 GHz                [50.00%]\n"
        "         5,000 instructions       #    0.00 insn per cycle    (66.67%)\n"
        "         7,000 branches\n\n       1.0 seconds time elapsed\n"
    )
    sets = by_metric(read(str(path))[1])
    assert sets["cycles"].runs == [[1234567.0]] and sets["cycles"].extra["pcnt_running"] == [50.0]
    assert sets["instructions"].extra["pcnt_running"] == [66.67]
    assert any("66.67% of the time" in note for note in sets["instructions"].notes)
    assert sets["branches"].notes == [] and sets["seconds-time-elapsed"].unit == "s"
