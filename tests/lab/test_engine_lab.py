"""The engine on real sshd boxes (tests/support/lab_sim.py): resume from a stored specification, and from an
experiment an abstat from before the engine stored as a command line."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from support import lab_sim, paths
from support.cli import run_abstat

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")

SRC = paths.SRC


@pytest.fixture
def lab():
    yield from lab_sim.one_box()


def abstat(lab: lab_sim.Lab, *args: str) -> subprocess.CompletedProcess:
    return run_abstat(*args, env=lab.env(), timeout=180)


def _options(lab: lab_sim.Lab) -> list[str]:
    command = f"echo kernel=$(tr -d '\\n' < {lab.box}/current | sed 's/before/1/;s/after/2/')"
    options = [
        "--experiment",
        "x",
        "--host",
        "alpha",
        "--shell",
        "-v",
        f"before={command}",
        "-v",
        f"after={command}",
        "--metric",
        "kernel=kernel=(\\d+)",
        "--boots",
        "2",
        "-n",
        "2",
        "--seed",
        "5",
        "--no-progress",
    ]
    for variant in ("before", "after"):
        options += [
            "--boot",
            f"{variant}={lab.reboot} {variant}",
            "--check",
            f"{variant}=grep -qx {variant} {lab.box}/current",
        ]
    return options


def _boots(store: str) -> list[tuple[int, str, list[float]]]:
    db = sqlite3.connect(store)
    try:
        found = []
        for inv_id, status, settings in db.execute("SELECT id, status, settings FROM invocations ORDER BY id"):
            lab = json.loads(settings)["lab"]
            kernels = [
                v
                for (v,) in db.execute(
                    "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id"
                    " WHERE r.invocation_id = ? AND s.metric = 'kernel'",
                    (inv_id,),
                )
            ]
            if status == "complete":
                found.append((lab["boot"], lab["boot_variant"], kernels))
        return sorted(found)
    finally:
        db.close()


def _as_stored_before_the_engine(store: str, argv: list[str]) -> None:
    """Rewrite the invocations' settings as an abstat from before the engine wrote them."""
    db = sqlite3.connect(store)
    with db:
        for inv_id, settings in db.execute("SELECT id, settings FROM invocations").fetchall():
            settings = json.loads(settings)
            settings.pop("spec"), settings.pop("caller", None), settings.pop("schedule", None)
            settings["lab"].pop("schedule", None)  # nor the schedule version (1: each round shuffled alone)
            settings["lab"]["argv"] = argv
            db.execute("UPDATE invocations SET settings = ? WHERE id = ?", (json.dumps(settings), inv_id))
    db.close()


def _copy(store: str, path: str) -> str:
    source, copy = sqlite3.connect(store), sqlite3.connect(path)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    return path


def test_a_stopped_lab_experiment_resumes_without_repeating_its_boots(lab, tmp_path):
    """One experiment stopped (its box does not come back), then resumed twice from copies of its store: as
    the engine stored it (a specification), and as an abstat from before the engine stored it (a command line)."""
    store = str(tmp_path / "lab.db")
    box = lab.boxes["alpha"]
    box.down_after = box.boots + 2  # two of its four boots, then it does not come back
    options = _options(lab)
    first = abstat(lab, "run", "--store", store, *options, "--boot-timeout", "6")
    assert first.returncode == 2 and "1 of 1 host(s) stopped (alpha)" in first.stderr, first.stderr
    done = _boots(store)
    assert len(done) == 2
    box.down_after = None
    box.power_on()
    for stored_as in ("specification", "command line"):
        copy = _copy(store, str(tmp_path / f"{stored_as.replace(' ', '-')}.db"))
        if stored_as == "command line":
            _as_stored_before_the_engine(copy, options)
        _resumes(lab, copy, done, stored_as)


def _resumes(lab: lab_sim.Lab, store: str, done: list, stored_as: str) -> None:
    resumed = abstat(lab, "run", "--resume", "x", "--yes", "--store", store, "--no-progress", "--format", "json")
    assert resumed.returncode == 0, (stored_as, resumed.stderr)
    assert "alpha: 2 boot(s) already stored, 2 to go" in resumed.stderr, stored_as
    assert "seed 5" in resumed.stderr.splitlines()[0]
    boots = _boots(store)
    assert [b[0] for b in boots] == [0, 1, 2, 3] and boots[:2] == done, stored_as  # nothing repeated
    assert sorted(b[1] for b in boots) == ["after", "after", "before", "before"]
    # the boots left run in the order planned for the stored ones: by the schedule version they were stored
    # with (an older abstat's: version 1), so that no variant is booted once too often or too rarely
    from abstat.lab.config import boot_order

    version = 1 if stored_as == "command line" else 2
    assert [b[1] for b in boots[2:]] == boot_order(["before", "after"], 2, 5, "alpha", version)[2:], stored_as
    assert boot_order(["before", "after"], 2, 5, "alpha", 1) != boot_order(["before", "after"], 2, 5, "alpha", 2)
    for _, variant, kernels in boots:  # each boot ran in the kernel it booted
        assert kernels == [1.0 if variant == "before" else 2.0] * 2
    assert set(json.loads(resumed.stdout)["hosts"]) == {"alpha"}
