"""Issue 36, item 2: ``abstat doctor --reset`` undoes only what abstat itself changes.  A tuning
record is untrusted: only /proc/sys and /sys files (of --root), never through a link, only the undo
commands abstat knows, only a record of this user's that no one else may write; the record is
written through a new private file, never through a planted link; Change.shell() quotes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.box.doctor import Context, run_checks
from abstat.box.doctor import tune as tune_mod
from abstat.box.doctor.base import Change
from support import paths

DATA = paths.DATA / "doctor"
SRC = str(paths.ROOT / "src")


def _doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "abstat", "doctor", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=SRC, **env),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _record(path: Path, changes: list) -> Path:
    path.write_text(json.dumps({"changes": changes}))
    path.chmod(0o600)
    return path


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "laptop"
    shutil.copytree(DATA / "laptop", root)
    return root


@pytest.mark.parametrize(
    "forged, named",
    [
        ({"check": "x", "command": ["true"], "undo": ["sh", "-c", "touch {marker}"]}, "undo command ['sh', '-c'"),
        ({"check": "x", "command": ["true"], "undo": "touch {marker}"}, "undo command 'touch"),
        ({"check": "x", "path": "{marker}", "old": "pwned", "new": "1"}, "is not a file under"),
        ({"check": "x", "path": "{root}/sys/../../marker", "old": "pwned", "new": "1"}, "is not a file under"),
        ({"check": "x", "path": "{root}/sys/link", "old": "pwned", "new": "1"}, "is not a file under"),
        (
            {"check": "x", "path": "{root}/sys/kernel/mm/transparent_hugepage/enabled", "old": "a\nb", "new": "1"},
            "is not one line of text",
        ),
        ("nope", "a change is not an object"),
    ],
)
def test_reset_refuses_a_forged_record_in_one_line_and_changes_nothing(tmp_path, forged, named):
    root = _tree(tmp_path)
    marker = tmp_path / "marker"
    marker.write_text("victim\n")
    (root / "sys" / "link").symlink_to(marker)
    text = json.dumps(forged).replace("{marker}", str(marker)).replace("{root}", str(root))
    state = _record(tmp_path / "state.json", [json.loads(text)])
    before = state.read_text()
    done = _doctor("--reset", "--root", str(root), "--state", str(state))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert named in done.stderr and "holds a change abstat does not make" in done.stderr, done.stderr
    assert marker.read_text() == "victim\n" and state.read_text() == before


@pytest.mark.parametrize("mode, owner", [(0o666, None), (0o620, None), (0o600, 65534)])
def test_reset_refuses_a_record_others_own_or_may_write(tmp_path, mode, owner):
    if owner is not None and os.geteuid() != 0:
        pytest.skip("chown needs root")
    root = _tree(tmp_path)
    path = str(root / "sys/devices/system/cpu/intel_pstate/no_turbo")
    state = _record(tmp_path / "state.json", [{"check": "turbo", "path": path, "old": "1", "new": "0"}])
    state.chmod(mode)
    if owner is not None:
        os.chown(state, owner, owner)
    done = _doctor("--reset", "--root", str(root), "--state", str(state))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a tuning record of this user's" in done.stderr
    assert Path(path).read_text() == "0\n"


def test_reset_refuses_a_record_reached_through_a_link(tmp_path):
    root = _tree(tmp_path)
    real = _record(tmp_path / "real.json", [])
    (tmp_path / "state.json").symlink_to(real)
    done = _doctor("--reset", "--root", str(root), "--state", str(tmp_path / "state.json"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_the_record_is_never_written_through_a_planted_link(tmp_path):
    root = _tree(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    state = tmp_path / "private" / "state.json"
    state.parent.mkdir(mode=0o700)
    for planted in ("state.json.tmp", ".doctor-tune-.tmp"):
        (state.parent / planted).symlink_to(victim)
    result = tune_mod.tune(run_checks(Context(str(root))), state_path=str(state), run_commands=False, root=str(root))
    assert result.applied and victim.read_text() == "victim\n"
    assert not state.is_symlink() and oct(state.stat().st_mode & 0o777) == oct(0o600)
    assert json.loads(state.read_text())["changes"]
    assert sorted(os.listdir(state.parent)) == [".doctor-tune-.tmp", "state.json", "state.json.tmp"]


def test_the_record_is_not_written_in_a_directory_others_may_write(tmp_path):
    root = _tree(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = _doctor("--tune", "--root", str(root), "--state", str(shared / "state.json"))
    assert done.returncode == 2 and "private directory" in done.stderr and not os.listdir(shared), done.stderr


def test_a_kernel_file_replaced_by_a_link_is_not_written_through(tmp_path):
    root = _tree(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    findings = run_checks(Context(str(root)))
    target = root / "sys/devices/system/cpu/intel_pstate/no_turbo"
    target.unlink()
    target.symlink_to(victim)
    result = tune_mod.tune(findings, state_path=str(tmp_path / "s.json"), run_commands=False, root=str(root))
    assert victim.read_text() == "victim\n"
    assert any(str(target) in skipped for skipped in result.skipped), result.skipped


def test_change_shell_quotes_every_word():
    assert Change("/sys/x; rm -rf /", "1 && id").shell() == "echo '1 && id' | sudo tee '/sys/x; rm -rf /'"
    assert Change(command=["systemctl", "stop", "irq balance"]).shell() == "systemctl stop 'irq balance'"


def test_every_command_tune_runs_has_a_known_undo():
    from abstat.box.doctor import CHECKS

    laptop = {f.name: f for f in run_checks(Context(str(DATA / "laptop")))}
    commands = [c for check in CHECKS for c in laptop[check.name].changes if c.command is not None]
    assert commands, "the laptop tree runs irqbalance"
    for change in commands:
        assert tune_mod.KNOWN_COMMANDS[tuple(change.command)] == tuple(change.undo_command)


@pytest.mark.parametrize(
    "check, file, old, named",
    [
        ("aslr", "proc/sys/kernel/core_pattern", "|/tmp/evil.sh %p", "is not a file abstat doctor --tune writes"),
        ("nmi-watchdog", "proc/sys/kernel/modprobe", "/tmp/evil.sh", "is not a file abstat doctor --tune writes"),
        ("turbo", "proc/sys/kernel/nmi_watchdog", "1", "is not a file abstat doctor --tune writes"),
        ("cpu-governor", "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "/tmp/x", "is not one check"),
        ("transparent-hugepages", "sys/kernel/mm/transparent_hugepage/enabled", "sometimes", "is not one check"),
        ("perf-counters", "proc/sys/kernel/perf_event_paranoid", "12345", "is not one check"),
    ],
)
def test_reset_writes_only_the_files_and_values_tune_writes(tmp_path, check, file, old, named):
    # attack22 A9: a record could set kernel.core_pattern = |prog (the kernel runs it as root)
    root = _tree(tmp_path)
    target = root / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("core\n")
    state = _record(tmp_path / "state.json", [{"check": check, "path": str(target), "old": old, "new": "x"}])
    done = _doctor("--reset", "--root", str(root), "--state", str(state))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert named in done.stderr and str(target) in done.stderr and not done.stdout, done.stderr
    assert target.read_text() == "core\n" and state.exists()


def test_reset_lists_what_it_writes_before_writing(tmp_path):
    root = _tree(tmp_path)
    state = tmp_path / "private" / "doctor-state.json"  # the default record: no --yes asked
    state.parent.mkdir(mode=0o700)
    assert _doctor("--tune", "--root", str(root), ABSTAT_DOCTOR_STATE=str(state)).returncode == 0
    recorded = json.loads(state.read_text())["changes"]
    done = _doctor("--reset", "--root", str(root), ABSTAT_DOCTOR_STATE=str(state))
    assert done.returncode == 0, done.stderr
    listed = done.stderr.splitlines()
    expected = [f"reset will write {e['old']} to {e['path']} (it holds {e['new']})" for e in reversed(recorded)]
    assert listed == expected
    assert (root / "sys/devices/system/cpu/intel_pstate/no_turbo").read_text() == "0\n"


@pytest.mark.parametrize("tree", sorted(p.name for p in DATA.iterdir() if p.is_dir()))
def test_every_file_tune_writes_is_a_known_write(tree):
    import re

    root = os.path.realpath(DATA / tree)
    for finding in run_checks(Context(root)):
        for change in finding.changes:
            if change.path is not None:  # the file, the value --tune reads there (its record's old), the value written
                known = tune_mod.KNOWN_WRITES[finding.name]
                ((_, old, new),) = [k for k in known if re.fullmatch(k[0], change.path[len(root) :])]
                assert re.fullmatch(old, tune_mod._current_value(change.path) or "")
                assert re.fullmatch(new, change.value or "")
