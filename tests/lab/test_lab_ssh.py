"""The lab against real sshd boxes that really "reboot" (tests/support/lab_sim.py).

Nothing is mocked at the SSH layer: abstat runs the system's ssh client
against one sshd per simulated machine, each in its own UTS, mount and PID
namespace with its own hostname and boot id.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from typing import Any

import pytest

from support import lab_sim, paths
from support.cli import run_abstat

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")

SRC = paths.SRC


@pytest.fixture
def lab():
    boxes = lab_sim.Lab(["alpha", "beta"], reboot_delay=0.5)
    try:
        boxes.start()
        yield boxes
    finally:
        boxes.close()  # every sshd and namespace dies here, whatever the test did


def abstat(lab: lab_sim.Lab, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_abstat(*args, env=lab.env(), timeout=timeout)


def boot_options(lab: lab_sim.Lab, variants: dict[str, str] | None = None) -> list[str]:
    """--boot like ``grub-reboot ENTRY && reboot`` and --check like ``uname -r | grep``."""
    entries = variants or {"before": "before", "after": "after"}
    options: list[str] = []
    for variant, entry in entries.items():
        options += [
            "--boot",
            f"{variant}={lab.reboot} {entry}",
            "--check",
            f"{variant}=grep -qx {variant} {lab.box}/current",
        ]
    return options


def measured(lab: lab_sim.Lab) -> list[str]:
    """Each variant prints which kernel the box runs (1 before, 2 after): proof of where it ran."""
    command = f"echo kernel=$(tr -d '\\n' < {lab.box}/current | sed 's/before/1/;s/after/2/')"
    return ["--shell", "-v", f"before={command}", "-v", f"after={command}", "--metric", "kernel=kernel=(\\d+)"]


def invocations(store: str) -> list[dict]:
    db = sqlite3.connect(store)
    try:
        rows = db.execute("SELECT id, status, hostname, boot_id, machine, settings FROM invocations ORDER BY id")
        result = []
        for inv_id, status, hostname, boot_id, machine, settings in rows.fetchall():
            labels = dict(db.execute("SELECT key, value FROM labels WHERE invocation_id = ?", (inv_id,)))
            runs = db.execute(
                "SELECT v.name, r.iteration, r.status FROM runs r JOIN variants v ON v.id = r.variant_id"
                " WHERE r.invocation_id = ? ORDER BY r.position",
                (inv_id,),
            ).fetchall()
            kernels = [
                v
                for (v,) in db.execute(
                    "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.invocation_id = ?"
                    " AND s.metric = 'kernel'",
                    (inv_id,),
                )
            ]
            result.append(
                {
                    "id": inv_id,
                    "status": status,
                    "hostname": hostname,
                    "boot_id": boot_id,
                    "machine": json.loads(machine),
                    "lab": json.loads(settings).get("lab"),
                    "labels": labels,
                    "runs": runs,
                    "kernels": kernels,
                }
            )
        return result
    finally:
        db.close()


def test_two_hosts_two_variants_several_boots_then_report_by_host(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    result = abstat(
        lab,
        "run",
        "--store",
        store,
        "--experiment",
        "hcall",
        "--host",
        "alpha",
        "--host",
        "b=beta",
        *measured(lab),
        *boot_options(lab),
        "--boots",
        "2",
        "-n",
        "3",
        "--seed",
        "7",
        "--boot-timeout",
        "20",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    rows = invocations(store)
    for label, name in (("alpha", "alpha"), ("b", "beta")):
        mine = [r for r in rows if r["labels"].get("host") == label]
        assert len(mine) == 4  # 2 variants x 2 boots
        assert all(r["status"] == "complete" for r in mine)
        # every boot is a new boot of that box, recorded with the record read on the box itself
        assert len({r["boot_id"] for r in mine}) == 4
        assert all(r["machine"]["hostname"] == name and r["machine"]["boot_id"] == r["boot_id"] for r in mine)
        # each block ran in the kernel it was meant for, 3 runs of the booted variant only
        for r in mine:
            variant = r["lab"]["boot_variant"]
            assert [v for v, _, _ in r["runs"]] == [variant] * 3
            assert r["kernels"] == [1.0 if variant == "before" else 2.0] * 3
        order = [r["lab"]["boot_variant"] for r in mine]
        assert sorted(order[:2]) == sorted(order[2:]) == ["after", "before"]  # balanced rounds
        from abstat.lab.config import boot_order

        assert order == boot_order(["before", "after"], 2, 7, label)  # the seeded order, as stored
    assert lab.boxes["alpha"].boots == lab.boxes["beta"].boots == 5  # the first boot + 4 asked for

    report = abstat(
        lab,
        "report",
        "--store",
        store,
        "--by",
        "variant",
        "--rows",
        "host",
        "--metric",
        "kernel",
        "--baseline",
        "before",
        "--format",
        "csv",
    )
    assert report.returncode == 0, report.stderr
    table = list(csv.DictReader(io.StringIO(report.stdout)))
    compared = [row for row in table if row["kind"] == "cell" and row["column"] == "after"]
    assert sorted(row["host"] for row in compared) == ["alpha", "b"], report.stdout  # one row per host
    for row in compared:
        assert "2 vs 2" in row["method"]  # the boots are the independent unit
        assert float(row["delta_pct"]) == 100.0  # kernel 2 against kernel 1


def test_host_that_never_returns_stops_alone_then_resume(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    beta = lab.boxes["beta"]
    beta.down_after = beta.boots + 1  # its second boot never happens
    options = [
        "--experiment",
        "x",
        "--host",
        "alpha",
        "--host",
        "beta",
        *measured(lab),
        *boot_options(lab),
        "--boots",
        "2",
        "-n",
        "2",
        "--seed",
        "3",
        "--no-progress",
    ]
    result = abstat(lab, "run", "--store", store, *options, "--boot-timeout", "8")
    assert result.returncode == 2
    failures = [line for line in result.stderr.splitlines() if "beta" in line and "failed" in line]
    assert len(failures) == 1 and "did not come back" in failures[0] and "within 8 s" in failures[0]
    assert "Traceback" not in result.stderr
    rows = invocations(store)
    alpha_rows = [r for r in rows if r["labels"]["host"] == "alpha"]
    beta_rows = [r for r in rows if r["labels"]["host"] == "beta"]
    assert len(alpha_rows) == 4 and all(r["status"] == "complete" and len(r["runs"]) == 2 for r in alpha_rows)
    assert len(beta_rows) == 1 and beta_rows[0]["status"] == "complete" and len(beta_rows[0]["runs"]) == 2

    beta.power_on()
    resumed = abstat(lab, "run", "--resume", "x", "--yes", "--store", store, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "alpha: 4 boot(s) already stored, 0 to go" in resumed.stderr
    rows = invocations(store)
    assert len([r for r in rows if r["labels"]["host"] == "alpha"]) == 4  # nothing repeated
    beta_rows = [r for r in rows if r["labels"]["host"] == "beta"]
    assert len(beta_rows) == 4 and all(r["status"] == "complete" for r in beta_rows)
    assert sorted(r["lab"]["boot"] for r in beta_rows) == [0, 1, 2, 3]
    for r in beta_rows:
        assert r["kernels"] == [1.0 if r["lab"]["boot_variant"] == "before" else 2.0] * 2


def test_connection_killed_mid_block_keeps_runs_and_continues(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    counter = f"{lab.box}/count"
    # The third run kills every ssh session of the box (the children of its sshd, PID 1 there).
    command = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
        "if [ $n = 3 ]; then pkill -KILL -P 1; sleep 5; fi; echo value=$n"
    )
    result = abstat(
        lab,
        "run",
        "--store",
        store,
        "--experiment",
        "k",
        "--host",
        "alpha",
        "--shell",
        "-v",
        f"a={command}",
        "-n",
        "6",
        "--metric",
        "value=value=(\\d+)",
        "--boot-timeout",
        "20",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    rows = invocations(store)
    assert len(rows) == 1 and rows[0]["status"] == "complete"
    runs = rows[0]["runs"]
    assert sorted(iteration for _, iteration, _ in runs) == list(range(6))  # each run once, none lost
    assert all(status == "ok" for _, _, status in runs)
    assert lab.boxes["alpha"].read("count") == "7"  # the killed run was made again, the others were not
    assert lab.boxes["alpha"].boots == 1  # same boot: one run group


def test_wrong_variant_booted_is_refused_by_check(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    # "after" boots the wrong GRUB entry: the box comes back running "before"
    result = abstat(
        lab,
        "run",
        "--store",
        store,
        "--experiment",
        "w",
        "--host",
        "alpha",
        *measured(lab),
        *boot_options(lab, {"before": "before", "after": "before"}),
        "-n",
        "2",
        "--boot-timeout",
        "20",
        "--no-progress",
    )
    assert result.returncode == 2
    refusals = [line for line in result.stderr.splitlines() if "refused by --check for 'after'" in line]
    assert len(refusals) == 2  # tried twice
    assert "nothing from these boots is recorded" in result.stderr
    rows = invocations(store)
    assert all(r["lab"]["boot_variant"] == "before" for r in rows)  # nothing from a refused boot
    assert all(r["kernels"] == [1.0, 1.0] for r in rows)


def test_unreachable_host_is_one_line(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    box = lab.boxes["beta"]
    box.kill()
    result = abstat(
        lab,
        "run",
        "--store",
        store,
        "--host",
        "beta",
        "--host",
        "alpha",
        "-v",
        "a=true",
        "-n",
        "2",
        "--boot-timeout",
        "2",
        "--no-progress",
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("abstat run: host beta failed")]
    assert len(lines) == 1 and "cannot reach the host" in lines[0], result.stderr
    rows = invocations(store)
    assert [r["labels"]["host"] for r in rows] == ["alpha"] and len(rows[0]["runs"]) == 2


def _control_dirs(pid: int) -> set[str]:
    """The directories of the ControlPath options of the ssh processes under ``pid`` (its descendants)."""
    parents: dict[int, int] = {}
    argv: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                parents[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv[int(entry)] = handle.read().decode(errors="replace").split("\0")
        except (OSError, IndexError, ValueError):
            continue
    found: set[str] = set()
    for child in parents:
        ancestor = parents[child]
        while ancestor not in (0, 1, pid) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == pid:
            found |= {os.path.dirname(a.split("=", 1)[1]) for a in argv.get(child, []) if a.startswith("ControlPath=")}
    return found


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_interrupt_keeps_runs_and_leaves_no_process(lab, tmp_path, signum):
    import glob
    import signal
    import time

    import random

    store = str(tmp_path / "lab.db")
    counter = f"{lab.box}/count"
    pause = f"sleep 31.{random.randrange(10**6):06d}"  # no other test's (another worker's, checkout's)
    command = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
        f"if [ $n -ge 3 ]; then exec {pause}; fi"
    )
    env = lab.env()
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["TMPDIR"] = str(tmp_path / ("a long CI workspace path with spaces and %h %% " + "x" * 80))
    os.makedirs(env["TMPDIR"])  # the control sockets must not go there (too long, a space, a %)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "--store",
            store,
            "--experiment",
            "i",
            "--host",
            "alpha",
            "--shell",
            "-v",
            f"a={command}",
            "-n",
            "5",
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while lab.boxes["alpha"].read("count") != "3" and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        control_dirs = _control_dirs(process.pid)  # this abstat's, not another process's of host "alpha"
        process.send_signal(getattr(signal, signum))
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "--resume i" in err
    rows = invocations(store)
    assert len(rows) == 1 and rows[0]["status"] == "interrupted" and len(rows[0]["runs"]) == 2
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", pause], capture_output=True, text=True)
    assert left.stdout.strip() == ""  # the run on the box was killed with its process group
    masters = subprocess.run(["pgrep", "-f", f"ssh -F {lab.ssh_config}"], capture_output=True, text=True)
    assert masters.stdout.strip() == ""  # no ssh master or session left behind
    from abstat.lab.ssh import SshHost

    name = os.path.basename(SshHost("alpha", "alpha", "/").control_path)[: -len(".sock")]
    assert control_dirs and all(glob.glob(f"{d}/{name}.*") == [] for d in control_dirs), control_dirs
    # its control socket and log removed
    assert os.listdir(env["TMPDIR"]) == []


def test_boot_loop_guard_stops_a_host_that_reboots_unasked(lab, tmp_path):
    store = str(tmp_path / "lab.db")
    counter = f"{lab.box}/count"
    # From its second run on, the benchmark crashes the box (a reboot nobody asked for).
    command = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
        f"if [ $n -ge 2 ]; then touch {lab.box}/reboot-request; sleep 10; fi; echo ok"
    )
    result = abstat(
        lab,
        "run",
        "--store",
        store,
        "--experiment",
        "loop",
        "--host",
        "alpha",
        "--shell",
        "-v",
        f"a={command}",
        "-n",
        "3",
        *boot_options(lab, {"a": "a"}),
        "--boot-timeout",
        "20",
        "--no-progress",
    )
    assert result.returncode == 2
    failures = [line for line in result.stderr.splitlines() if line.startswith("abstat run: host alpha failed")]
    assert len(failures) == 1 and "rebooted 2 time(s) without being asked (boot loop?)" in failures[0]
    rows = invocations(store)
    assert [r["status"] for r in rows] == ["interrupted", "interrupted"]
    assert len(rows[0]["runs"]) == 1  # the run before the crash is kept
    assert lab.boxes["alpha"].boots == 5  # power-on, asked, crash, asked again, crash: then it stops asking


def test_a_greeting_login_script_and_after_booted_first_change_nothing(tmp_path):
    """A ``.bashrc`` that echoes a welcome before every command (the boot id is then not the whole
    output), and a seeded order that boots ``after`` first: the boots count, and the baseline is
    still the first -v."""
    from abstat.lab.config import boot_order

    seed = next(s for s in range(100) if boot_order(["before", "after"], 1, s, "alpha")[0] == "after")
    boxes = lab_sim.Lab(["alpha"], reboot_delay=0.3, greeting="Welcome to alpha 0f1e2d3c (have a nice day)")
    try:
        boxes.start()
        store = str(tmp_path / "lab.db")
        result = abstat(
            boxes,
            "run",
            "--store",
            store,
            "--experiment",
            "greet",
            "--host",
            "alpha",
            *measured(boxes),
            *boot_options(boxes),
            "-n",
            "2",
            "--seed",
            str(seed),
            "--boot-timeout",
            "20",
            "--no-progress",
        )
        assert result.returncode == 0, result.stderr
        rows = invocations(store)
        assert [r["lab"]["boot_variant"] for r in rows] == ["after", "before"]
        assert all(r["status"] == "complete" and len(r["runs"]) == 2 for r in rows)
        assert len({r["boot_id"] for r in rows}) == 2 and boxes.boxes["alpha"].boots == 3
        assert "baseline before" in result.stdout and "after vs before" in result.stdout, result.stdout
        db = sqlite3.connect(store)
        assert [name for (name,) in db.execute("SELECT name FROM variants ORDER BY id")] == ["before", "after"]
        db.close()
    finally:
        boxes.close()


def test_a_leased_box_makes_a_second_experiment_wait_or_with_no_wait_stop(lab, tmp_path):
    import time

    store = str(tmp_path / "lab.db")
    env = lab.env()
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    box, log = lab.box, tmp_path / "third.err"

    def start(*args: str, stderr: Any = subprocess.PIPE) -> subprocess.Popen:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "abstat",
                "run",
                "--store",
                store,
                "--host",
                "alpha",
                "--shell",
                "-n",
                "1",
                "--no-progress",
                *args,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )

    def until(condition: Any) -> None:
        deadline = time.monotonic() + 60
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.05)

    first = start(
        "--experiment",
        "first",
        "-v",
        f"a=touch {box}/started; while [ ! -e {box}/release ]; do sleep 0.05; done; touch {box}/first-done",
    )
    waiting = None
    try:
        until(lambda: lab.boxes["alpha"].read("started") is not None)
        refused = abstat(
            lab,
            "run",
            "--store",
            store,
            "--host",
            "alpha",
            "--experiment",
            "second",
            "--no-wait",
            "-v",
            "a=true",
            "-n",
            "1",
            "--no-progress",
        )
        with open(log, "w") as handle:
            waiting = start("--experiment", "third", "-v", f"a=test -e {box}/first-done", stderr=handle)
        until(lambda: "waiting for the box" in log.read_text())
        open(os.path.join(lab.boxes["alpha"].dir, "release"), "w").close()
        out, err = first.communicate(timeout=60)
        assert first.returncode == 0, err
        waiting.communicate(timeout=60)
    finally:
        open(os.path.join(lab.boxes["alpha"].dir, "release"), "w").close()
        for process in (first, waiting):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    err = log.read_text()
    assert refused.returncode == 2, refused.stderr
    failed = [line for line in refused.stderr.splitlines() if line.startswith("abstat run: host alpha failed:")]
    assert len(failed) == 1 and "the box is leased to experiment 'first' of " in failed[0], refused.stderr
    assert failed[0].endswith("(--no-wait)")
    assert waiting.returncode == 0, err  # it measured only once the first had finished
    assert "abstat run: alpha: waiting for the box: leased to experiment 'first' of " in err
