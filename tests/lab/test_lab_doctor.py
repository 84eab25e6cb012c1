"""``abstat doctor --host``, ``abstat noise --host`` and the doctor's findings of
``abstat run --host``, against real sshd boxes (tests/support/lab_sim.py).

The boxes share this machine's kernel, so its /proc and /sys: the checks run
on a box must find what they find locally.  To prove they really ran on the
box, each box gets its own saved /proc and /sys (the fixtures of
tests/data/doctor) in its own directory, which only that box sees at
``lab.box``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess

import pytest

from support import lab_sim, paths
from support.cli import run_abstat

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")

TESTS = str(paths.TESTS)
FIXTURES = os.path.join(TESTS, "data", "doctor")
# Checks whose evidence changes from one moment (or PID namespace) to the next: the load, swap
# traffic, busy siblings, the steal time, and the processes a box sees (irqbalance counts them).
VOLATILE_EVIDENCE = {"load", "swap", "smt", "hypervisor", "irqbalance"}
VOLATILE_STATUS = {"load", "swap", "smt"}


@pytest.fixture(scope="module")
def lab():
    boxes = lab_sim.Lab(["alpha", "beta"], reboot_delay=0.5)
    try:
        for name, fixture in (("alpha", "server"), ("beta", "laptop")):
            shutil.copytree(
                os.path.join(FIXTURES, fixture), os.path.join(boxes.boxes[name].dir, "saved"), symlinks=True
            )
        boxes.start()
        yield boxes
    finally:
        boxes.close()


def abstat(lab: lab_sim.Lab | None, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return run_abstat(*args, env=lab.env() if lab is not None else None, timeout=timeout)


def local_checks(*args: str) -> list[dict]:
    result = abstat(None, "doctor", "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_each_host_checks_its_own_files_and_finds_what_a_local_run_finds(lab):
    result = abstat(
        lab, "doctor", "--host", "alpha", "--host", "b=beta", "--root", f"{lab.box}/saved", "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    documents = json.loads(result.stdout)
    assert [d["host"] for d in documents] == ["alpha", "b"]
    assert all(set(d) == {"host", "checks"} for d in documents)
    for document in documents:
        assert all(set(check) == {"name", "status", "evidence", "fix"} for check in document["checks"])
    # lab.box is each box's own directory: alpha saved the server's files, beta the laptop's
    assert documents[0]["checks"] == local_checks("--root", os.path.join(FIXTURES, "server"))
    assert documents[1]["checks"] == local_checks("--root", os.path.join(FIXTURES, "laptop"))
    assert documents[0]["checks"] != documents[1]["checks"]


def test_real_proc_and_sys_on_the_boxes_equal_a_local_run(lab):
    result = abstat(lab, "doctor", "--host", "alpha", "--host", "beta", "--format", "json", "--interval", "0.1")
    assert result.returncode == 0, result.stderr
    local = {check["name"]: check for check in local_checks("--interval", "0.1")}
    for document in json.loads(result.stdout):
        remote = {check["name"]: check for check in document["checks"]}
        assert list(remote) == list(local)
        for name, check in remote.items():
            if name not in VOLATILE_STATUS:
                assert check["status"] == local[name]["status"], (document["host"], check, local[name])
            if name not in VOLATILE_EVIDENCE:
                assert check == local[name], document["host"]
        # the box's own PID namespace: its irqbalance check saw only the box's few processes
        seen = int(remote["irqbalance"]["evidence"].split(" among ")[1].split()[0])
        assert seen < int(local["irqbalance"]["evidence"].split(" among ")[1].split()[0])


def test_an_unreachable_host_is_one_line_and_the_others_are_still_checked(lab):
    unreachable = "ghost=ssh://root@127.0.0.1:1"  # loopback, nothing listens on port 1
    result = abstat(
        lab, "doctor", "--host", "alpha", "--host", unreachable, "--only", "aslr", "--connect-timeout", "10"
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("abstat doctor: host ghost: cannot reach the host: ")
    assert "== host alpha (alpha) ==" in result.stdout and "ghost" not in result.stdout
    local = abstat(None, "doctor", "--only", "aslr")
    assert result.stdout.split("==\n", 1)[1] == local.stdout  # the section is the local report

    as_json = abstat(lab, "doctor", "--host", unreachable, "--host", "beta", "--format", "json", "--only", "aslr")
    assert as_json.returncode == 2
    documents = json.loads(as_json.stdout)
    assert documents[0]["host"] == "ghost" and documents[0]["checks"] == [] and documents[0]["error"]
    assert documents[1] == {"host": "beta", "checks": local_checks("--only", "aslr")}


def test_doctor_host_refuses_tuning_in_one_line(lab):
    result = abstat(lab, "doctor", "--host", "alpha", "--tune")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--tune changes this machine only" in result.stderr


def _runs(store: str, experiment: str) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT v.name, s.value, i.hostname, i.machine, (SELECT value FROM labels l WHERE"
            " l.invocation_id = i.id AND l.key = 'host') FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " JOIN invocations i ON i.id = r.invocation_id WHERE e.name = ? AND s.metric = 'x'"
            " AND r.status = 'ok'",
            (experiment,),
        ).fetchall()


def test_noise_on_a_host_end_to_end(lab, tmp_path):
    store = str(tmp_path / "abstat.db")
    command = ["--shell", "--metric", r"x=x=\s*(\d+)", "--", "echo x=$(od -An -N2 -tu2 /dev/urandom)"]
    result = abstat(
        lab,
        "noise",
        "-n",
        "8",
        "--host",
        "alpha",
        "--store",
        store,
        "--experiment",
        "nz",
        "--seed",
        "5",
        "--no-progress",
        "--format",
        "json",
        *command,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["host"] == "alpha" and report["experiment"] == "nz"
    runs = _runs(store, "nz")
    assert len(runs) == 16 and {(r[2], r[4]) for r in runs} == {("alpha", "alpha")}  # the box's hostname
    assert all("doctor" in json.loads(r[3]) for r in runs)
    metric = next(m for m in report["metrics"] if m["metric"] == "x")
    values = [r[1] for r in runs]
    assert metric["runs"] == {"a": 8, "b": 8}
    assert metric["mean"] == pytest.approx(statistics.fmean(values))
    assert metric["stddev"] == pytest.approx(statistics.stdev(values))

    again = abstat(
        lab, "noise", "--experiment", "nz", "--host", "alpha", "--store", store, "--seed", "5", "--format", "json"
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["metrics"] == report["metrics"]
    other = abstat(lab, "noise", "--experiment", "nz", "--host", "beta", "--store", store)
    assert other.returncode == 2 and "experiment 'nz' has no runs of host 'beta'" in other.stderr


def test_run_on_a_host_records_the_doctor_findings_and_warns(lab, tmp_path):
    store = str(tmp_path / "abstat.db")
    result = abstat(
        lab,
        "run",
        "--host",
        "alpha",
        "--host",
        "beta",
        "--store",
        store,
        "--experiment",
        "r",
        "-v",
        "a=true",
        "-n",
        "2",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    local = {check["name"]: check for check in local_checks("--no-perf")}
    with sqlite3.connect(store) as db:
        machines = [json.loads(m) for (m,) in db.execute("SELECT machine FROM invocations")]
    assert sorted(m["hostname"] for m in machines) == ["alpha", "beta"]
    for record in machines:
        assert set(record["doctor"]) == set(local)
        for name, finding in record["doctor"].items():
            if name not in VOLATILE_STATUS | {"perf-counters"}:
                assert finding["status"] == local[name]["status"], name
    from abstat.box.doctor import CHECKS, TIME

    for_time = {check.name for check in CHECKS if TIME in check.matters_for} - VOLATILE_STATUS
    warned = {name for name, finding in local.items() if finding["status"] == "warn" and name in for_time}
    for host in ("alpha", "beta"):
        notes = [
            line
            for line in result.stderr.splitlines()
            if line.startswith(f"abstat run: {host}: note: abstat doctor warns: ")
        ]
        assert {line.split("warns: ")[1].split(":")[0] for line in notes} >= warned


def _python_3_8() -> str | None:
    import glob

    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8.*/bin/python3")))
    return found[0] if found else shutil.which("python3.8")


@pytest.mark.skipif(_python_3_8() is None, reason="no Python 3.8 on this machine")
def test_the_shipped_checks_run_on_python_3_8():
    """The oldest Python a box may have: the hello's findings and a doctor request, checked in full
    (the hello records an error instead of failing, so a 3.8 problem would hide there)."""
    from abstat.lab import bundle

    process = subprocess.run(
        [_python_3_8(), "-I", "-c", bundle.BOOTSTRAP],
        cwd="/",
        capture_output=True,
        input=bundle.payload() + b'{"doctor": {"interval": 0}}\n',
        timeout=60,
    )
    assert process.returncode == 0, process.stderr
    hello, answer = [json.loads(line) for line in process.stdout.splitlines()]
    assert hello["hello"]["python"].startswith("3.8.")
    assert "error" not in hello["hello"]["machine"]["doctor"]
    assert [check["name"] for check in answer["doctor"]] == [c["name"] for c in local_checks("--interval", "0")]
