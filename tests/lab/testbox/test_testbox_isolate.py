"""``run --cpus 1 --isolate`` on a box whose init mounts the unified cgroup v2 hierarchy (as systemd does on
current distributions): the measured CPU becomes a cgroup v2 cpuset partition (abstat.box.partition), on a
QEMU guest booting Debian's kernel with two CPUs.  This machine's own kernel binds the cpuset controller to
its v1 hierarchy, so only a guest can show it.

What each process may run on is read from the guest's kernel (``Cpus_allowed_list``): the benchmark's own,
an unrelated process started before the run, the run's background load; after the run every cgroup, CPU
list and IRQ affinity is as before.
"""

from __future__ import annotations

import pytest
from support.testbox import abstat, box_name, box_ssh, boxes_up, missing

REASON = missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"test boxes need QEMU and Debian's tools: {REASON}")
BOX = box_name("isobox")
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


@pytest.fixture(scope="module")
def box():
    with boxes_up(pytest, {BOX: ["--smp", "2"]}) as env:
        mounted = box_ssh(
            env, BOX, "busybox mount -t cgroup2 cgroup2 /sys/fs/cgroup && cat /sys/fs/cgroup/cgroup.controllers"
        )
        assert mounted.returncode == 0 and b"cpuset" in mounted.stdout, mounted.stderr
        yield env


def _seen(env: dict, name: str) -> set[str]:
    text = box_ssh(env, BOX, f"cat /tmp/iso/{name}").stdout.decode()
    return set(text.split()) - {"Cpus_allowed_list:"}


def test_the_measured_cpu_is_a_cgroup_v2_partition_and_everything_is_restored(box, tmp_path):
    setup = box_ssh(
        box,
        BOX,
        "rm -rf /tmp/iso && mkdir /tmp/iso && cat > /tmp/iso/bench.sh && "
        "chmod +x /tmp/iso/bench.sh && (setsid sleep 600 </dev/null >/dev/null 2>&1 & "
        "echo $! > /tmp/iso/other.pid)",
        input=BENCH.encode(),
    )
    assert setup.returncode == 0, setup.stderr
    before = box_ssh(box, BOX, STATE).stdout.decode()
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
    assert _seen(box, "bench.txt") == {"1"}  # the benchmark: the measured CPU alone
    assert _seen(box, "other.txt") == {"0"}  # a process started before the run: off it
    assert _seen(box, "load.txt") == {"0"}  # the run's background load: off it
    assert _seen(box, "partition.txt") == {"root"}  # a partition the kernel accepted
    shown = abstat("show", "iso", "--store", str(tmp_path / "s.db"), env=box)
    assert "cgroup v2 cpuset partition" in shown.stdout + shown.stderr  # the box's note, stored with its boot
    after = box_ssh(box, BOX, STATE + "; grep Cpus_allowed_list /proc/$(cat /tmp/iso/other.pid)/status").stdout
    assert after.decode().startswith(before)  # no cgroup left, controllers and IRQs as before
    assert after.decode()[len(before) :].split() == ["Cpus_allowed_list:", "0-1"]
    box_ssh(box, BOX, "kill $(cat /tmp/iso/other.pid)")
