"""Issue 15 §2: nothing ``abstat run`` starts outlives it, however it ends.

Every process the tests start carries a marker in its command line (a
unique ``sleep`` duration); survivors are found by that marker in /proc and
killed by PID in the test's own clean-up.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from abstat.box.runner import Command, RunContext
from abstat.box.runner.executor import ProcessExecutor
from support import paths

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")

SRC = paths.SRC


def _marked() -> str:
    """A sleep duration no other process uses (sleep accepts fractions)."""
    return f"{9000 + random.randrange(1000)}.{random.randrange(10**6):06d}"


def _alive_with(marker: str) -> list[int]:
    """Live processes with ``marker`` as a whole argument (abstat's own argv holds it inside a command)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


@pytest.fixture
def markers():
    made: list[str] = []

    def make() -> str:
        made.append(_marked())
        return made[-1]

    yield make
    for marker in made:  # the test's own clean-up: by PID, never by name
        for pid in _alive_with(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _start_run(tmp_path: Path, *args: str, cgroup_home: str | None = None) -> subprocess.Popen:
    """``abstat run`` started in ``cgroup_home`` when given (its cgroup, and the one whose leftovers it sweeps)."""
    env = dict(os.environ, PYTHONPATH=SRC, ABSTAT_STORE=str(tmp_path / "s.db"))
    # the shell moves itself (echo is a builtin: "0" is the writer), then becomes abstat
    enter = [] if cgroup_home is None else ["sh", "-c", 'echo 0 > "$0/cgroup.procs" && exec "$@"', cgroup_home]
    return subprocess.Popen(
        [*enter, sys.executable, "-m", "abstat", "run", "--no-progress", "--shell", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _background(marker_escaped: str, marker_child: str) -> list[str]:
    # Ignores SIGTERM (so do its children: SIG_IGN is inherited), and one child leaves the group.
    return ["--background", f"trap '' TERM; setsid sleep {marker_escaped} & sleep {marker_child} & wait"]


def _finish(proc: subprocess.Popen, timeout: float = 30) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_normal_end_leaves_nothing(tmp_path, markers):
    run_marker, bg_escaped, bg_child = markers(), markers(), markers()
    proc = _start_run(tmp_path, "-n", "2", "-v", f"a=setsid sleep {run_marker} &", *_background(bg_escaped, bg_child))
    code, _, err = _finish(proc)
    assert code == 0, err
    for marker in (run_marker, bg_escaped, bg_child):
        assert _alive_with(marker) == [], marker
    assert "ignored SIGTERM" in err  # the load was stopped with SIGKILL after its grace period


def test_failure_leaves_nothing(tmp_path, markers):
    run_marker, bg_escaped, bg_child = markers(), markers(), markers()
    proc = _start_run(
        tmp_path, "-n", "3", "-v", f"a=setsid sleep {run_marker} & exit 1", *_background(bg_escaped, bg_child)
    )
    code, _, err = _finish(proc)
    assert code == 2 and "failed" in err
    for marker in (run_marker, bg_escaped, bg_child):
        assert _alive_with(marker) == [], marker


def test_timeout_leaves_nothing(tmp_path, markers):
    run_marker, inner = markers(), markers()
    proc = _start_run(
        tmp_path,
        "-n",
        "2",
        "--timeout",
        "0.5",
        "--ignore-failure",
        "-v",
        f"a=setsid sleep {run_marker} & sleep {inner}",
    )
    code, _, err = _finish(proc)
    assert code == 0, err
    assert _alive_with(run_marker) == [] and _alive_with(inner) == []


def _interrupted_run(tmp_path, markers):
    run_marker, inner, bg_escaped, bg_child = markers(), markers(), markers(), markers()
    proc = _start_run(
        tmp_path, "-n", "5", "-v", f"a=setsid sleep {run_marker} & sleep {inner}", *_background(bg_escaped, bg_child)
    )
    assert _wait_for(lambda: _alive_with(run_marker) and _alive_with(bg_escaped), 20)
    return proc, (run_marker, inner, bg_escaped, bg_child)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_leaves_nothing_and_exits_130(tmp_path, markers, signum):
    proc, all_markers = _interrupted_run(tmp_path, markers)
    proc.send_signal(signum)
    code, _, err = _finish(proc)
    assert code == 130, err
    for marker in all_markers:
        assert _alive_with(marker) == [], marker


def test_a_second_interrupt_escalates_to_sigkill_and_still_ends_everything(tmp_path, markers):
    proc, all_markers = _interrupted_run(tmp_path, markers)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)  # the load ignores SIGTERM: abstat is within its 2 s grace period now
    proc.send_signal(signal.SIGINT)
    # The load is gone well before the grace period (1.5 s more) would have ended.
    assert _wait_for(lambda: not _alive_with(all_markers[2]) and not _alive_with(all_markers[3]), 1.0)
    code, _, err = _finish(proc)
    assert code == 130, err
    assert "interrupted again" in err
    for marker in all_markers:
        assert _alive_with(marker) == [], marker


def test_sigkill_of_abstat_leaves_nothing(tmp_path, markers):
    proc, all_markers = _interrupted_run(tmp_path, markers)
    proc.kill()
    _finish(proc)
    for marker in all_markers:  # the supervisor ends them
        assert _wait_for(lambda m=marker: not _alive_with(m), 10), marker


def test_a_command_that_leaves_its_group_is_ended_after_each_run(markers):
    marker = markers()
    executor = ProcessExecutor(json_lines=False)
    try:
        # (the pause lets the child call setsid before the command's group is killed)
        measurement = executor.measure(
            Command(f"setsid sleep {marker} & sleep 0.3", shell=True), RunContext("a"), timeout=None
        )
        assert measurement.status == "ok"
        assert _alive_with(marker) == []  # before the executor closes
        assert any("outside its process group" in note for note in measurement.notes)
    finally:
        executor.close()


def test_a_setup_hook_daemon_lives_until_the_executor_closes(markers):
    marker = markers()
    executor = ProcessExecutor(json_lines=False)
    try:
        hook = executor.run_hook(
            "setup", Command(f"setsid sleep {marker} & sleep 0.3", shell=True), RunContext("a"), timeout=None
        )
        assert hook.status == "ok" and len(_alive_with(marker)) == 1
    finally:
        executor.close()
    assert _alive_with(marker) == []


@pytest.mark.parametrize("cgroups", [True, False])
@pytest.mark.parametrize("start", ["setsid sleep {} &", "sleep {} &"])
def test_a_daemon_a_hook_starts_as_its_shell_exits_lives_until_the_executor_closes(markers, start, cgroups):
    """The hook's shell exits at once, maybe before its child has called setsid (as with daemon(3)),
    or the child stays in the group: either way the daemon must live until the run ends.  Killing
    the hook's group when its shell exited killed it about half the time in a warm process."""
    executor = ProcessExecutor(json_lines=False, cgroups=cgroups)
    made = []
    try:
        executor.measure(Command("true"), RunContext("a"), timeout=None)
        for _ in range(10):
            made.append(markers())
            hook = executor.run_hook(
                "setup", Command(start.format(made[-1]), shell=True), RunContext("a"), timeout=None
            )
            assert hook.status == "ok", hook.notes
            # (the shell's child may not have exec'd sleep yet: wait for it, then it must stay)
            assert _wait_for(lambda m=made[-1]: _alive_with(m), 5), hook.notes
        time.sleep(0.2)
        assert all(len(_alive_with(marker)) == 1 for marker in made)
    finally:
        executor.close()
    for marker in made:
        assert _alive_with(marker) == [], marker


def test_the_next_run_reports_what_a_dead_run_left_behind(tmp_path, markers):
    marker = markers()
    # A process as a run whose abstat and supervisor were both SIGKILLed leaves it.
    orphan = subprocess.Popen(["sleep", marker], env=dict(os.environ, ABSTAT_RUN_TOKEN="0123456789abcdef.3"))
    try:
        proc = _start_run(tmp_path, "-n", "1", "-v", "a=true")
        code, _, err = _finish(proc)
        assert code == 0, err
        assert f"left by an earlier abstat run (token 0123456789abcdef) still run: PID {orphan.pid} (sleep)" in err
        assert orphan.poll() is None  # reported, not killed: it is not this run's
    finally:
        orphan.kill()
        orphan.wait()


# --- A cgroup v2 per command, where this machine lets abstat make one ---

from abstat.box.runner import cgroup  # noqa: E402

CGROUP_HOME = cgroup.own_directory()
needs_cgroup = pytest.mark.skipif(
    CGROUP_HOME is None,
    reason="cgroup v2 is not writable here (no cgroup2 mount, or abstat's cgroup "
    "is not delegated to this user): the token + subreaper fallback applies",
)


def _cgroup_of(pid: int) -> str:
    return next(
        line[3:].strip() for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if line.startswith("0::")
    )


def _abstat_cgroups(home: str | None = None) -> list[str]:
    return sorted(name for name in os.listdir(home or CGROUP_HOME) if name.startswith(cgroup.PREFIX))


@pytest.fixture
def cgroup_home():
    """A cgroup of the test's own, below this process's, as the home of the runs it starts: their run
    cgroups are made there and only its leftovers are swept, so that the runs of other tests (another
    pytest-xdist worker, another checkout's suite) neither see nor sweep what this test looks at."""
    home = os.path.join(CGROUP_HOME, f"test-home-{os.getpid()}-{random.randrange(10**6)}")
    os.mkdir(home)
    try:
        yield home
    finally:
        cgroup.kill(home)
        cgroup.remove(home)


@pytest.fixture
def without_cgroups(monkeypatch):
    monkeypatch.setattr(cgroup, "own_directory", lambda: None)


@pytest.mark.parametrize(
    ("mode", "escape"),
    [
        ("fallback", "setsid"),
        ("cgroup", "setsid"),
        ("cgroup", "env -i setsid"),  # no token, not in the group: only the cgroup holds it
    ],
)
def test_each_mode_ends_an_escaped_grandchild_after_each_run(markers, request, mode, escape):
    if mode == "cgroup" and CGROUP_HOME is None:
        pytest.skip("cgroup v2 is not writable here (no cgroup2 mount, or not delegated to this user)")
    if mode == "fallback":
        request.getfixturevalue("without_cgroups")
    marker = markers()
    executor = ProcessExecutor(json_lines=False)
    try:
        measurement = executor.measure(
            Command(f"{escape} sleep {marker} & sleep 0.3", shell=True), RunContext("a"), timeout=None
        )
        assert measurement.status == "ok" and _alive_with(marker) == []  # before the executor closes
        assert "killed 1 process(es) the command left running outside its process group" in measurement.notes
        assert (executor.containment.cgroups is not None) == (mode == "cgroup")
    finally:
        executor.close()


@needs_cgroup
def test_commands_are_born_in_the_runs_cgroup_and_hooks_in_their_own(markers):
    marker = markers()
    home = _cgroup_of(os.getpid())
    executor = ProcessExecutor()  # json_lines: keeps the output on the measurement
    try:
        first = executor.measure(Command("cat /proc/self/cgroup"), RunContext("a"), timeout=None)
        hook = executor.run_hook(
            "setup", Command(f"setsid sleep {marker} &", shell=True), RunContext("a"), timeout=None
        )
        second = executor.measure(Command("cat /proc/self/cgroup"), RunContext("a"), timeout=None)
        run_directory = executor.containment.cgroups.directory
        relative = "/" + os.path.relpath(run_directory, CGROUP_HOME)
        assert _cgroup_of(os.getpid()).endswith(relative + "/run")  # abstat, for the whole run
        # the hook's shell may exit before its child execs; the daemon's PID is taken from the same scan
        # that saw it (while setsid execs sleep, /proc/PID/cmdline reads empty for a moment)
        seen: list[list[int]] = []
        assert _wait_for(lambda: seen.append(_alive_with(marker)) or seen[-1], 5)
        [daemon] = seen[-1]
        assert hook.status == "ok" and _cgroup_of(daemon).endswith(relative + "/2")
    finally:
        executor.close()
    assert _cgroup_of(os.getpid()) == home  # back home at the end
    lines = [next(line for line in m.stdout.splitlines() if line.startswith("0::")) for m in (first, second)]
    assert lines[0].endswith(relative + "/run") and lines[1].endswith(relative + "/run"), lines
    assert not os.path.exists(run_directory) and _alive_with(marker) == []


@needs_cgroup
def test_sigkill_of_abstat_ends_grandchildren_without_token_or_group(tmp_path, markers, cgroup_home):
    run_marker, bg_marker = markers(), markers()
    proc = _start_run(
        tmp_path,
        "-n",
        "5",
        "-v",
        f"a=env -i setsid sleep {run_marker} & sleep 30",
        "--background",
        f"trap '' TERM; env -i setsid sleep {bg_marker} & wait",
        cgroup_home=cgroup_home,
    )
    assert _wait_for(lambda: _alive_with(run_marker) and _alive_with(bg_marker), 20)
    before = set(_abstat_cgroups(cgroup_home))
    assert len(before) == 1  # the run's own
    proc.kill()
    _finish(proc)
    for marker in (run_marker, bg_marker):  # the supervisor kills the run's cgroup
        assert _wait_for(lambda m=marker: not _alive_with(m), 10), marker
    assert _wait_for(lambda: not before & set(_abstat_cgroups(cgroup_home)), 10)  # and removes it


@needs_cgroup
def test_the_next_run_kills_and_removes_a_cgroup_a_dead_run_left(tmp_path, markers, cgroup_home):
    marker = markers()
    # A cgroup as a run whose abstat and supervisor were both SIGKILLed leaves it.
    directory = os.path.join(cgroup_home, cgroup.PREFIX + "fedcba9876543210")
    os.makedirs(os.path.join(directory, "4"))
    orphan = subprocess.Popen(["sleep", marker], env={})
    try:
        Path(directory, "4", "cgroup.procs").write_text(str(orphan.pid))
        proc = _start_run(tmp_path, "-n", "1", "-v", "a=true", cgroup_home=cgroup_home)
        code, _, err = _finish(proc)
        assert code == 0, err
        assert (
            f"an earlier abstat run left cgroup {directory}: killed 1 process(es) (PID {orphan.pid} (sleep))" in err
        ), err
        assert orphan.wait(5) == -signal.SIGKILL
        assert not os.path.exists(directory)
    finally:
        orphan.kill()
        orphan.wait()
        if os.path.isdir(directory):
            cgroup.kill(directory)
            cgroup.remove(directory)


def _pid_namespaces_work() -> bool:
    try:
        return (
            subprocess.run(
                ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, timeout=20
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


OWNER = """
import sys
from pathlib import Path
Path(sys.argv[1], "cgroup.procs").write_text("0")
from abstat.box.runner import Command, RunContext
from abstat.box.runner.executor import ProcessExecutor
executor = ProcessExecutor(json_lines=False)
executor.run_hook("setup", Command("sleep " + sys.argv[2] + " &", shell=True), RunContext("a"), timeout=None)
print(executor.containment.cgroups.directory, flush=True)
sys.stdin.readline()
executor.close()
"""

CLEANER = """
import sys
from pathlib import Path
Path(sys.argv[1], "cgroup.procs").write_text("0")
from abstat.box.runner.leftovers import cleaned_cgroup_notes
print(cleaned_cgroup_notes())
"""


@needs_cgroup
@pytest.mark.skipif(not _pid_namespaces_work(), reason="unshare --pid --mount-proc does not work here")
def test_a_run_in_another_pid_namespace_does_not_take_a_live_run_for_a_dead_one(markers):
    """A container (or a lab box) with its own PID namespace but the host's cgroup file system
    cannot see this run's supervisor in its /proc: it must still not kill this run's cgroup."""
    marker = markers()
    # A cgroup of the test's own as the home of both runs, so that nothing else on the machine is touched.
    home = os.path.join(CGROUP_HOME, f"test-home-{os.getpid()}-{random.randrange(10**6)}")
    os.mkdir(home)
    env = dict(os.environ, PYTHONPATH=SRC)
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, home, marker], env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        directory = owner.stdout.readline().strip()
        assert directory.startswith(home + "/" + cgroup.PREFIX)
        assert _wait_for(lambda: _alive_with(marker), 5)
        cleaner = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", CLEANER, home],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert cleaner.returncode == 0, cleaner.stderr
        assert cleaner.stdout.strip() == "[]"
        assert owner.poll() is None and _alive_with(marker) and os.path.isdir(directory)
        owner.stdin.write("\n")
        owner.stdin.flush()
        assert owner.wait(30) == 0
        assert _alive_with(marker) == [] and not os.path.exists(directory)
    finally:
        owner.kill()
        owner.wait()
        cgroup.kill(home)
        cgroup.remove(home)


@needs_cgroup
def test_a_live_run_whose_supervisor_is_not_seen_is_not_a_leftover():
    """A run's abstat holds its cgroup's lock while it lives: even when its supervisor is not
    found (another PID namespace, or one that could not start), the cgroup is not a leftover."""
    executor = ProcessExecutor(json_lines=False)
    try:
        executor.measure(Command("true"), RunContext("a"), timeout=None)
        directory = executor.containment.cgroups.directory
        assert directory not in cgroup.leftover_directories(CGROUP_HOME, set)
    finally:
        executor.close()
