"""``abstat bisect --host`` on a real sshd box (tests/support/lab_sim.py), across reboots.

"Booting commit X" makes the box's benchmark measure commit X's cost: the
workstation build copies the commit's ``cost`` file (the "kernel"), the box's
``--install`` puts it under its own ``kernels/SHA``, ``--boot`` asks the
simulated box to reboot into SHA (a new boot id, sshd restarted), ``--check``
verifies the running "kernel", and the benchmark prints that kernel's cost with
1% Gaussian noise.  A commit listed as broken never comes back from its boot;
``--recover`` (on the workstation) powers the box on again, as a BMC would.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import lab_sim, paths
from support.cli import run_abstat

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")

SRC = paths.SRC
COSTS = [1000] * 2 + [1300] * 5  # c0 (good) .. c6 (bad): the slowdown is c2; c3 splits c1..c6 in half


@pytest.fixture
def lab():
    yield from _lab(["alpha"])


@pytest.fixture
def two_boxes():
    """Boxes ``alpha`` and ``beta``: two bisections at once."""
    yield from _lab(["alpha", "beta"])


def _lab(names: list[str]):
    boxes = lab_sim.Lab(names, reboot_delay=0.2)
    boxes.broken: set[str] = set()
    stop = threading.Event()
    reboot = boxes._reboot

    def reboot_or_hang(box: lab_sim.Box) -> None:  # a broken kernel never comes back
        if box.read("next") in boxes.broken:
            box.stay_down = True
        reboot(box)

    def power_button() -> None:  # --recover touches power-on: the box starts again (a BMC's power cycle)
        request = os.path.join(boxes.root, "power-on")
        while not stop.is_set():
            if os.path.exists(request):
                os.unlink(request)
                boxes.boxes["alpha"].power_on()
            stop.wait(0.05)

    boxes._reboot = reboot_or_hang
    button = threading.Thread(target=power_button, daemon=True)
    try:
        boxes.start()
        button.start()
        yield boxes
    finally:
        stop.set()
        button.join(timeout=5)
        boxes.close()


def make_repo(path: str, costs: list[int]) -> list[str]:
    os.makedirs(path)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=path, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "main")
    shas = []
    for i, cost in enumerate(costs):
        with open(os.path.join(path, "cost"), "w") as handle:
            handle.write(f"{cost}\n")
        with open(os.path.join(path, "number"), "w") as handle:
            handle.write(f"{i}\n")
        git("add", "cost", "number")
        git("commit", "-q", "-m", f"c{i}")
        shas.append(git("rev-parse", "HEAD"))
    return shas


def options(lab: lab_sim.Lab, repo: str, store: str, host: str = "alpha") -> list[str]:
    box = lab.box
    bench = os.path.join(lab.root, "bench")
    with open(bench, "w") as handle:
        handle.write(
            f"#!/bin/sh\nk=$(cat {box}/current)\n"
            f"python3 -c 'import random, sys; print(\"ns\", float(sys.argv[1]) * random.gauss(1, 0.01))'"
            f" $(cat {box}/kernels/$k)\n"
            f'echo "$ABSTAT_REV $k" >> {box}/run-env\n'
        )
    os.chmod(bench, 0o755)
    return [
        "--repo",
        repo,
        "--good",
        "HEAD~6",
        "--bad",
        "HEAD",
        "--store",
        store,
        "--experiment",
        "bx",
        "--host",
        host,
        "--build",
        "cp cost kernel.img",
        "--artifact",
        "kernel.img",
        "--install",
        f'mkdir -p {box}/kernels && cp "$ABSTAT_ARTIFACT" {box}/kernels/$ABSTAT_REV'
        f' && echo "$ABSTAT_REV $ABSTAT_ARTIFACT" >> {box}/installed',
        "--boot",
        f"{lab.reboot} $ABSTAT_REV",
        "--check",
        f'grep -qx "$ABSTAT_REV" {box}/current',
        "--recover",
        f"touch {lab.root}/power-on",
        "--boot-timeout",
        "4",
        "--run",
        bench,
        "--metric",
        "ns=^ns ([0-9.]+)",
        "-n",
        "2",
        "--budget",
        "60",
    ]


def abstat(lab: lab_sim.Lab, *args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    return run_abstat("bisect", *args, env=lab.env(), timeout=timeout)


def stored_boots(store: str) -> list[tuple[str, str, int, int, str]]:
    """(status, rev, batch, slot, role) of every boot the store holds, in order."""
    db = sqlite3.connect(store)
    try:
        rows = []
        for inv_id, status, settings in db.execute("SELECT id, status, settings FROM invocations ORDER BY id"):
            place = json.loads(settings)["caller"]["bisect"]
            labels = dict(db.execute("SELECT key, value FROM labels WHERE invocation_id = ?", (inv_id,)))
            rows.append((status, labels["rev"], place["batch"], place["slot"], labels["role"]))
        return rows
    finally:
        db.close()


def _complete_boots(store: str) -> int:
    try:
        db = sqlite3.connect(store)
        try:
            return db.execute("SELECT COUNT(*) FROM invocations WHERE status = 'complete'").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_bisect_on_a_box_across_reboots_skips_a_broken_kernel_and_resumes_after_the_box_is_lost(lab, tmp_path):
    """One bisection: the box is lost after 5 boots (exit 2, everything stored), powered on again,
    ``--resume`` replays the 5 stored boots and goes on; a commit whose kernel does not come back is
    skipped, ``--recover`` powers the box on; the culprit is named."""
    shas = make_repo(str(tmp_path / "repo"), COSTS)
    lab.broken = {shas[3]}  # the search's first test commit
    store = str(tmp_path / "b.db")
    box = lab.boxes["alpha"]

    def lose_the_box() -> None:  # powered off (and not coming back) once 5 boots are stored
        deadline = time.monotonic() + 300
        while _complete_boots(store) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        box.stay_down = True
        box.kill()

    killer = threading.Thread(target=lose_the_box, daemon=True)
    killer.start()
    first = abstat(lab, *options(lab, str(tmp_path / "repo"), store))
    killer.join(timeout=10)
    assert first.returncode == 2, first.stderr
    assert "abstat bisect --resume bx" in first.stderr, first.stderr
    assert "Traceback" not in first.stderr
    boots_before = stored_boots(store)
    before = [b for b in boots_before if b[0] == "complete"]
    assert len(before) >= 5
    box.power_on()
    resumed = abstat(lab, "--resume", "bx", "--yes", "--store", store, "--format", "json")
    assert resumed.returncode == 0, resumed.stderr
    answer = json.loads(resumed.stdout)
    assert answer["status"] == "found" and answer["culprit"] == shas[2], resumed.stderr
    assert answer["skipped"] == [shas[3]] and "skip " + shas[3][:12] in resumed.stderr
    # replayed: every boot the first run stored an outcome for (measured, or a commit that did not boot: with
    # two boots an end, the search may reach the broken commit before the box is lost), none made again
    settled = [b for b in boots_before if b[0] in ("complete", "skipped")]
    assert answer["boots"]["replayed"] == len(settled) and answer["boots"]["host"] == "alpha"
    boots = stored_boots(store)
    complete = [b for b in boots if b[0] == "complete"]
    assert complete[: len(before)] == before  # the stored boots were not made again
    assert len({b[2:4] for b in boots if b[0] != "failed"}) == len([b for b in boots if b[0] != "failed"])
    assert [b[:2] for b in boots if b[0] == "skipped"] == [("skipped", shas[3])]
    assert answer["runs"] == len(complete) + 1  # boots spent: measured ones and the broken one
    # each boot ran in the kernel it booted; every commit installed once, with its own artifact
    installed = [line.split() for line in (box.read("installed") or "").splitlines()]
    assert all(path.endswith(f"/.abstat/artifacts/{rev}/kernel.img") for rev, path in installed)
    # installed before a boot whose kernel is not the one installed last (and again after a resume: the box
    # may have been re-imaged while it was away), never more often than booted
    assert {rev for rev, _ in installed} == {b[1] for b in boots}
    assert len(installed) <= len(boots) + 1 and max(Counter(rev for rev, _ in installed).values()) >= 2
    ran = [line.split() for line in (box.read("run-env") or "").splitlines()]
    assert all(rev == kernel for rev, kernel in ran) and len(ran) == 2 * len(complete)
    assert shas[3] not in {rev for rev, _ in ran}


def test_bisect_on_a_box_without_reboots_builds_on_the_box(lab, tmp_path):
    """--build-on-host (the box checks the commit out of its own clone and builds it) and no --boot: each
    measurement is one session in the box's current boot."""
    repo = str(tmp_path / "repo")
    shas = make_repo(repo, [1000, 1000, 3000, 3000])
    box = lab.boxes["alpha"]
    clone = os.path.join(lab.box, "src")  # the box's own clone, at the box's path
    build = (
        f"test -d {clone} || git clone -q {repo} {clone}; "
        f'cd {clone} && git checkout -q "$ABSTAT_REV" && cp cost "built-$ABSTAT_REV"'
    )
    bench = (
        f"python3 -c 'import random, sys; print(\"ns\", float(open(sys.argv[1]).read()) * random.gauss(1, 0.01))'"
        f' "{clone}/built-$ABSTAT_REV"'
    )  # each commit's build kept apart: they are measured in any order
    before = box.boots
    done = abstat(
        lab,
        "--repo",
        repo,
        "--good",
        "HEAD~3",
        "--bad",
        "HEAD",
        "--store",
        str(tmp_path / "b.db"),
        "--host",
        "alpha",
        "--build-on-host",
        build,
        "--run",
        bench,
        "--metric",
        "ns=^ns ([0-9.]+)",
        "-n",
        "2",
        "--budget",
        "40",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["culprit"] == shas[2] and answer["boots"]["runs_per_boot"] == 2
    assert box.boots == before  # no reboot


def test_bisect_on_a_box_whose_install_writes_one_slot_boots_the_kernel_of_each_revision(two_boxes, tmp_path):
    """docs/lab.md's kexec box with one slot (issue 38): ``--install`` copies the artifact to
    ``vmlinuz-bisect`` and ``--boot`` kexecs whatever the slot holds.  The interleaved design boots good,
    bad, good again: the slot must be installed again before every boot whose kernel differs from the
    one installed last, or the second good boot runs the bad kernel (without --check: measured and
    attributed to the good revision; with it: refused, and the bisection stopped).  Both bisections at
    once, each on a box of its own (``alpha`` without --check, ``beta`` with it): they wait on reboots and
    ssh, not on this machine's CPUs, so together they take about the time of one."""
    lab = two_boxes
    made = {}
    for host, check in (("alpha", False), ("beta", True)):
        repo, store = str(tmp_path / f"repo-{host}"), str(tmp_path / f"{host}.db")
        made[host] = (make_repo(repo, COSTS), store, _one_slot_options(lab, repo, store, host, check))
    with ThreadPoolExecutor(len(made)) as pool:
        done = {host: pool.submit(abstat, lab, *args, "--format", "json") for host, (_, _, args) in made.items()}
    for host, (shas, store, _) in made.items():
        _check_one_slot(lab.boxes[host], done[host].result(), shas, store)


def _one_slot_options(lab: lab_sim.Lab, repo: str, store: str, host: str, check: bool) -> list[str]:
    slot = f"{lab.box}/vmlinuz-bisect"
    args = options(lab, repo, store, host)
    # the image knows its own revision (as uname -r does); the box boots whatever the slot holds
    args[args.index("--build") + 1] = 'cp cost kernel.img && echo "$ABSTAT_REV" >> kernel.img'
    args[args.index("--install") + 1] = f'cp "$ABSTAT_ARTIFACT" {slot} && echo "$ABSTAT_REV" >> {lab.box}/installed'
    args[args.index("--boot") + 1] = (
        f"r=$(tail -n 1 {slot}) && mkdir -p {lab.box}/kernels && cp {slot} {lab.box}/kernels/$r && {lab.reboot} $r"
    )
    if not check:
        at = args.index("--check")
        del args[at : at + 2]
    return args


def _check_one_slot(box: lab_sim.Box, done: subprocess.CompletedProcess, shas: list[str], store: str) -> None:
    assert done.returncode == 0, (box.name, done.stderr)
    assert "refused" not in done.stderr, (box.name, done.stderr)
    answer = json.loads(done.stdout)
    assert answer["status"] == "found" and answer["culprit"] == shas[2], (box.name, done.stderr)
    ran = [line.split() for line in (box.read("run-env") or "").splitlines()]
    complete = [b for b in stored_boots(store) if b[0] == "complete"]
    assert len(ran) == 2 * len(complete) and {rev for rev, _ in ran} >= {shas[0], shas[-1]}
    wrong = [(rev[:12], kernel[:12]) for rev, kernel in ran if rev != kernel]
    assert not wrong, f"{box.name}: {len(wrong)} of {len(ran)} runs measured another revision's kernel: {wrong[:4]}"
    # installed again exactly when the kernel to boot changes: once per change of revision between boots
    installed = (box.read("installed") or "").split()
    booted = [b[1] for b in complete]
    changes = [rev for i, rev in enumerate(booted) if i == 0 or booted[i - 1] != rev]
    assert installed == changes, box.name
