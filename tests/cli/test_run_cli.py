"""``abstat run`` / ``abstat demo`` end to end, with real processes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from abstat.cli.commands.run import comparison_report
from abstat.errors import InputError
from abstat.store import open_store, resolve_variant

from support.processes import wait_gone
from support.cli import run_abstat as abstat


def test_usage_errors_are_one_line_and_exit_2(tmp_path):
    for args, message in [
        ([], "give at least one variant"),
        (["-v", "noequals"], "expected NAME=COMMAND"),
        (["-v", "a=/no/such/bench"], "variant 'a': command not found or not executable: '/no/such/bench'"),
        (["-v", "a=true", "-v", "a=false"], "variant 'a' given twice"),
        (["-v", "a=true", "--metric", "x=[("], "bad regular expression"),
        (["-v", "a=true", "--label", "variant=x"], "set by abstat itself"),
        (["-v", "a=echo 'unbalanced"], "cannot split"),
    ]:
        done = abstat("run", "--store", str(tmp_path / "s.db"), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.db").exists()  # nothing ran, nothing was created


def test_a_run_stores_every_metric_and_prints_the_comparison(tmp_path):
    store = str(tmp_path / "s.db")
    bench = f"{sys.executable} -c \"import sys; print('cycles per call:', 400 + 40 * (sys.argv[1] == 'old'))\""
    done = abstat(
        "run",
        "-n",
        "6",
        "--warmup",
        "1",
        "--experiment",
        "hcall",
        "--store",
        store,
        "--label",
        "mode=pv64",
        "--metric",
        r"cycles=cycles per call: (\d+):cycles",
        "-v",
        f"before={bench} old",
        "-v",
        f"after={bench} new",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["experiment"] == "hcall" and report["baseline"] == "before"
    assert set(report["metrics"]) >= {"wall", "user", "sys", "cycles"}
    assert report["metrics"]["cycles"]["unit"] == "cycles"
    cycles = report["metrics"]["cycles"]["comparisons"]["comparisons"][0]
    # two constant samples (440 and 400 cycles, no noise): the exact change, but no interval, so no verdict
    assert cycles["candidate"] == "after" and cycles["verdict"] == "cannot judge"
    assert cycles["delta_pct"] == pytest.approx(100 * (400 / 440 - 1))
    assert resolve_variant("hcall:before", store, metric="cycles") == [[440.0] * 6]
    assert "[6/12]" in done.stderr or "[12/12]" in done.stderr  # plain progress lines when not a terminal


def test_a_failed_run_stops_the_experiment_but_keeps_what_ran(tmp_path):
    store = str(tmp_path / "s.db")
    flag = tmp_path / "count"
    script = f"n=$(cat {flag} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {flag}; [ $n -lt 4 ]"
    done = abstat(
        "run",
        "-n",
        "10",
        "--order",
        "sequential",
        "--shell",
        "--experiment",
        "f",
        "--store",
        store,
        "-v",
        f"a={script}",
        "--no-progress",
    )
    assert done.returncode == 2
    assert "run 4 of variant 'a' failed: exit status 1 (use --ignore-failure to go on)" in done.stderr
    assert f"stored in {store}" in done.stderr
    assert resolve_variant("f:a", store) is not None and len(resolve_variant("f:a", store)[0]) == 3
    with open_store(store) as s:
        assert [f["run"] for f in s.failed_runs("f")] == [4]
        assert s.invocations("f")[0]["status"] == "failed"


def test_ignore_failure_and_timeout(tmp_path):
    store = str(tmp_path / "s.db")
    done = abstat(
        "run",
        "-n",
        "3",
        "--timeout",
        "0.2",
        "--ignore-failure",
        "--experiment",
        "t",
        "--store",
        store,
        "-v",
        "fast=true",
        "-v",
        "slow=sleep 5",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "3 failed run(s) recorded as failed" in done.stderr
    with open_store(store) as s:
        assert {f["status"] for f in s.failed_runs("t")} == {"timeout"}
    with pytest.raises(InputError, match="'t:slow' has no successful run"):
        resolve_variant("t:slow", store)


def test_a_failing_hook_stops_with_a_clear_message(tmp_path):
    done = abstat(
        "run",
        "-n",
        "3",
        "--store",
        str(tmp_path / "s.db"),
        "-v",
        "a=true",
        "--prepare",
        "sh -c 'echo no space left >&2; exit 7'",
        "--no-progress",
    )
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert "--prepare hook" in line and "failed for variant 'a', run 1: exit status 7" in line
    assert "no space left" in line


def test_background_load_is_started_and_its_group_stopped(tmp_path):
    pidfile = tmp_path / "bg"
    done = abstat(
        "run",
        "-n",
        "3",
        "--store",
        str(tmp_path / "s.db"),
        "-v",
        "a=true",
        "--no-progress",
        "--background",
        f"sh -c 'echo $$ > {pidfile}; sleep 60 & echo $! >> {pidfile}; wait'",
    )
    assert done.returncode == 0, done.stderr
    pids = [int(x) for x in pidfile.read_text().split()]
    assert len(pids) == 2 and wait_gone(pids) == []


def test_ctrl_c_stops_cleanly_with_a_partial_report(tmp_path):
    store = str(tmp_path / "s.db")
    pids = tmp_path / "pids"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "1000",
            "--shell",
            "--experiment",
            "c",
            "--store",
            store,
            "-v",
            f"a=echo $$ >> {pids}; sleep 0.05",
            "-v",
            f"b=echo $$ >> {pids}; sleep 0.06",
            "--no-progress",
            "--background",
            f"sh -c 'echo $$ > {tmp_path / 'bg'}; exec sleep 60'",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 8):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "partial report follows" in err
    assert re.search(r"^wall\s+\S+ ms → \S+ ms ", out, re.M)  # the comparison of what was measured
    assert wait_gone([int(p) for p in pids.read_text().split()]) == []
    with open_store(store) as s:
        assert s.invocations("c")[0]["status"] == "interrupted"
    assert wait_gone([int((tmp_path / "bg").read_text())]) == []  # the background load is stopped too


def test_comparison_warns_when_machine_records_differ(tmp_path):
    path = str(tmp_path / "s.db")
    base = {"hostname": "h", "boot_id": "b1", "microcode": "0x1", "governor": "performance"}
    with open_store(path) as store:
        for record, variant, values in [
            (base, "before", [10.0, 11, 12, 10.5, 11.5]),
            (dict(base, boot_id="b2", microcode="0x2"), "after", [9.0, 9.5, 8.5, 9.2, 8.8]),
        ]:
            inv = store.start_invocation("x", record)
            for i, v in enumerate(values):
                store.add_run(
                    inv,
                    variant=variant,
                    command="c",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=v,
                    values={"wall": [v]},
                    units={"wall": "s"},
                )
        text = comparison_report(store, "x")
        document = json.loads(comparison_report(store, "x", fmt="json"))
    # one footnote per kind of warning (issue 10), naming what differs and the variant
    assert "measured under different machine records (boot, microcode): wall after" in text
    assert document["machine_warnings"] == [
        "before and after were measured under different machine records: boot, microcode"
    ]
    codes = [w["code"] for w in document["metrics"]["wall"]["comparisons"]["comparisons"][0]["warnings"]]
    assert "machine-differs" in codes


def test_demo_runs_a_real_ab_experiment(tmp_path):
    store = str(tmp_path / "demo.db")
    done = abstat("demo", "-n", "5", "--warmup", "0", "--store", store, "--format", "json", "--seed", "1")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {"wall", "sys", "loop_ns"} <= set(report["metrics"])
    assert [len(g) for g in resolve_variant("demo:after", store, metric="loop_ns")] == [5]


def test_sigterm_stops_like_ctrl_c_and_stops_the_background_group(tmp_path):
    store = str(tmp_path / "s.db")
    bg = tmp_path / "bg"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "1000",
            "--experiment",
            "t",
            "--store",
            store,
            "-v",
            "a=sleep 0.02",
            "--no-progress",
            "--background",
            f"sh -c 'echo $$ > {bg}; exec sleep 60'",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not bg.exists():
        time.sleep(0.05)
    time.sleep(0.3)
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert wait_gone([int(bg.read_text())]) == []
    with open_store(store) as s:
        assert s.invocations("t")[0]["status"] == "interrupted"


def test_perf_request_reports_what_the_machine_supports(tmp_path):
    import shutil

    if shutil.which("perf") is None:
        pytest.skip("perf is not installed")
    from abstat.box.runner import perf as perf_mod

    done = abstat("run", "-n", "2", "--perf", "--store", str(tmp_path / "s.db"), "-v", "a=true", "--no-progress")
    assert done.returncode == 0, done.stderr
    if perf_mod.probe().usable:
        assert "include perf stat itself" in done.stderr
        assert resolve_variant(f"{_only_experiment(tmp_path)}:a", str(tmp_path / "s.db"), metric="cycles")
    else:
        assert "perf stat reports <not supported> on this machine for cycles, instructions" in done.stderr


def _only_experiment(tmp_path) -> str:
    with open_store(str(tmp_path / "s.db")) as s:
        return s.experiment_names()[0]
