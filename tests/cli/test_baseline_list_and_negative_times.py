"""Issue 36, item 18: messages that said what was not so.  ``baseline list`` lists only the baselines
``compare baseline:NAME`` finds (names are matched with their case); a negative Google Benchmark time is
refused in one line."""

from __future__ import annotations

import json

from abstat.store import open_store
from support import paths
from support.cli import run_abstat as _abstat

SRC = paths.SRC


def test_baseline_list_names_only_what_compare_finds(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        for name in ("BASELINE@main", "baseline@real"):
            invocation = store.start_invocation(name, {"hostname": "h"}, variants=["a"])
            for i in range(3):
                store.add_run(
                    invocation,
                    variant="a",
                    command="true",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=1.0 + i,
                    wall=0.01,
                    values={"t": [1.0 + i]},
                    units={"t": "s"},
                )
            store.finish_invocation(invocation, "complete")
    listed = _abstat("baseline", "list", "--store", "s.db", cwd=str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert "real" in listed.stdout and "main" not in listed.stdout, listed.stdout


def test_a_negative_google_benchmark_time_is_refused(tmp_path):
    document = {
        "context": {"date": "2024-01-01", "host_name": "h"},
        "benchmarks": [
            {
                "name": "BM_x",
                "run_type": "iteration",
                "iterations": 10,
                "real_time": -5.0,
                "cpu_time": 5.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_x",
                "run_type": "iteration",
                "iterations": 10,
                "real_time": 5.0,
                "cpu_time": 5.0,
                "time_unit": "ns",
            },
        ],
    }
    (tmp_path / "g.json").write_text(json.dumps(document))
    done = _abstat("report", "g.json", cwd=str(tmp_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "a negative time" in done.stderr, done.stderr


def test_a_failed_run_advises_only_what_the_command_accepts(tmp_path):
    """`run` advises --ignore-failure; `noise`, which rejects that option, did too."""
    noise = _abstat("noise", "-n", "3", "--store", "s.db", "--no-progress", "--", "false", cwd=str(tmp_path))
    last = noise.stderr.strip().splitlines()[-1]
    assert noise.returncode == 2 and "Traceback" not in noise.stderr, noise.stderr
    assert last.startswith("abstat noise: run 1 of variant ") and "failed: exit status 1" in last, last
    assert "--ignore-failure" not in noise.stderr and "(abstat noise needs every run to succeed)" in last, last
    rejected = _abstat("noise", "-n", "3", "--ignore-failure", "--store", "s.db", "--", "false", cwd=str(tmp_path))
    assert rejected.returncode == 2 and "unrecognized arguments: --ignore-failure" in rejected.stderr
    run = _abstat("run", "-n", "3", "-v", "a=false", "--store", "s.db", "--no-progress", cwd=str(tmp_path))
    assert run.returncode == 2 and "failed: exit status 1 (use --ignore-failure to go on)" in run.stderr, run.stderr
