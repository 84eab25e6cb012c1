"""``run --cpus LIST --isolate`` (issue 41): the measured CPUs held for the measured commands, on this
machine's real cgroup v1 cpuset hierarchy and IRQ affinities, and everything restored after — at the end
of a run, and by ``doctor --reset`` after a run killed outright.

What each process may run on is read from the kernel (``Cpus_allowed_list`` in /proc/PID/status), by
the benchmark itself, by its background load and by an unrelated process started before the run.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from abstat.box.isolate import cpuset_mount, parse_cpus
from support import paths

SRC = paths.SRC
MOUNT = cpuset_mount()


def _text(path: str) -> str:
    with open(path) as handle:
        return handle.read().strip()


ONLINE = sorted(parse_cpus(_text(os.path.join(MOUNT, "cpuset.cpus")))) if MOUNT else []
needs_cpuset = pytest.mark.skipif(
    os.geteuid() != 0 or MOUNT is None or len(ONLINE) < 2,
    reason="--isolate needs root, the cgroup v1 cpuset hierarchy and 2 CPUs",
)
pytestmark = pytest.mark.alone  # it moves every task of the machine


def _allowed(pid: int | str) -> str:
    with open(f"/proc/{pid}/status") as handle:
        return next(line.split()[1] for line in handle if line.startswith("Cpus_allowed_list"))


def _irqs() -> dict[str, str]:
    found = {}
    for path in glob.glob("/proc/irq/*/smp_affinity_list") + ["/proc/irq/default_smp_affinity"]:
        try:
            found[path] = _text(path)
        except OSError:
            continue
    return found


def _abstat(*args: str, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "abstat", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, **env},
        timeout=300,
        **kw,
    )


def _sets() -> list[str]:
    return sorted(name for name in os.listdir(MOUNT) if name.startswith("abstat."))


@needs_cpuset
def test_the_measured_commands_have_their_cpu_alone_and_everything_is_restored(tmp_path):
    measured, rest = ONLINE[-1], [c for c in ONLINE if c != ONLINE[-1]]
    before_irqs = _irqs()
    other = subprocess.Popen(["sleep", "300"])
    try:
        before_other = _allowed(other.pid)
        bench = tmp_path / "bench.sh"
        bench.write_text(
            f"grep Cpus_allowed_list /proc/self/status >> {tmp_path}/bench.txt\n"
            f"grep Cpus_allowed_list /proc/{other.pid}/status >> {tmp_path}/other.txt\n"
            f'echo "held: $(ls {MOUNT} | grep -c abstat.isolated)"\n'
        )
        load = (
            f"while :; do grep Cpus_allowed_list /proc/self/status > {tmp_path}/load.tmp; "
            f"mv {tmp_path}/load.tmp {tmp_path}/load.txt; sleep 0.05; done"
        )  # never read half-written
        done = _abstat(
            "run",
            "-n",
            "3",
            "--cpus",
            str(measured),
            "--isolate",
            "--store",
            str(tmp_path / "s.db"),
            "--metric",
            "held=^held: (\\d+)",
            "--background",
            f"sh -c '{load}'",
            "-v",
            f"a=sh {bench}",
            "-v",
            f"b=sh {bench}",
            env={"ABSTAT_ISOLATION_STATE": str(tmp_path / "state")},
        )
        assert done.returncode == 0, done.stderr
        bench_seen = set((tmp_path / "bench.txt").read_text().split()) - {"Cpus_allowed_list:"}
        other_seen = set((tmp_path / "other.txt").read_text().split()) - {"Cpus_allowed_list:"}
        load_seen = (tmp_path / "load.txt").read_text().split()[1]
        assert bench_seen == {str(measured)}  # the benchmark: its CPU
        assert all(measured not in parse_cpus(text) for text in other_seen)  # the rest of the system: not it
        assert other_seen and parse_cpus(next(iter(other_seen))) <= set(rest)
        assert measured not in parse_cpus(load_seen)  # the background load: off it
        assert "--isolate: CPUs" in done.stderr and "IRQs moved" in done.stderr
        # restored: the other process runs anywhere again, no cpuset or record is left, IRQs as they were
        assert _allowed(other.pid) == before_other
        assert _sets() == []
        assert _irqs() == before_irqs
        assert os.listdir(tmp_path / "state") == []
    finally:
        other.kill()
        other.wait()


@needs_cpuset
def test_a_killed_run_is_restored_by_doctor_reset_and_a_forged_record_is_refused(tmp_path):
    measured = ONLINE[-1]
    before_irqs = _irqs()
    state = tmp_path / "state"
    env = {"ABSTAT_ISOLATION_STATE": str(state), "ABSTAT_DOCTOR_STATE": str(tmp_path / "doctor" / "tune.json")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "1",
            "--cpus",
            str(measured),
            "--isolate",
            "--store",
            str(tmp_path / "s.db"),
            "-v",
            "a=sleep 60",
            "-v",
            "b=sleep 60",
        ],
        env={**os.environ, "PYTHONPATH": SRC, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (_sets() and glob.glob(f"{state}/isolation-*.json") and _irqs() != before_irqs):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never isolated its CPU"
            time.sleep(0.1)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _sets() and _irqs() != before_irqs  # left as the kill found them
        # a forged record beside it: refused whole, nothing undone, one line naming it, exit 2
        forged = state / "isolation-999999.json"
        forged.write_text(json.dumps({"pid": 999999, "mount": MOUNT, "sets": [], "irqs": {"/etc/passwd": "x"}}))
        os.chmod(forged, 0o600)
        refused = _abstat("doctor", "--reset", env=env)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert str(forged) in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
        assert _sets() and _irqs() != before_irqs
        forged.unlink()
        reset = _abstat("doctor", "--reset", env=env)
        assert reset.returncode == 0, reset.stderr
        assert "isolation of run" in reset.stdout and "undone" in reset.stdout
        assert _sets() == [] and _irqs() == before_irqs
        assert list(state.iterdir()) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _abstat("doctor", "--reset", env=env)  # never leave the machine isolated


def test_isolate_needs_cpus_and_is_a_version_2_field(tmp_path):
    done = _abstat("run", "-n", "1", "--isolate", "--store", str(tmp_path / "s.db"), "-v", "a=true", env={})
    assert done.returncode == 2 and "--isolate needs --cpus" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    from abstat.engine.parts import SpecError, Variant
    from abstat.engine.spec import ExperimentSpec, decode, encode

    with pytest.raises(SpecError, match="isolate"):
        ExperimentSpec(variants=(Variant("a", "true"),), isolate=True)
    spec = ExperimentSpec(variants=(Variant("a", "true"),), cpus=(1,), isolate=True)
    doc = encode(spec)
    assert doc["abstat_spec"] == 2 and doc["isolate"] is True
    assert decode(doc).isolate is True
    assert "isolate" not in encode(ExperimentSpec(variants=(Variant("a", "true"),), cpus=(1,)))
    with pytest.raises(SpecError, match="isolate: is a field of version 2"):
        decode({**{k: v for k, v in doc.items() if k != "cpus"}, "abstat_spec": 1})


@needs_cpuset
def test_a_box_isolates_its_own_cpus_through_the_shipped_runner(tmp_path):
    # the lab for real through tests/local_ssh.py: the runner zip (with abstat/box/isolate.py) on the "box"
    measured = ONLINE[-1]
    before_irqs = _irqs()
    bench = tmp_path / "bench.sh"
    bench.write_text(
        f"grep Cpus_allowed_list /proc/self/status >> {tmp_path}/bench.txt\n"
        f"grep Cpus_allowed_list /proc/1/status >> {tmp_path}/init.txt\necho 't: 1'\n"
    )
    shim = f"{sys.executable} {paths.SUPPORT / 'local_ssh.py'}"
    done = _abstat(
        "run",
        "-n",
        "2",
        "--experiment",
        "lab",
        "--host",
        "box=box1",
        "--cpus",
        str(measured),
        "--isolate",
        "--store",
        str(tmp_path / "s.db"),
        "-v",
        f"a=sh {bench}",
        "-v",
        f"b=sh {bench}",
        env={"ABSTAT_SSH_COMMAND": shim, "ABSTAT_ISOLATION_STATE": str(tmp_path / "state")},
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert set((tmp_path / "bench.txt").read_text().split()) - {"Cpus_allowed_list:"} == {str(measured)}
    init_seen = set((tmp_path / "init.txt").read_text().split()) - {"Cpus_allowed_list:"}
    assert init_seen and all(measured not in parse_cpus(text) for text in init_seen)  # PID 1 moved off it
    shown = _abstat("show", "lab", "--store", str(tmp_path / "s.db"), env={})
    assert "--isolate: CPUs" in shown.stdout + shown.stderr  # the box's note, stored with its boot
    assert _sets() == [] and _irqs() == before_irqs and parse_cpus(_allowed(1)) == set(ONLINE)


@needs_cpuset
def test_cpusets_of_ended_runs_without_a_record_are_cleared(tmp_path):
    # a record lost with its run's temporary directory: an empty set of a dead run is dropped by the next
    # --isolate, one holding tasks is emptied and removed by doctor --reset; a live run's set is left alone
    dead = subprocess.Popen(["true"])
    dead.wait()
    empty, holding = os.path.join(MOUNT, f"abstat.rest-{dead.pid}"), os.path.join(MOUNT, f"abstat.isolated-{dead.pid}")
    mems = _text(os.path.join(MOUNT, "cpuset.mems"))
    other = subprocess.Popen(["sleep", "300"])
    try:
        for path in (empty, holding):
            os.mkdir(path)
            for name, value in (("cpuset.mems", mems), ("cpuset.cpus", str(ONLINE[0]))):
                with open(os.path.join(path, name), "w") as handle:
                    handle.write(value)
        with open(os.path.join(holding, "tasks"), "w") as handle:
            handle.write(str(other.pid))
        from abstat.box.isolate import isolation_problem

        problem = isolation_problem([ONLINE[-1]])
        assert not os.path.exists(empty) and problem is not None and f"abstat.isolated-{dead.pid}" in problem
        env = {
            "ABSTAT_ISOLATION_STATE": str(tmp_path / "state"),
            "ABSTAT_DOCTOR_STATE": str(tmp_path / "doctor" / "tune.json"),
        }
        reset = _abstat("doctor", "--reset", env=env)
        assert reset.returncode == 0 and f"cpuset {holding} of an ended run removed" in reset.stdout
        assert not os.path.exists(holding) and parse_cpus(_allowed(other.pid)) == set(ONLINE)
        assert isolation_problem([ONLINE[-1]]) is None
    finally:
        other.kill()
        other.wait()
        for path in (holding, empty):
            if os.path.isdir(path):
                subprocess.run(["sh", "-c", f"for t in $(cat {path}/tasks); do echo $t > {MOUNT}/tasks; done"])
                os.rmdir(path)
