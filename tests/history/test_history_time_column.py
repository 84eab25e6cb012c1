"""attack22 A12: a CSV's ``time`` column of measured seconds (``rev,bench,time``) is a metric, never the commit
time that orders the revisions; Otava's ``time`` of dates or Unix seconds still is."""

from __future__ import annotations

import json

import numpy as np

from support.cli import run_abstat as abstat


def _history(tmp_path, *args):
    done = abstat("history", *args, "--no-state", "--format", "json", "--repo", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _write(tmp_path, name="htime.csv", header="rev,bench,time", first=0, last=40):
    rng = np.random.default_rng(3)
    rows = [
        f"r{i:03d},b,{10 * (1.05 if i >= 20 else 1) * rng.normal(1, 0.01):.4f}"
        for i in range(first, last)
        for _ in range(3)
    ]
    (tmp_path / name).write_text(header + "\n" + "\n".join(rows) + "\n")


def test_a_measured_time_column_is_the_metric_and_the_step_is_at_r020(tmp_path):
    _write(tmp_path)
    _write(tmp_path, "a.csv", last=20)  # two inputs: the sets' reader (files.py), not the columnar one
    _write(tmp_path, "b.csv", first=20)
    for args in (
        ["--input", "htime.csv"],
        ["--input", "htime.csv", "--metric", "time"],
        ["--input", "a.csv", "--input", "b.csv"],
    ):
        (series,) = _history(tmp_path, *args)["series"]
        assert series["metric"] == "time"
        assert [p["rev"] for p in series["points"]] == [f"r{i:03d}" for i in range(40)]
        assert [c["rev"] for c in series["change_points"]] == ["r020"]


def test_a_measured_time_without_a_revision_column_is_a_one_line_error(tmp_path):
    (tmp_path / "t.csv").write_text("bench,time\nb,10.1\nb,10.3\n")
    done = abstat("history", "--input", "t.csv", "--no-state", "--repo", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'time' holds measurements, not dates or Unix times" in done.stderr


def test_unix_seconds_in_otavas_time_column_still_order_the_revisions(tmp_path):
    rows = [f"{1_700_000_000 + 3600 * (9 - i)},c{i},{100 + i % 2}" for i in range(10)]  # newest first
    (tmp_path / "o.csv").write_text("time,commit,m\n" + "\n".join(rows) + "\n")
    (series,) = _history(tmp_path, "--input", "o.csv")["series"]
    assert series["metric"] == "m" and [p["rev"] for p in series["points"]] == [f"c{i}" for i in range(9, -1, -1)]


def _write_ns(tmp_path, name, first=0, last=40, time=lambda rng, i: f"{5.0e8 * rng.normal(1, 0.05):.0f}"):
    """attack23 #3: five rows per revision, a ``time`` in nanoseconds (above 1980's Unix time) and an rss that
    steps +10% at r020."""
    rng = np.random.default_rng(3)
    rows = [
        f"r{i:03d},{time(rng, i)},{(1000 if i < 20 else 1100) * rng.normal(1, 0.01):.1f}"
        for i in range(first, last)
        for _ in range(5)
    ]
    (tmp_path / name).write_text("rev,time,rss\n" + "\n".join(rows) + "\n")


def test_nanoseconds_in_time_that_differ_within_a_revision_are_a_measurement(tmp_path):
    _write_ns(tmp_path, "ns.csv")
    _write_ns(tmp_path, "a.csv", last=20)  # two inputs: the sets' reader (files.py), not the columnar one
    _write_ns(tmp_path, "b.csv", first=20)
    for inputs in (["--input", "ns.csv"], ["--input", "a.csv", "--input", "b.csv"]):
        (series,) = _history(tmp_path, *inputs, "--metric", "rss")["series"]
        assert [p["rev"] for p in series["points"]] == [f"r{i:03d}" for i in range(40)]
        assert [c["rev"] for c in series["change_points"]] == ["r020"]
        followed = _history(tmp_path, *inputs)["series"]  # no --metric: the nanoseconds are a metric too
        assert sorted(s["metric"] for s in followed) == ["rss", "time"]


def test_a_commit_time_repeated_on_each_row_of_its_revision_still_orders_them(tmp_path):
    def when(rng, i):  # newest first in the file: the time, not the file's order, puts r039 last
        return str(1_700_000_000 + 3600 * i)

    _write_ns(tmp_path, "c.csv", time=when)
    text = (tmp_path / "c.csv").read_text().splitlines()
    (tmp_path / "c.csv").write_text("\n".join([text[0], *reversed(text[1:])]) + "\n")
    _write_ns(tmp_path, "a.csv", last=20, time=when)
    _write_ns(tmp_path, "b.csv", first=20, time=when)
    for inputs in (["--input", "c.csv"], ["--input", "b.csv", "--input", "a.csv"]):
        (series,) = _history(tmp_path, *inputs)["series"]
        assert series["metric"] == "rss"
        assert [p["rev"] for p in series["points"]] == [f"r{i:03d}" for i in range(40)]
        assert [c["rev"] for c in series["change_points"]] == ["r020"]
