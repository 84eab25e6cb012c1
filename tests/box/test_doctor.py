"""``abstat doctor``: checks against saved kernel files and the real /proc and /sys."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from abstat.box.doctor import CHECKS, NOT_AVAILABLE, OK, STATUSES, WARN, Context, run_checks
from abstat.box.doctor import tune as tune_mod
from abstat.box.doctor.base import format_cpu_list, parse_cpu_list
from support import paths
from support.cli import run_abstat

DATA = paths.DATA / "doctor"

EXPECTED = {
    "laptop": {
        "cpu-governor": WARN,
        "turbo": WARN,
        "smt": WARN,
        "cpu-isolation": WARN,
        "irqbalance": WARN,
        "aslr": OK,
        "transparent-hugepages": WARN,
        "nmi-watchdog": WARN,
        "c-states": WARN,
        "swap": OK,
        "load": WARN,
        "thermal-throttle": WARN,
        "perf-counters": WARN,
        "hypervisor": OK,
    },
    "server": dict.fromkeys([c.name for c in CHECKS], OK),
    "vm": {
        "cpu-governor": NOT_AVAILABLE,
        "turbo": NOT_AVAILABLE,
        "smt": OK,
        "cpu-isolation": WARN,
        "irqbalance": OK,
        "aslr": OK,
        "transparent-hugepages": OK,
        "nmi-watchdog": NOT_AVAILABLE,
        "c-states": NOT_AVAILABLE,
        "swap": OK,
        "load": OK,
        "thermal-throttle": NOT_AVAILABLE,
        "perf-counters": WARN,
        "hypervisor": WARN,
    },
}


def _findings(root: str, cpus=None):
    return {f.name: f for f in run_checks(Context(str(DATA / root), cpus=cpus))}


@pytest.mark.parametrize("root", sorted(EXPECTED))
def test_statuses_from_saved_kernel_files(root: str) -> None:
    findings = _findings(root, cpus=[2, 3] if root == "server" else None)
    assert {name: f.status for name, f in findings.items()} == EXPECTED[root]
    for finding in findings.values():
        assert finding.evidence
        assert (finding.fix != "") == (finding.status == WARN), finding


def test_evidence_names_what_was_read() -> None:
    laptop = _findings("laptop")
    assert "cpu0-3: powersave (intel_pstate)" in laptop["cpu-governor"].evidence
    assert "400 MHz-4700 MHz" in laptop["cpu-governor"].evidence
    assert "cpu0+2" in laptop["smt"].evidence
    assert "pid 812" in laptop["irqbalance"].evidence
    assert "230 us" in laptop["c-states"].evidence
    assert "cpu1 core 17" in laptop["thermal-throttle"].evidence
    vm = _findings("vm")
    assert "QEMU" in vm["hypervisor"].evidence and "steal time 2.2%" in vm["hypervisor"].evidence
    assert "no hardware PMU" in vm["perf-counters"].evidence


def test_isolation_depends_on_the_benchmark_cpus() -> None:
    assert _findings("server", cpus=[2, 3])["cpu-isolation"].status == OK
    assert _findings("server", cpus=[0, 1])["cpu-isolation"].status == WARN


def test_an_empty_root_is_never_ok(tmp_path: Path) -> None:
    findings = run_checks(Context(str(tmp_path), cpus=[0]))
    assert {f.status for f in findings} == {NOT_AVAILABLE}
    assert all(f.evidence for f in findings)


def test_real_proc_and_sys() -> None:
    """On this machine: a check is not-available exactly when its source is missing."""
    findings = {f.name: f for f in run_checks(Context(interval=0.05))}
    assert set(findings) == {c.name for c in CHECKS}
    assert {f.status for f in findings.values()} <= set(STATUSES)
    cpu = "/sys/devices/system/cpu"
    sources = {
        "cpu-governor": any(os.path.exists(f"{cpu}/cpu{n}/cpufreq/scaling_governor") for n in os.sched_getaffinity(0)),
        "turbo": os.path.exists(f"{cpu}/intel_pstate/no_turbo") or os.path.exists(f"{cpu}/cpufreq/boost"),
        "nmi-watchdog": os.path.exists("/proc/sys/kernel/nmi_watchdog"),
        "transparent-hugepages": os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"),
        "aslr": os.path.exists("/proc/sys/kernel/randomize_va_space"),
        "load": os.path.exists("/proc/loadavg"),
        "perf-counters": os.path.exists("/proc/sys/kernel/perf_event_paranoid"),
    }
    for name, present in sources.items():
        assert (findings[name].status != NOT_AVAILABLE) == present, findings[name]
    with open("/proc/sys/kernel/randomize_va_space") as handle:
        aslr = handle.read().strip()
    assert findings["aslr"].status == (WARN if aslr == "0" else OK)
    assert f"randomize_va_space = {aslr}" in findings["aslr"].evidence
    assert re.match(r"load average \d+\.\d\d \d+\.\d\d \d+\.\d\d on \d+ CPUs", findings["load"].evidence)


def test_cpu_list_format() -> None:
    assert parse_cpu_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpu_list("") == []
    assert parse_cpu_list("x") is None
    assert format_cpu_list([3, 0, 1, 2, 8]) == "0-3,8"


def _copy(root: str, tmp_path: Path) -> Path:
    target = tmp_path / root
    shutil.copytree(DATA / root, target)
    return target


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_tune_then_reset_restores_every_file(tmp_path: Path) -> None:
    root = _copy("laptop", tmp_path)
    before = _snapshot(root)
    state = str(tmp_path / "state.json")
    findings = run_checks(Context(str(root)))
    result = tune_mod.tune(findings, state_path=state, run_commands=False, root=str(root))
    changed = {entry["path"] for entry in result.applied}
    assert str(root / "sys/devices/system/cpu/intel_pstate/no_turbo") in changed
    assert result.commands == ["sudo systemctl stop irqbalance"]  # commands are never run for a saved tree
    after = {f.name: f.status for f in run_checks(Context(str(root)))}
    for name in ("cpu-governor", "turbo", "transparent-hugepages", "nmi-watchdog", "c-states", "perf-counters"):
        assert after[name] == OK, name
    recorded = json.loads(Path(state).read_text())["changes"]
    assert {entry["path"] for entry in recorded} == changed
    again = tune_mod.tune(run_checks(Context(str(root))), state_path=state, run_commands=False, root=str(root))
    assert not again.applied  # nothing left to change, and the record keeps the first old values
    tune_mod.reset(state_path=state, root=str(root))
    restored = _snapshot(root)
    thp = "sys/kernel/mm/transparent_hugepage/enabled"
    assert restored.pop(thp) == "always\n"  # the kernel file shows "[always] madvise never" again
    before.pop(thp)
    assert restored == before
    assert not os.path.exists(state)


def test_tune_without_permission_prints_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("laptop", tmp_path)
    before = _snapshot(root)
    monkeypatch.setattr(tune_mod.os, "access", lambda path, mode: False)
    result = tune_mod.tune(run_checks(Context(str(root))), state_path=str(tmp_path / "s.json"))
    assert not result.applied
    assert f"echo 1 | sudo tee {root}/sys/devices/system/cpu/intel_pstate/no_turbo" in result.commands
    assert _snapshot(root) == before
    assert not (tmp_path / "s.json").exists()


def _abstat(*args: str, env=None) -> subprocess.CompletedProcess:
    return run_abstat(*args, extra_env=env)


def test_cli_json_is_one_object_per_check() -> None:
    done = _abstat("doctor", "--root", str(DATA / "vm"), "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [entry["name"] for entry in document] == [c.name for c in CHECKS]
    for entry in document:
        assert set(entry) == {"name", "status", "evidence", "fix"}
        assert entry["status"] in STATUSES


def test_cli_tune_and_reset_on_a_saved_tree(tmp_path: Path) -> None:
    root = _copy("laptop", tmp_path)
    state = str(tmp_path / "record.json")
    done = _abstat("doctor", "--root", str(root), "--tune", "--state", state)
    assert done.returncode == 0, done.stderr
    assert "no_turbo: 0 -> 1" in done.stdout and f"recorded in {state}" in done.stdout
    done = _abstat("doctor", "--root", str(root), "--reset", "--state", state, "--yes")  # not the default record
    assert "no_turbo: 1 -> 0" in done.stdout
    assert (root / "sys/devices/system/cpu/intel_pstate/no_turbo").read_text() == "0\n"


def test_cli_bad_input_is_one_line() -> None:
    done = _abstat("doctor", "--cpus", "zero")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--cpus" in done.stderr
    done = _abstat("doctor", "--only", "nope")
    assert done.returncode == 2 and "unknown check" in done.stderr


def test_preflight_warns_only_for_the_metrics_that_matter(monkeypatch: pytest.MonkeyPatch) -> None:
    import abstat.box.doctor as doctor

    monkeypatch.setattr(doctor, "Context", lambda **kw: Context(str(DATA / "laptop"), cpus=[0]))
    record, warnings = doctor.preflight({"time"})
    assert record["turbo"]["status"] == WARN
    assert any(w.startswith("turbo:") for w in warnings)
    assert not any(w.startswith("perf-counters:") for w in warnings)  # counters were not asked for
    _, counter_warnings = doctor.preflight({"counters"})
    assert not any(w.startswith("turbo:") for w in counter_warnings)


def test_reset_without_permission_prints_commands_and_keeps_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy("laptop", tmp_path)
    state = str(tmp_path / "state.json")
    tune_mod.tune(run_checks(Context(str(root))), state_path=state, run_commands=False, root=str(root))
    monkeypatch.setattr(tune_mod.os, "access", lambda path, mode: False)
    result = tune_mod.reset(state_path=state, root=str(root))
    assert f"echo 0 | sudo tee {root}/sys/devices/system/cpu/intel_pstate/no_turbo" in result.commands
    assert not result.applied and os.path.exists(state)
    assert (root / "sys/devices/system/cpu/intel_pstate/no_turbo").read_text() == "1\n"
