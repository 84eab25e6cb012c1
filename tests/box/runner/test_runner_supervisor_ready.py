"""The supervisor's start does not run beside the first measured command (wave 4, session 20).

The runner starts its watchdog (:mod:`abstat.box.runner.supervisor`, a Python process) at the first command.
Started and not waited for, its start, 0.7 s of a TCG test box's one CPU, ran beside the first measured run:
``getppid`` 4,692 cycles a call against 2,718 in the runs after it on a box whose clock counts instructions
(``abstat testbox up --accel icount``), 127 involuntary context switches against 24.  Now the first command
starts once the supervisor has said it waits on its pipe: from then on it takes no CPU time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from abstat.box.runner.containment import Containment

pytestmark = pytest.mark.skipif(not Path("/proc/self/schedstat").exists(), reason="needs /proc/PID/schedstat")


def _cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as stat:
        return int(stat.read().split()[0])


def test_the_first_command_starts_after_the_supervisor_has_started():
    for _ in range(3):
        containment = Containment(subreaper=False, cgroups=False)
        try:
            containment.next_token(os.environ)  # the first command's token: the supervisor starts
            pid = containment._supervisor
            assert pid is not None
            before = _cpu_ns(pid)
            time.sleep(0.3)
            # its Python start (here 20 to 40 ms of CPU) is over; what is left is a read on its pipe (a millisecond)
            assert _cpu_ns(pid) - before < 3_000_000
            with open(f"/proc/{pid}/stat") as stat:
                assert stat.read().rsplit(")", 1)[1].split()[0] == "S"  # asleep: waiting for abstat to end
        finally:
            containment.close()
