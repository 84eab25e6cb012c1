"""Background load: a command in its own process group from before the first run to after the last.

Standard library only.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping

from abstat.box.runner import cgroup, reaper, signals
from abstat.box.runner.containment import Containment
from abstat.box.runner.model import Command
from abstat.box.runner.process import describe_status, group_alive, kill_group, live_group_members, spawn


class ProcessBackground:
    """A background command in its own process group."""

    def __init__(
        self, command: Command, env: Mapping[str, str], grace: float = 2.0, containment: Containment | None = None
    ) -> None:
        self.command = command
        self.grace = grace
        self._containment = containment or Containment(subreaper=False, supervise=False)
        env, self._token = self._containment.environment(env)
        self._cgroup = self._containment.enter_own_cgroup()
        try:
            with open(os.devnull, "wb") as devnull:
                self.pid = spawn(command.argv(), env, devnull.fileno(), devnull.fileno())
        finally:
            self._containment.leave(self._cgroup)
        self._containment.keep.add(self.pid)
        self._containment.started(self.pid)
        self._ended: str | None = None

    def exited(self) -> str | None:
        if self._ended is None:
            done, status, _ = os.wait4(self.pid, os.WNOHANG)
            if done == self.pid:
                self._ended = describe_status(status)
        return self._ended

    def failure(self) -> str | None:
        """How the background load failed or ended; None while it runs.

        A command that exits 0 while other members of its process group go on
        (``sh -c 'load &'``) still provides the load.
        """
        ended = self.exited()
        if ended is None or (ended == "exit status 0" and live_group_members(self.pid)):
            return None
        return ended

    def _escaped(self) -> list[int]:
        """Live processes of this load outside its process group (setsid, setpgid)."""
        if self._cgroup is not None:
            return [
                pid for pid in cgroup.members(self._cgroup) if pid != self.pid and reaper.outside_group(pid, self.pid)
            ]
        return [pid for pid in self._containment._left(self._token) if pid != self.pid]

    def stop(self) -> list[str]:
        """SIGTERM to the load's group and its escaped descendants, up to
        ``grace`` seconds to end, then SIGKILL.  A second Ctrl-C or SIGTERM
        meanwhile sends SIGKILL at once; it never abandons the stop."""
        notes: list[str] = []
        early = self.exited()
        if early is not None:
            notes.append(f"background command {self.command.text!r} had already ended ({early})")
        with signals.deferred():
            kill_group(self.pid, signal.SIGTERM)
            reaper.kill(self._escaped(), signal.SIGTERM)
            deadline = time.monotonic() + self.grace
            insisted = False
            while time.monotonic() < deadline:
                self.exited()
                if (
                    self._ended is not None
                    and not self._escaped()
                    and (not group_alive(self.pid) or not live_group_members(self.pid))
                ):
                    break
                if signals.wait_for_signal(0.01) is not None:
                    insisted = True
                    break
            left = (live_group_members(self.pid) if group_alive(self.pid) else []) + self._escaped()
            kill_group(self.pid, signal.SIGKILL)
            if self._cgroup is not None:
                self._containment.end_cgroup(self._cgroup, self.pid)
            else:
                self._containment.sweep(self._token)
            if left and insisted:
                notes.append(
                    f"background command {self.command.text!r}: interrupted again while it was "
                    "being stopped: sent SIGKILL"
                )
            elif left:
                notes.append(
                    f"background command {self.command.text!r} ignored SIGTERM for {self.grace:g} s: sent SIGKILL"
                )
            if self._ended is None:
                _, status, _ = os.wait4(self.pid, 0)
                self._ended = describe_status(status)
            self._containment.keep.discard(self.pid)
            self._containment.ended(self.pid)
        return notes
