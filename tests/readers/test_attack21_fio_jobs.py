"""attack21 B5: fio with ``numjobs=N`` (no ``group_reporting``) writes N jobs of one name in one document; they were
read as N independent samples, so one fio run a side gave a starred verdict from per-job values and the cell showed
one job's IO/s.  One document is one run: the jobs' IO/s and bandwidths summed, mean latencies weighted by each
job's I/Os (the reference: the sums and weighted means computed here from the document), percentiles kept per job,
a note saying so; one run a side is then not compared, as for a single-job file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abstat.report import api
from support.cli import run_abstat

IOPS = ([1000.0, 1010.0, 995.0, 1005.0, 1002.0, 998.0], [1030.0, 1040.0, 1025.0, 1035.0, 1032.0, 1028.0])
IOS = [1000, 2000, 1000, 3000, 1000, 1000]


def _doc(path: Path, iops: list[float]) -> Path:
    jobs = []
    for x, n in zip(iops, IOS, strict=True):
        clat = {"mean": 1e6 / x, "percentile": {"99.000000": 2e6 / x}}
        read = {"io_bytes": 1, "total_ios": n, "iops": x, "bw": x * 4, "clat_ns": clat}
        jobs.append({"jobname": "randread", "groupid": 0, "error": 0, "read": read, "write": {"total_ios": 0}})
    path.write_text(json.dumps({"fio version": "fio-3.33", "jobs": jobs}))
    return path


def test_jobs_of_one_name_are_one_run(tmp_path: Path) -> None:
    sets = {s.labels["metric"] + "/" + s.labels["job"]: s for s in api.load([str(_doc(tmp_path / "f.json", IOPS[0]))])}
    assert sets["read.iops/randread"].runs == [[sum(IOPS[0])]]
    assert sets["read.bw/randread"].runs == [[pytest.approx(4 * sum(IOPS[0]))]]
    weighted = sum(n * 1e6 / x for x, n in zip(IOPS[0], IOS, strict=True)) / sum(IOS)
    assert sets["read.clat_mean/randread"].runs == [[pytest.approx(weighted, rel=1e-12)]]
    assert sorted(k for k in sets if k.startswith("read.clat_p99/")) == [
        f"read.clat_p99/randread#{i}" for i in range(1, 7)
    ]
    assert any("6 fio jobs named 'randread' in one document" in n for s in sets.values() for n in s.notes)


def test_one_fio_run_a_side_is_not_judged(tmp_path: Path) -> None:
    old, new = _doc(tmp_path / "fio_old.json", IOPS[0]), _doc(tmp_path / "fio_new.json", IOPS[1])
    result = run_abstat("report", old, new, "--metric", "read.iops", "--format", "json")
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)["rows"]
    assert {name: cell["n"] for name, cell in row["cells"].items()} == {"fio_old": 1, "fio_new": 1}
    assert row["cells"]["fio_old"]["center"] == sum(IOPS[0])
    assert "faster" not in result.stdout and 'significant": true' not in result.stdout
