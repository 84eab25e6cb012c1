"""abstat history's inputs: CSV columns, Otava's CSV and dates, missing cells, asv results,
revisions in pyperf and hyperfine files, every sample of a revision, the exit status."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import numpy as np
import pytest

from abstat.history.changepoints import detect
from abstat.history.files import parse_time
from abstat.store import open_store
from support.store_pg import backend, store_name  # noqa: F401  (fixtures: sqlite and postgresql)
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC
DATA = os.path.join(str(paths.DATA), "history")


def history_json(*args: str, cwd) -> dict:
    done = abstat("history", *args, "--format", "json", "--repo", str(cwd), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_nightly_20_revisions_of_8_runs_every_sample_counts(tmp_path):
    # issue 21's first case: cycles N(1000, 20), +3% from revision 12 on, 8 runs per revision
    rng = np.random.default_rng(21)
    store_path = str(tmp_path / "n.db")
    with open_store(store_path) as store:
        for i in range(20):
            invocation = store.start_invocation(
                "nightly",
                {"hostname": "box"},
                labels={"rev": f"r{i:02d}", "commit_time": str(1000 + i)},
                variants=["b"],
            )
            for run in range(8):
                store.add_run(
                    invocation,
                    variant="b",
                    command="x",
                    iteration=run,
                    position=run,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=0.1,
                    values={"cycles": [float(rng.normal(1000 * (1.03 if i >= 12 else 1.0), 20))]},
                )
            store.finish_invocation(invocation, "complete")
    document = history_json("nightly", "--store", store_path, "--no-state", cwd=tmp_path)
    (series,) = document["series"]
    (change,) = series["change_points"]
    assert change["rev"] == "r12" and change["samples_before"] == 96 and change["samples_after"] == 64
    assert change["relative_low"] < 0.03 < change["relative_high"]
    assert not any("too few" in note["message"] for note in series["notes"])
    # one sample per revision (their medians) could not show it as surely: the weights matter
    centres = [p["centre"] for p in series["points"]]
    assert detect(centres).change_points == [] or detect(centres).change_points[0].p_value > change["p_value"]


def test_metric_selects_columns_and_other_numbers_are_not_labels(tmp_path):
    rng = np.random.default_rng(2)
    rows = ["rev,commit_time,bench,ns_op,allocs"]
    for i in range(30):
        for _ in range(3):
            rows.append(
                f"r{i:02d},{1000 + i},parse,{100 + 5 * (i >= 15) + rng.normal(0, 1):.3f},{int(rng.integers(0, 9))}"
            )
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    document = history_json("--input", "r.csv", "--metric", "ns_op", cwd=tmp_path)
    (series,) = document["series"]  # allocs is neither a label nor a series; commit_time is no metric
    assert series["metric"] == "ns_op" and series["labels"] == {"bench": "parse", "metric": "ns_op"}
    assert len(series["points"]) == 30 and [c["rev"] for c in series["change_points"]] == ["r15"]
    every = history_json("--input", "r.csv", cwd=tmp_path)
    assert sorted(s["metric"] for s in every["series"]) == ["allocs", "ns_op"]
    named = history_json("--input", "r.csv", "--metric", "ns_op", "--label-column", "allocs", cwd=tmp_path)
    assert len(named["series"]) == 9 and all(s["labels"].keys() == {"allocs", "metric"} for s in named["series"])


def test_otava_csv_with_dates_semicolons_and_missing_cells(tmp_path):
    rng = np.random.default_rng(3)
    rows = ["time;commit;branch;metric1;metric2"]
    for i in range(40):
        day = datetime(2024, 1, 1 + i % 28, tzinfo=timezone.utc).replace(month=1 + i // 28)
        metric1 = f"{150000 * (0.9 if i >= 22 else 1) + rng.normal(0, 800):.0f}" if i != 7 else ""
        rows.append(f"{day:%Y.%m.%d} 3:00:00 +0100;c{39 - i:02d};main;{metric1};{10 + rng.normal(0, 0.1):.2f}")
    (tmp_path / "otava.csv").write_text(
        "\n".join(reversed(rows[1:])) and "\n".join([rows[0], *reversed(rows[1:])]) + "\n"
    )
    document = history_json("--input", "otava.csv", cwd=tmp_path)
    by_metric = {s["metric"]: s for s in document["series"]}
    assert set(by_metric) == {"metric1", "metric2"} and by_metric["metric1"]["labels"]["branch"] == "main"
    metric1 = by_metric["metric1"]
    assert [p["rev"] for p in metric1["points"]] == [f"c{39 - i:02d}" for i in range(40) if i != 7]  # by time
    assert metric1["points"][0]["commit_time"] == datetime(2024, 1, 1, 2, tzinfo=timezone.utc).timestamp()
    assert [c["rev"] for c in metric1["change_points"]] == ["c17"]
    assert any("1 empty cell(s) left out" in w["message"] for w in document["warnings"])


def test_parse_time_reads_unix_seconds_iso_and_otava_dates():
    assert parse_time("1609466400") == 1609466400.0
    assert parse_time("2021-01-01T02:00:00Z") == 1609466400.0
    assert parse_time("2021-01-01 03:00:00+01:00") == 1609466400.0
    assert parse_time("2021.01.01 3:00:00 +0100") == 1609466400.0
    assert parse_time("2021-01-01") == datetime(2021, 1, 1, tzinfo=timezone.utc).timestamp()
    assert parse_time("yesterday") is None and parse_time("2021-13-01") is None


def test_a_time_that_is_no_time_is_a_one_line_error(tmp_path):
    (tmp_path / "t.csv").write_text("time,commit,m\n2021-01-01,a,1\nlast tuesday,b,2\n")
    done = abstat("history", "--input", "t.csv", "--repo", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "t.csv" in done.stderr and "not a time" in done.stderr


def _asv_results(tmp_path):
    files = json.load(open(os.path.join(DATA, "asv-example-results.json")))["files"]
    for name, text in files.items():
        path = tmp_path / "results" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "results", files


def test_asv_results_directory(tmp_path):
    results, files = _asv_results(tmp_path)
    (results / "benchmarks.json").write_text(
        json.dumps({"time_units.mem_unit": {"unit": "bytes"}, "time_units.time_unit_parse": {"unit": "seconds"}})
    )
    document = history_json("--input", str(results), cwd=tmp_path)
    documents = [
        json.loads(t)
        for n, t in files.items()
        if not n.startswith(("cheetah/aaaa", "cheetah/bbbb")) and not n.endswith("machine.json")
    ]
    parse = next(
        s
        for s in document["series"]
        if s["metric"] == "time_units.time_unit_parse" and s["labels"]["env"] == "py2.7-Cython-numpy1.8"
    )
    assert parse["unit"] == "s" and parse["labels"]["machine"] == "cheetah"
    expected = sorted(
        (d["date"] / 1000.0, d["commit_hash"])
        for d in documents
        if d["results"].get("time_units.time_unit_parse") is not None and d["requirements"].get("foo") is None
    )
    assert [(p["commit_time"], p["rev"]) for p in parse["points"]] == expected
    assert next(s for s in document["series"] if s["metric"] == "time_units.mem_unit")["unit"] == "B"
    assert any("2 file(s) that are not asv results skipped" in w["message"] for w in document["warnings"])  # as asv


def test_asv_format_2_with_parameters_and_samples(tmp_path):
    rng = np.random.default_rng(5)
    machine = tmp_path / "results" / "box"
    machine.mkdir(parents=True)
    columns = [
        "result",
        "params",
        "version",
        "started_at",
        "duration",
        "stats_ci_99_a",
        "stats_ci_99_b",
        "stats_q_25",
        "stats_q_75",
        "stats_number",
        "stats_repeat",
        "samples",
        "profile",
    ]
    for i in range(24):
        level = 1.0 if i < 12 else 1.2
        samples = [[float(v) for v in rng.normal(level * n, 0.01, 5)] for n in (1, 2)]
        document = {
            "commit_hash": f"{i:02d}" + "ab" * 19,
            "env_name": "virtualenv-py3.12",
            "date": 1.7e12 + i * 1e6,
            "params": {"machine": "box"},
            "python": "3.12",
            "requirements": {},
            "env_vars": {},
            "result_columns": columns,
            "version": 2,
            "durations": {},
            "results": {
                "bench.time_x": [
                    [float(np.median(s)) for s in samples],
                    [["1", "2"]],
                    "v",
                    0,
                    1.0,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    samples,
                ],
                "bench.time_failed": [[None], [], "v"],
            },
        }
        (machine / f"{i:02d}abab-virtualenv-py3.12.json").write_text(json.dumps(document))
    document = history_json("--input", str(tmp_path / "results"), cwd=tmp_path)
    series = {s["labels"]["params"]: s for s in document["series"]}
    assert set(series) == {"1", "2"}
    for s in series.values():
        assert all(p["n"] == 5 for p in s["points"]) and [c["index"] for c in s["change_points"]] == [12]
    assert any("24 failed or missing asv result(s)" in w["message"] for w in document["warnings"])


def test_pyperf_revision_from_metadata(tmp_path):
    rng = np.random.default_rng(6)
    for i in range(20):
        runs = [
            {"metadata": {}, "values": [float(v) for v in rng.normal(0.010 * (1.1 if i >= 10 else 1), 1e-4, 3)]}
            for _ in range(4)
        ]
        document = {
            "version": "1.0",
            "metadata": {"commit_id": f"p{i:02d}", "commit_date": f"2024-02-{i + 1:02d}T00:00:00", "hostname": "box"},
            "benchmarks": [{"metadata": {"name": "bm_x", "unit": "second"}, "runs": runs}],
        }
        (tmp_path / f"p{i}.json").write_text(json.dumps(document))
    args = [a for i in range(20) for a in ("--input", f"p{i}.json")]
    (series,) = history_json(*args, cwd=tmp_path)["series"]
    assert [p["rev"] for p in series["points"]] == [f"p{i:02d}" for i in range(20)]
    assert all(p["n"] == 12 for p in series["points"]) and [c["rev"] for c in series["change_points"]] == ["p10"]


def test_hyperfine_revision_from_a_parameter(tmp_path):
    rng = np.random.default_rng(7)
    results = [
        {
            "command": f"./bench-{rev}",
            "parameters": {"rev": rev},
            "mean": 1.0,
            "times": [float(v) for v in rng.normal(0.1 * (1.05 if i >= 12 else 1), 0.001, 10)],
        }
        for i, rev in enumerate(f"h{i:02d}" for i in range(24))
    ]
    (tmp_path / "hf.json").write_text(json.dumps({"results": results}))
    (series,) = history_json("--input", "hf.json", cwd=tmp_path)["series"]  # not one series per command
    assert len(series["points"]) == 24 and [c["rev"] for c in series["change_points"]] == ["h12"]


def test_exit_code(tmp_path):
    rows = "rev,ns\n" + "".join(f"r{i:03d},{100 + (i >= 30) * 5 + (i % 3) * 0.1}\n" for i in range(60))
    flat = "rev,ns\n" + "".join(f"r{i:03d},{100 + (i % 3) * 0.1}\n" for i in range(60))
    (tmp_path / "h.csv").write_text(rows)
    (tmp_path / "flat.csv").write_text(flat)
    assert abstat("history", "--input", "h.csv", "--exit-code", cwd=tmp_path).returncode == 1
    assert abstat("history", "--input", "h.csv", cwd=tmp_path).returncode == 0
    assert abstat("history", "--input", "flat.csv", "--exit-code", cwd=tmp_path).returncode == 0
    state = str(tmp_path / "s.json")
    assert abstat("history", "--input", "h.csv", "--exit-code", "--state", state, cwd=tmp_path).returncode == 1
    assert abstat("history", "--input", "h.csv", "--exit-code", "--state", state, cwd=tmp_path).returncode == 0  # kept
    assert "--exit-code" in abstat("history", "--help", cwd=tmp_path).stdout


def test_no_contradictory_note_under_a_confirmed_change(tmp_path):
    # tied values, a clean step: confirmed, and no note says it could not be
    rows = "rev,ns\n" + "".join(f"r{i:03d},{100 if i < 9 else 110}\n" for i in range(18))
    (tmp_path / "t.csv").write_text(rows)
    (series,) = history_json("--input", "t.csv", cwd=tmp_path)["series"]
    assert [c["rev"] for c in series["change_points"]] == ["r009"] and series["notes"] == []


def test_perfectly_separated_steps_with_8_revisions_each_side_are_found():
    # issue 21: 50% steps in 18-30 revisions were missed in 25-104 of 200 series
    rng = np.random.default_rng(8)
    false = 0
    for length in (16, 18, 24, 30):
        for _ in range(50):
            while True:
                at = int(rng.integers(8, length - 7))
                values = np.r_[rng.normal(1.0, 0.05, at), rng.normal(1.5, 0.05, length - at)]
                if values[:at].max() < values[at:].min():
                    break
            found = [c.index for c in detect(values).change_points]
            assert at in found, (length, at, found)
            false += len(found) - 1
    assert false <= 3  # noise in a segment of 22 revisions can still pass p <= 0.001


def test_ramps_are_not_strings_of_steps():
    assert detect(np.linspace(0, 1, 1000)).change_points == []  # the noiseless one gave 11 before
    rng = np.random.default_rng(9)
    called = sum(bool(detect(np.linspace(0, 10, 100) + rng.normal(0, 1, 100)).change_points) for _ in range(100))
    assert called <= 5  # 83.5% before


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_dropped_candidates_name_the_option_that_reports_them(tmp_path, fmt):
    rng = np.random.default_rng(10)
    values = np.r_[rng.normal(100, 1, 40), rng.normal(101.1, 1, 40)]
    (tmp_path / "w.csv").write_text("rev,ns\n" + "".join(f"r{i:03d},{v:.4f}\n" for i, v in enumerate(values)))
    text = abstat("history", "--input", "w.csv", "--format", fmt, "--max-pvalue", "1e-7", cwd=tmp_path).stdout
    assert "raise --max-pvalue to report them" in text


def test_experiment_without_successful_runs_is_one_line_on_every_back_end(store_name, tmp_path):
    # PostgreSQL refused the query with an empty metric list: "s.metric IN ()", a syntax error
    done = abstat(
        "run",
        "--store",
        store_name,
        "--experiment",
        "broken",
        "-n",
        "2",
        "-v",
        "a=false",
        "--label",
        "rev=r1",
        "--no-progress",
        cwd=tmp_path,
    )
    assert done.returncode != 0 or "failed" in done.stdout + done.stderr
    done = abstat("history", "broken", "--store", store_name, "--no-state", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "syntax" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "no successful runs" in done.stderr


def test_otava_csv_example(tmp_path):
    # apache/otava tests/resources/sample.csv (its docs' CSV example); Otava's csv_e2e_test
    # expects metric2 -12.9% at aaa6, with 4 revisions after it (so --min-segment 4 here)
    rows = ["time,commit,metric1,metric2"] + [
        f"2024.01.{i + 1:02d} 3:00:00 +0100,aaa{i},{m1},{m2}"
        for i, (m1, m2) in enumerate(
            zip(
                [154023, 138455, 143112, 149190, 132098, 151344, 155145, 148889, 149466, 148209],
                [10.43, 10.23, 10.29, 10.91, 10.34, 10.69, 9.23, 9.11, 9.13, 9.03],
            )
        )
    ]
    (tmp_path / "sample.csv").write_text("\n".join(rows) + "\n")
    document = history_json("--input", "sample.csv", "--min-segment", "4", "--no-state", cwd=tmp_path)
    by_metric = {s["metric"]: s for s in document["series"]}
    assert by_metric["metric1"]["change_points"] == []
    (change,) = by_metric["metric2"]["change_points"]
    assert change["rev"] == "aaa6" and round(100 * change["relative"], 1) == -12.9
