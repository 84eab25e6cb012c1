"""What abstat does around a measured command that could disturb it (issue 26, item 8).

The watchdog that ends a run's processes when abstat dies must not be woken
while commands run: it learns what to end from a file abstat rewrites in one
pwrite, read only once abstat is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from abstat.box.runner import containment, supervisor
from abstat.box.runner.executor import ProcessExecutor
from abstat.box.runner.model import Command, RunContext


def _switches(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle)
    return int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])


def test_the_supervisor_sleeps_while_commands_run():
    executor = ProcessExecutor(cgroups=False)
    try:
        executor.measure(Command("true"), RunContext("a"), timeout=None)
        pid = executor.containment._supervisor
        assert pid is not None
        before, deadline = -1, time.monotonic() + 20
        while time.monotonic() < deadline:  # until it has started (imports) and sleeps on the pipe
            time.sleep(0.3)
            now = _switches(pid)
            if now == before:
                break
            before = now
        for i in range(30):
            assert executor.measure(Command("true"), RunContext("a", i), timeout=None).status == "ok"
        assert _switches(pid) - before <= 2  # a line per command would wake it 60 times
    finally:
        executor.close()


def test_the_state_file_names_the_live_groups_and_a_torn_one_names_none():
    fd = containment._state_file()
    assert fd >= 10
    long = containment.state_text(["cgroup /sys/fs/cgroup/x", "group 12", "group 13"])
    os.pwrite(fd, long, 0)
    assert supervisor.read_state(fd) == [b"cgroup /sys/fs/cgroup/x", b"group 12", b"group 13"]
    os.pwrite(fd, containment.state_text(["group 14"]), 0)  # shorter: the old tail stays behind it
    assert supervisor.read_state(fd) == [b"group 14"]
    os.pwrite(fd, containment.state_text([]), 0)
    assert supervisor.read_state(fd) == []
    os.pwrite(fd, long, 0)
    os.pwrite(fd, b"group 99\n", 0)  # torn: a new beginning over an old state with its end line
    assert supervisor.read_state(fd) == []
    os.close(fd)


def test_a_supervisor_whose_abstat_died_kills_the_groups_of_its_state_file():
    """A process group without abstat's token, listed in the state file only, is ended at end of file."""
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True, env={"PATH": os.environ["PATH"]})
    fd = containment._state_file()
    os.pwrite(fd, containment.state_text([f"group {victim.pid}"]), 0)
    read_end, write_end = os.pipe()
    pid = os.posix_spawn(
        sys.executable,
        [sys.executable, "-E", "-s", containment.SUPERVISOR_PATH, "f" * 16, "--state-fd-3"],
        dict(os.environ),
        file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0), (os.POSIX_SPAWN_DUP2, fd, 3)],
    )
    os.close(read_end)
    try:
        time.sleep(0.3)
        assert victim.poll() is None  # alive while the pipe is open
        os.close(write_end)  # as abstat's death closes it
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert victim.wait(timeout=5) == -signal.SIGKILL
    finally:
        os.close(fd)
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def test_the_doctors_sample_started_early_waits_only_for_what_is_left():
    from abstat.box.doctor.base import Context

    early = Context(interval=0.05)
    early.start_sampling()
    time.sleep(0.08)  # abstat run's preparations
    start = time.monotonic()
    early.sampled()
    assert time.monotonic() - start < 0.04
    assert early.interval >= 0.08  # the evidence names the span the rates cover

    late = Context(interval=0.05)
    start = time.monotonic()
    late.sampled()
    assert time.monotonic() - start >= 0.05 and 0.05 <= late.interval < 1
