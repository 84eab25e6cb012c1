"""Throughputs read from kernel benchmarks' outputs carry a rate unit, so that higher is better (attack22
A3): schbench's ``RPS percentiles`` block (requests per second, as ``average-rps``), will-it-scale's
``processes``/``threads``/``linear`` (operations per second, LKP's ``per_process_ops``) and stress-ng's
``... MB/sec`` figures were read without a unit and judged as times: a +10% throughput gain was
``slower`` and failed ``--fail-on slower``."""

from __future__ import annotations

import csv
import io
import random

import numpy as np

from abstat.readers.kbench import read_will_it_scale
from abstat.readers.stressng import read_schbench, read_stress_ng
from abstat.report.analysis import higher_is_better


def _schbench_run(rng: random.Random, rps: float) -> str:
    p = sorted(int(rps * rng.gauss(1, 0.01)) for _ in range(3))
    return f"""Wakeup Latencies percentiles (usec) runtime 10 (s) (602 total samples)
          50.0th: 68         (177 samples)
        * 99.0th: {int(7000 * rng.gauss(1, 0.01))}      (54 samples)
          min=1, max=375290
RPS percentiles (requests) runtime 10 (s) (11 total samples)
          20.0th: {p[0]}         (5 samples)
        * 50.0th: {p[1]}         (1 samples)
          90.0th: {p[2]}         (5 samples)
          min=55, max=61
average rps: {rps * rng.gauss(1, 0.01):.2f}
"""


def _write_schbench(tmp_path) -> None:
    rng = random.Random(1)
    for name, rps in (("old", 1000), ("new", 1100)):
        (tmp_path / f"{name}.txt").write_text("".join(_schbench_run(rng, rps) for _ in range(12)))


def _write_will_it_scale(tmp_path) -> None:
    r = np.random.default_rng(1)
    for name, mu in (("old", 1000000), ("new", 1100000)):
        rows = []
        for _ in range(12):
            rows.append("tasks,processes,processes_idle,threads,threads_idle,linear\n")
            rows.append(f"1,{int(mu * r.normal(1, 0.01))},49.0,{int(mu * r.normal(1, 0.01))},49.0,{mu}\n")
        (tmp_path / f"{name}.csv").write_text("".join(rows))


def _verdicts(abstat_cli, *args: str) -> dict[str, str]:
    done = abstat_cli("report", *args, "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = csv.DictReader(io.StringIO(done.stdout))
    return {row.get("metric", "-"): row["verdict"] for row in rows if row["verdict"]}


def test_schbench_rps_percentiles_are_a_rate(tmp_path, abstat_cli):
    _write_schbench(tmp_path)
    sets = {s.labels["metric"]: s for s in read_schbench("old.txt", (tmp_path / "old.txt").read_text())}
    assert {m: sets[m].unit for m in ("rps.p20.0", "rps.p50.0", "rps.p90.0", "average-rps")} == dict.fromkeys(
        ("rps.p20.0", "rps.p50.0", "rps.p90.0", "average-rps"), "1/s"
    )
    assert sets["wakeup-latency.p99.0"].unit == "us"
    verdicts = _verdicts(abstat_cli, "old.txt", "new.txt")
    assert {m: v for m, v in verdicts.items() if "rps" in m} == dict.fromkeys(
        ("rps.p20.0", "rps.p50.0", "rps.p90.0", "average-rps"), "faster"
    )
    gate = abstat_cli("report", "old.txt", "new.txt", "--fail-on", "slower")
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_will_it_scale_operations_are_a_rate(tmp_path, abstat_cli):
    _write_will_it_scale(tmp_path)
    sets = {s.labels["metric"]: s for s in read_will_it_scale("old.csv", (tmp_path / "old.csv").read_text())}
    assert {m: s.unit for m, s in sets.items()} == {
        "processes": "ops/s",
        "threads": "ops/s",
        "linear": "ops/s",
        "processes_idle": "%",
        "threads_idle": "%",
    }
    assert all(higher_is_better(m, sets[m].unit, False) for m in ("processes", "threads", "linear"))
    assert _verdicts(abstat_cli, "old.csv", "new.csv", "--metric", "processes") == {"-": "faster"}
    gate = abstat_cli("report", "old.csv", "new.csv", "--metric", "processes", "--fail-on", "slower")
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_stress_ng_rates_of_its_other_figures():
    text = (
        "stress-ng: info:  [2680] memrate         1656.82 write128 MB/sec (average per stressor)\n"
        "stress-ng: info:  [2680] switch          312.5 context switches per second (average per stressor)\n"
        "stress-ng: info:  [2680] longjmp         27.19 nanoseconds per longjmp call (average per stressor)\n"
    )
    units = {s.labels["metric"]: s.unit for s in read_stress_ng("s.txt", text)}
    assert units == {
        "write128-MB/sec": "MB/s",
        "context-switches-per-second": "1/s",
        "nanoseconds-per-longjmp-call": None,
    }
