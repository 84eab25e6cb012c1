"""Shared by tests/lab/testbox/test_testbox.py and test_testbox_more.py: the two boxes both files use (one
session's, tests/lab/testbox/conftest.py), abstat and ssh against them, what a run stored.

Box names carry the test process's id and the boxes live in a temporary directory (the images'
cache is shared): two pytest-xdist workers, or two suites, never see each other's boxes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from support import paths, reaper

TESTS = str(paths.TESTS)
SRC = paths.SRC
sys.path.insert(0, SRC)

from abstat.lab.testbox.image import missing_tools  # noqa: E402

BENCH = os.path.join(TESTS, "data", "testbox", "getppid_cycles.c")
BUILD = os.path.join(TESTS, "data", "testbox", "build")
# kexec as users run it (``-i``: purgatory does not hash the loaded kernel first, 4.4 s -> 1.4 s of
# kexec -l under TCG); kexec -e in the background, as systemctl kexec does: the boot command returns
# at once instead of leaving its ssh session to the keep-alives (15 s a boot)
KEXEC = "kexec -i -l /boot/vmlinuz --initrd=/boot/initrd.img --reuse-cmdline --append={args}"
KEXEC_E = "{ (sleep 0.5; kexec -e) >/dev/null 2>&1 </dev/null & }"
PTI_ENABLED = 'dmesg | grep -q "page tables isolation: enabled"'
# a pti=off boot as its --check: the command line says so too (with -cpu max, whose CPU says it is not
# vulnerable, a boot of the default entry has PTI off as well: a GRUB-like boot that fell back to the default,
# as GRUB does after a failed boot, would pass a check of dmesg alone, and be measured as pti=off; seen once)
PTI_OFF = f"grep -qw pti=off /proc/cmdline && ! {PTI_ENABLED}"


def missing() -> str | None:
    absent = missing_tools() + [tool for tool in ("gcc", "ssh") if shutil.which(tool) is None]
    return f"missing {', '.join(absent)}" if absent else None


def box_name(stem: str) -> str:
    return f"{stem}{os.getpid()}"


# The session's two guests (tests/lab/testbox/conftest.py), both files' machines: BOX, QEMU's -cpu max with
# two CPUs (the isolation test's partition); SKY, -cpu Skylake-Client-v4 with one (seed 002's build shares
# it with its load).  Seed 000's A/B runs on both at once: two machines in one report.
BOX, SKY = box_name("seedbox"), box_name("tbsky")
GUESTS = {BOX: ["--smp", "2"], SKY: ["--cpu", "Skylake-Client-v4"]}
CPU_MODEL = {BOX: "QEMU TCG CPU", SKY: "Intel Core Processor (Skylake"}
GROUP = "testbox-guests"  # both files in one pytest-xdist worker: the session's boxes are booted once


def abstat(*args: str, env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "abstat", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def box_ssh(env: dict, name: str, command: str, **kwargs) -> subprocess.CompletedProcess:
    config = os.path.join(env["ABSTAT_TESTBOX_BOXES"], name, "ssh_config")
    return subprocess.run(
        ["ssh", "-F", config, "-o", "BatchMode=yes", name, command],
        capture_output=True,
        env=env,
        timeout=kwargs.pop("timeout", 120),
        **kwargs,
    )


def box_processes(env: dict, name: str) -> list[int]:
    """The box's QEMU and supervisor processes."""
    markers = (f"abstat-testbox-{name}\0".encode(), (os.path.join(env["ABSTAT_TESTBOX_BOXES"], name) + "\0").encode())
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as source:
                command = source.read()
            if any(marker in command for marker in markers):
                found.append(int(pid))
        except (OSError, ValueError):
            continue
    return found


def _skip_or_fail(started: subprocess.CompletedProcess, pytest) -> None:
    if started.returncode != 0 and ("resolving" in started.stderr or "downloading" in started.stderr):
        pytest.skip(f"cannot build the test box image here: {started.stderr.strip()}")
    assert started.returncode == 0, started.stderr


def copy_tree(env: dict, name: str, local: str, remote: str) -> None:
    """A directory of this checkout to the box (tar over ssh)."""
    archive = subprocess.run(["tar", "cf", "-", "-C", local, "."], capture_output=True, check=True).stdout
    copied = box_ssh(env, name, f"mkdir -p {remote} && tar xf - -C {remote}", input=archive)
    assert copied.returncode == 0, copied.stderr


@contextlib.contextmanager
def boxes_up(pytest, boxes: dict[str, list[str]]):
    """The boxes (name -> ``testbox up`` options) started at once, the benchmark copied to each; yields
    the environment.  Every box is downed on the way out, also when starting one failed."""
    reaper.ensure()  # the boxes' supervisors and QEMU (sessions of their own) end with this process, even killed
    directory = tempfile.mkdtemp(prefix="abstat-tb-")
    reaper.remove_on_death(directory)
    env = {
        **os.environ,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "ABSTAT_TESTBOX_BOXES": directory,
    }
    try:
        argv = [sys.executable, "-m", "abstat", "testbox", "up"]
        starting = {
            name: subprocess.Popen(
                [*argv, name, "--timeout", "600", *options],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                stdin=subprocess.DEVNULL,
            )
            for name, options in boxes.items()
        }
        for process in starting.values():
            out, err = process.communicate(timeout=1800)
            _skip_or_fail(subprocess.CompletedProcess(process.args, process.returncode, out, err), pytest)
        binary = os.path.join(directory, "getppid_cycles")
        built = subprocess.run(["gcc", "-O2", "-static", "-o", binary, BENCH], capture_output=True, text=True)
        if built.returncode != 0:
            pytest.skip(f"gcc cannot build a static benchmark here: {built.stderr.strip()[-200:]}")
        for name in boxes:
            with open(binary, "rb") as source:
                copied = box_ssh(env, name, "cat > /root/getppid_cycles && chmod +x /root/getppid_cycles", stdin=source)
            assert copied.returncode == 0, copied.stderr
        yield env
    finally:
        for name in boxes:
            if os.path.isdir(os.path.join(directory, name)):
                abstat("testbox", "down", name, env=env, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


def stored(store: str) -> list[dict]:
    """Every run: its variant, the boot id and machine record of its invocation, its host label."""
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "select v.name, i.boot_id, i.machine, i.id from runs r join invocations i"
            " on r.invocation_id = i.id join variants v on r.variant_id = v.id"
        ).fetchall()
        labels = {(row[0], row[1]): row[2] for row in db.execute("select invocation_id, key, value from labels")}
    return [
        {
            "variant": name,
            "boot_id": boot_id,
            "machine": json.loads(machine),
            "host": labels.get((invocation, "host")),
            "rev": labels.get((invocation, "rev")),
        }
        for name, boot_id, machine, invocation in rows
    ]


def check_booted(row: dict, cpu_model: str = "QEMU TCG CPU", fresh: tuple[str, ...] = ("off2",)) -> None:
    """The run measured the kernel its boot asked for (its command line, read on the box in that boot).
    ``fresh``: the variants booted GRUB-like (QEMU booted the box's choice: a fresh command line, not kexec's
    ``--reuse-cmdline`` with one more ``pti=``)."""
    words = row["machine"]["kernel_cmdline"].split()
    pti = [word for word in words if word.startswith("pti=")]
    assert pti[-1] == ("pti=on" if row["variant"] == "on" else "pti=off"), (row["variant"], words)
    if row["variant"] in fresh:
        assert pti == [pti[-1]] and words[-1] == pti[-1], (row["variant"], words)
    assert row["machine"]["boot_id"] == row["boot_id"]
    # the real machine record of the guest: Debian's kernel, its mitigations, QEMU's CPU model
    assert row["machine"]["kernel_release"].endswith("-cloud-amd64")
    assert "meltdown" in row["machine"]["vulnerabilities"] and "QEMU" in row["machine"]["hypervisor_type"]
    assert cpu_model in row["machine"]["cpu_model"], row["machine"]["cpu_model"]
