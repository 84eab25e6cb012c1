"""attack23 #8: ``doctor --reset`` wrote the recorded old value whatever the file held now, showed the record's
``new`` as the file's value, took perf_event_paranoid ``-1`` (a value --tune never reads: it lowers one above 1
or 2) and asked nothing for a record handed over with ``--state``.  Now: a file no longer holding what --tune
wrote is left as it is (one line); the value shown is the file's; old values are those --tune can have read
there; a record other than the default one lists its writes and needs ``--yes``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.box.doctor import Context, run_checks
from abstat.box.doctor import tune as tune_mod
from support import paths

PARANOID = "proc/sys/kernel/perf_event_paranoid"
NMI = "proc/sys/kernel/nmi_watchdog"


def _doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "abstat", "doctor", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(paths.ROOT / "src"), **env),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _tree(tmp_path: Path, paranoid: str, nmi: str = "0") -> Path:
    root = tmp_path / "root"
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / PARANOID).write_text(paranoid + "\n")
    (root / NMI).write_text(nmi + "\n")
    return root


def _record(path: Path, root: Path, *changes: tuple[str, str, str, str]) -> Path:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    entries = [{"check": c, "path": str(root / f), "old": old, "new": new} for c, f, old, new in changes]
    path.write_text(json.dumps({"version": 1, "changes": entries}))
    path.chmod(0o600)
    return path


def test_a_file_changed_since_tune_is_left_as_it_is_and_the_others_reset(tmp_path):
    root = _tree(tmp_path, paranoid="2")  # --tune wrote 1; someone set 2 since
    state = _record(
        tmp_path / "private/s.json", root, ("perf-counters", PARANOID, "3", "1"), ("nmi-watchdog", NMI, "1", "0")
    )
    done = _doctor("--reset", "--root", str(root), "--state", str(state), "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / PARANOID).read_text() == "2\n" and (root / NMI).read_text() == "1\n"
    (skipped,) = [line for line in done.stdout.splitlines() if line.startswith("not changed:")]
    assert f"{root / PARANOID}: holds 2, not 1 as --tune wrote" in skipped
    assert f"reset: {root / NMI}: 0 -> 1" in done.stdout  # the file's value, read as it is written
    assert done.stderr.splitlines() == [f"reset will write 1 to {root / NMI} (it holds 0)"]
    assert not state.exists()


def test_a_paranoid_value_tune_never_reads_is_refused_in_one_line(tmp_path):
    root = _tree(tmp_path, paranoid="1")
    for old in ("-1", "0", "1"):  # attack23's record: -1 (anyone may profile the kernel) written back
        state = _record(tmp_path / "private/s.json", root, ("perf-counters", PARANOID, old, "1"))
        done = _doctor("--reset", "--root", str(root), "--state", str(state), "--yes")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"the old value {old!r}" in done.stderr and "holds a change abstat does not make" in done.stderr
        assert (root / PARANOID).read_text() == "1\n" and state.exists()
    state = _record(tmp_path / "private/s.json", root, ("perf-counters", PARANOID, "3", "0"))  # --tune writes 1 or 2
    done = _doctor("--reset", "--root", str(root), "--state", str(state), "--yes")
    assert done.returncode == 2 and "is not one check 'perf-counters' writes" in done.stderr


@pytest.mark.parametrize("paranoid, written", [("2", "1"), ("3", "1"), ("4", "2")])
def test_what_tune_reads_and_writes_at_perf_event_paranoid_is_a_known_write(tmp_path, paranoid, written):
    root = tmp_path / "laptop"
    shutil.copytree(paths.DATA / "doctor" / "laptop", root)
    (root / PARANOID).write_text(paranoid + "\n")
    probe = (lambda: (False, "permission denied")) if written == "1" else None  # the probed finding writes 1
    (finding,) = run_checks(Context(str(root), probe_counters=probe), ["perf-counters"])
    (change,) = finding.changes
    ((_, old, new),) = tune_mod.KNOWN_WRITES["perf-counters"]
    assert change.value == written and re.fullmatch(new, written) and re.fullmatch(old, paranoid)


def test_a_record_not_the_default_one_lists_its_writes_and_needs_yes(tmp_path):
    root = _tree(tmp_path, paranoid="1")
    change = ("perf-counters", PARANOID, "3", "1")
    handed = _record(tmp_path / "private/handed.json", root, change)
    done = _doctor("--reset", "--root", str(root), "--state", str(handed))
    assert done.returncode == 2 and (root / PARANOID).read_text() == "1\n" and handed.exists()
    listed, refused = done.stderr.splitlines()
    assert listed == f"reset will write 3 to {root / PARANOID} (it holds 1)"
    assert "not the default one --tune writes" in refused and "--yes" in refused
    default = _record(tmp_path / "xdg/abstat/doctor-tune.json", root, change)  # where --tune writes it
    for args in ([], ["--state", str(default)]):
        _record(default, root, change)
        (root / PARANOID).write_text("1\n")
        done = _doctor("--reset", "--root", str(root), *args, XDG_STATE_HOME=str(tmp_path / "xdg"))
        assert done.returncode == 0, done.stderr
        assert (root / PARANOID).read_text() == "3\n" and f"reset: {root / PARANOID}: 1 -> 3" in done.stdout
