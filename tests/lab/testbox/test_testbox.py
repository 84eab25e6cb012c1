"""``abstat testbox`` end to end: QEMU guests booting Debian's kernel, rebooted for real.

Two boxes for the session (tests/lab/testbox/conftest.py, shared with test_testbox_more.py; their image is
cached between runs under ``~/.cache/abstat/testbox``, the boxes in a temporary directory): ``BOX``
(``--smp 2``, ``-cpu max``) and ``SKY`` (``-cpu Skylake-Client-v4``).  ``doctor``, ``--trace`` and
``--isolate`` (a cgroup v2 cpuset partition) run in BOX's first boot, then seed 000 reboots both.  Seed 000's
experiment runs as a user would: a syscall's cost in raw TSC cycles (tests/data/testbox/getppid_cycles.c,
built here and copied to the boxes), pti=on against pti=off on the two machines at once (``--host BOX --host
SKY``: one report, a row per machine), each boot made GRUB-like (``testbox-next-boot pti=on && reboot``:
QEMU boots the entry the box chose; under TCG here the faster reboot), and an A/A variant on BOX booted by
``kexec`` with ``--reuse-cmdline --append``.  What each run measured is checked through the machine record
read on the box in that boot (``/proc/cmdline``, the boot id, the CPU model).  The A/A's experiment loses
the box (QEMU killed during a boot), brings it back and resumes.

Sized for the suite's budget: one run per boot (boots are the unit; a run is 20 minima of 200 calls, and
pti=on costs about twenty times pti=off under TCG), 4 boots a side on each machine for the A/B (in parallel)
and 2 for the A/A, one run per variant for ``--trace``.  Seed 002's build and ``bisect --host --boot`` are
test_testbox_more.py's, on the same boxes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from support.testbox import (
    BOX,
    CPU_MODEL,
    GROUP,
    KEXEC,
    KEXEC_E,
    PTI_ENABLED,
    PTI_OFF,
    SKY,
    abstat,
    box_processes,
    check_booted,
    missing,
    stored,
)

REASON = missing()
pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=f"test boxes need QEMU and Debian's tools: {REASON}"),
    pytest.mark.xdist_group(GROUP),
]


def box_ssh(env: dict, command: str, **kwargs) -> subprocess.CompletedProcess:
    from support.testbox import box_ssh as ssh

    return ssh(env, BOX, command, **kwargs)


@pytest.fixture
def box(guests):
    return guests


def test_list_and_doctor_read_the_real_machine(box):
    listed = json.loads(abstat("testbox", "list", "--format", "json", env=box).stdout)
    assert sorted((item["name"], item["state"], item["accel"]) for item in listed) == sorted(
        [(BOX, "running", "tcg"), (SKY, "running", "tcg")]
    )
    assert all(1024 <= item["port"] <= 65535 for item in listed)
    doctor = abstat("doctor", "--host", BOX, "--format", "json", "--connect-timeout", "300", env=box, timeout=600)
    assert doctor.returncode in (0, 1), doctor.stderr
    checks = {check["name"]: check for check in json.loads(doctor.stdout)[0]["checks"]}
    assert "QEMU" in json.dumps(checks["hypervisor"])
    uname = box_ssh(box, "uname -r; cat /proc/cpuinfo").stdout.decode()
    assert uname.split()[0].endswith("-cloud-amd64") and "QEMU TCG CPU" in uname


def test_seed_003_trace_a_real_kernel_function_in_the_guest(box, tmp_path):
    """``--trace`` attaches bpftrace's kprobe to the guest kernel's ``__x64_sys_getppid``: its calls
    are exactly the benchmark's own (lines x calls per line), and it measured a time per call.  It runs in the
    box's first boot, where the second run once read no calls: abstat's repeated SIGINT killed bpftrace before
    it printed its counts (tests/box/runner/test_trace_stop.py)."""
    store = str(tmp_path / "trace.db")
    run = abstat(
        "run",
        "--experiment",
        "trace",
        "--host",
        BOX,
        "--store",
        store,
        "--no-progress",
        "--format",
        "json",
        "-v",
        "small=/root/getppid_cycles 5 100",
        "-v",
        "large=/root/getppid_cycles 10 100",
        "-n",
        "1",
        "--trace",
        "__x64_sys_getppid",
        env=box,
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "select variant, metric, value from abstat_samples where metric like '__x64_sys_getppid.%'"
        ).fetchall()
    calls = sorted((name, value) for name, metric, value in rows if metric.endswith(".calls"))
    assert calls == [("large", 1000), ("small", 500)]
    assert max(value for name, metric, value in rows if metric.endswith(".ns")) > 0  # once 0.0 under TCG


STATE = (
    "cat /sys/fs/cgroup/cgroup.subtree_control; ls -d /sys/fs/cgroup/abstat.isolated-* 2>/dev/null; "
    "cat /proc/irq/*/smp_affinity_list /proc/irq/default_smp_affinity 2>/dev/null; "
    "grep Cpus_allowed_list /proc/1/status"
)
BENCH = """#!/bin/sh
grep Cpus_allowed_list /proc/self/status >> /tmp/iso/bench.txt
grep Cpus_allowed_list /proc/$(cat /tmp/iso/other.pid)/status >> /tmp/iso/other.txt
cat /sys/fs/cgroup/abstat.isolated-*/cpuset.cpus.partition >> /tmp/iso/partition.txt
echo "t: 1"
"""
LOAD = (
    "while :; do grep Cpus_allowed_list /proc/self/status > /tmp/iso/load.tmp; "
    "mv /tmp/iso/load.tmp /tmp/iso/load.txt; sleep 0.05; done"
)


SEEN = ("bench.txt", "other.txt", "load.txt", "partition.txt")
SPLIT = "----abstat-test----"  # between the parts of one ssh command's output (one ssh connection for several reads)


def _seen(text: str) -> set[str]:
    return set(text.split()) - {"Cpus_allowed_list:"}


def test_the_measured_cpu_is_a_cgroup_v2_partition_and_everything_is_restored(box, tmp_path):
    """``run --cpus 1 --isolate`` on the box once its init mounted the unified cgroup v2 hierarchy (as systemd
    does on current distributions): the measured CPU becomes a cgroup v2 cpuset partition (abstat.box.partition).
    This machine's own kernel binds the cpuset controller to its v1 hierarchy, so only a guest can show it.  What
    each process may run on is read from the guest's kernel (``Cpus_allowed_list``): the benchmark's own, an
    unrelated process started before the run, the run's background load; after the run every cgroup, CPU list
    and IRQ affinity is as before.  (Seed 000's boots after it start without the mount.)"""
    setup = box_ssh(
        box,
        "busybox mount -t cgroup2 cgroup2 /sys/fs/cgroup && cat /sys/fs/cgroup/cgroup.controllers && "
        "rm -rf /tmp/iso && mkdir /tmp/iso && cat > /tmp/iso/bench.sh && "
        "chmod +x /tmp/iso/bench.sh && (setsid sleep 600 </dev/null >/dev/null 2>&1 & "
        f"echo $! > /tmp/iso/other.pid) && echo {SPLIT} && {{ {STATE}; }}",
        input=BENCH.encode(),
    )
    assert setup.returncode == 0, setup.stderr
    controllers, before = setup.stdout.decode().split(SPLIT + "\n")
    assert "cpuset" in controllers.split(), controllers
    done = abstat(
        "run",
        "--experiment",
        "iso",
        "--host",
        BOX,
        "--store",
        str(tmp_path / "s.db"),
        "-n",
        "2",
        "--cpus",
        "1",
        "--isolate",
        "--background",
        f"sh -c '{LOAD}'",
        "--no-progress",
        "-v",
        "a=/tmp/iso/bench.sh",
        "-v",
        "b=/tmp/iso/bench.sh",
        env=box,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reads = "".join(f"cat /tmp/iso/{name}; echo {SPLIT}; " for name in SEEN)
    after_run = box_ssh(
        box,
        f"{reads}{STATE}; grep Cpus_allowed_list /proc/$(cat /tmp/iso/other.pid)/status; "
        "kill $(cat /tmp/iso/other.pid)",
    ).stdout.decode()
    *parts, after = after_run.split(SPLIT + "\n")
    seen = dict(zip(SEEN, map(_seen, parts), strict=True))
    assert seen["bench.txt"] == {"1"}  # the benchmark: the measured CPU alone
    assert seen["other.txt"] == {"0"}  # a process started before the run: off it
    assert seen["load.txt"] == {"0"}  # the run's background load: off it
    assert seen["partition.txt"] == {"root"}  # a partition the kernel accepted
    shown = abstat("show", "iso", "--store", str(tmp_path / "s.db"), env=box)
    assert "cgroup v2 cpuset partition" in shown.stdout + shown.stderr  # the box's note, stored with its boot
    assert after.startswith(before)  # no cgroup left, controllers and IRQs as before
    assert after[len(before) :].split() == ["Cpus_allowed_list:", "0-1"]


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.2)


def _complete_boots(store: str) -> int:
    try:
        with sqlite3.connect(store) as db:
            return db.execute("select count(*) from invocations where status = 'complete'").fetchone()[0]
    except sqlite3.Error:
        return 0


def _run_losing_the_box(box: dict, argv: list[str], store: str) -> str:
    """``argv`` run while QEMU is killed as the box makes its next boot once one more boot is stored (the
    power cord): its standard error."""
    directory = os.path.join(box["ABSTAT_TESTBOX_BOXES"], BOX)
    console = os.path.join(directory, "console.log")  # a new QEMU starts it again; kexec boots append to it

    def requests() -> int:
        with open(console, "rb") as source:
            return source.read().count(b"abstat-test-boot-requested")

    before, asked = _complete_boots(store), requests()
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=box)

    def asked_for_the_next_boot() -> bool:
        # every boot of the run is asked for (its --boot writes the mark first): the second mark, once a boot is
        # stored, is the next boot's.  (Taking the console's size when the boot was seen stored missed that mark
        # on a quiet machine: the run had asked for it within the 0.2 s poll, and the test waited 1,800 s.)
        assert run.poll() is None, "the run ended before its next boot was asked for"
        return _complete_boots(store) > before and requests() >= asked + 2

    try:
        _wait_for(asked_for_the_next_boot, 1800, "boot command after a stored boot")
        with open(os.path.join(directory, "qemu.pid")) as source:
            os.kill(int(source.read()), signal.SIGKILL)
        _, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 2, err[-3000:]
    return err


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2


def _report(store: str, env: dict, fmt: str, *more: str) -> subprocess.CompletedProcess:
    argv = ["report", "--store", store, "--by", "variant", "--rows", "host", "--metric", "cycles"]
    return abstat(*argv, "--baseline", "off", "--format", fmt, *more, env=env)


def _check_two_machines(store: str, env: dict) -> None:
    """One report, a row per machine: each compares its own 4 boots of pti=on against its 4 of pti=off
    (``ministat -A`` blocks in the email); every run's record names its box's CPU model."""
    runs = stored(store)
    for name, model in CPU_MODEL.items():
        mine = [row for row in runs if row["host"] == name]
        assert len(mine) == 8 and len({row["boot_id"] for row in mine}) == 8, (name, len(mine))
        for row in mine:
            check_booted(row, model, fresh=("off", "on"))
    table = _report(store, env, "csv")
    assert table.returncode == 0, table.stderr
    cells = [
        row for row in csv.DictReader(io.StringIO(table.stdout)) if row["kind"] == "cell" and row["column"] == "on"
    ]
    assert sorted(row["host"] for row in cells) == sorted(CPU_MODEL), table.stdout
    for row in cells:
        assert "4 vs 4" in row["method"] and float(row["delta_pct"]) > 100, row  # pti=on: many times slower
    email = _report(store, env, "email", "--ministat")
    assert email.returncode == 0, email.stderr
    assert all(name in email.stdout for name in CPU_MODEL) and email.stdout.count("Difference at") >= 2, email.stdout


def _compare(store: str, env: dict, host: str, *variants: str) -> dict:
    argv = ["compare", "--store", store, "--metric", "cycles", "--format", "json", "--where", f"host={host}"]
    return json.loads(abstat(*argv, *variants, env=env).stdout)["comparisons"][0]


def test_seed_000_pti_on_two_machines_across_grub_like_and_kexec_reboots_and_a_lost_box(box, tmp_path):
    """pti=on against pti=off on both machines at once, 4 boots each a side booted GRUB-like (experiment
    ``pti``: ``testbox-next-boot pti=on && reboot``, QEMU boots the box's choice; the faster reboot of the two
    here).  Then an A/A on BOX: pti=off booted by kexec in 2 boots of its own (experiment ``aa``), during which
    QEMU is killed as the box makes its next boot once one is stored: that boot "did not come back" (at once:
    abstat sees the box is down, it does not wait --boot-timeout), the box comes back with its disk (``testbox
    up``) and ``run --resume`` makes the remaining boot.  BOX's 10 boots and SKY's 8 (boots are the unit: 4 a
    side is the fewest whose interval can exclude 0; the A/A's 2 are compared by size, not by significance)."""
    assert box_ssh(box, "echo kept > /root/marker && sync").returncode == 0
    store = str(tmp_path / "pti.db")
    mark = "echo abstat-test-boot-requested >/dev/ttyS0; "
    common = [
        sys.executable,
        "-m",
        "abstat",
        "run",
        "--store",
        store,
        "--no-progress",
        "-n",
        "1",
        "--metric",
        r"cycles=^(\d+)$:cycles",
        "--boot-timeout",
        "1200",
    ]
    ab = subprocess.run(
        [
            *common,
            "--host",
            BOX,
            "--host",
            SKY,
            "--experiment",
            "pti",
            "--seed",
            "7",
            "-v",
            "off=/root/getppid_cycles 20 200",
            "-v",
            "on=/root/getppid_cycles 20 200",
            "--boot",
            "off=testbox-next-boot pti=off && reboot",
            "--boot",
            "on=testbox-next-boot pti=on && reboot",
            "--check",
            f"off={PTI_OFF}",
            "--check",
            f"on={PTI_ENABLED}",
            "--boots",
            "4",
        ],
        capture_output=True,
        text=True,
        env=box,
        timeout=3000,
        stdin=subprocess.DEVNULL,
    )
    assert ab.returncode == 0, ab.stderr[-3000:]
    _check_two_machines(store, box)
    err = _run_losing_the_box(
        box,
        [
            *common,
            "--host",
            BOX,
            "--experiment",
            "aa",
            "--seed",
            "8",
            "-v",
            "off2=/root/getppid_cycles 20 200",
            "--boot",
            f"off2={mark}{KEXEC.format(args='pti=off')} && {KEXEC_E}",
            "--check",
            f"off2={PTI_OFF}",
            "--boots",
            "2",
        ],
        store,
    )
    # told at once, not after --boot-timeout: only abstat's check that the box is down says this
    assert "did not come back after booting" in err and "is down (its QEMU was killed" in err, err[-3000:]
    assert "abstat run --resume aa" in err
    before = {row["boot_id"] for row in stored(store)}
    assert len(before) == 17  # the A/B's 8 boots on each machine and the A/A's first
    listed = json.loads(abstat("testbox", "list", "--format", "json", env=box).stdout)
    assert [item["state"] for item in listed if item["name"] == BOX] == ["lost"] and box_processes(box, BOX) == []
    again = abstat("testbox", "up", BOX, "--timeout", "600", env=box, timeout=900)
    assert again.returncode == 0, again.stderr
    assert box_ssh(box, "cat /root/marker").stdout == b"kept\n"
    resumed = abstat("run", "--resume", "aa", "--store", store, "--yes", "--no-progress", env=box, timeout=3000)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    every = stored(store)
    assert len(every) == 18 and len({row["boot_id"] for row in every}) == 18  # each run a boot of its own
    assert before <= {row["boot_id"] for row in every}  # the boots stored before the box was lost, kept
    runs = [row for row in every if row["host"] == BOX]
    assert len(runs) == 10  # 4 + 4 + 2 boots
    for row in runs:
        check_booted(row, fresh=("off", "on"))
    # with 4 boots a side the exact permutation p of complete separation is 2/70 = 0.029
    for host in (BOX, SKY):
        compared = _compare(store, box, host, "pti:off", "pti:on")
        assert compared["runs"] == [4, 4] and compared["significant"] and compared["ci_pct"][0] > 0, (host, compared)
    # A/A, pti=off twice (a fresh boot against kexec): not significant; what can fail is its size: pti=off
    # booted either way costs about the same (under TCG pti=on costs about twenty times pti=off), so the A/A's
    # difference of medians is far below the A/B's, and a variant that ran the other kernel would be as large
    same = _compare(store, box, BOX, "pti:off", "aa:off2")
    assert same["runs"] == [4, 2] and not same["significant"], same
    with sqlite3.connect(store) as db:
        values: dict[str, list[float]] = {}
        query = "select variant, value from abstat_samples where metric = 'cycles' and host = ?"
        for variant, value in db.execute(query, (BOX,)):
            values.setdefault(variant, []).append(value)
    off, on, off2 = (_median(values[name]) for name in ("off", "on", "off2"))
    assert on > 5 * off and abs(off2 - off) < 0.1 * (on - off), (off, on, off2)
