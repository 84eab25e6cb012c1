"""Box leases: two experiments never measure on one box at once.

A lease is a lock on the box itself: an ssh session runs a small ``python3``
program there that takes ``flock`` on ``$ABSTAT_LEASE`` (default
``/tmp/abstat.lease``), writes who holds it into the file, and keeps it
until its standard input closes (the controller ended the session, went
away, or the box rebooted).  A second experiment waits until the box is
free (its host shows ``waiting for the lease``) or, with ``wait=False``
(``--no-wait``), stops that host with one line naming the holder.

The lease is taken before the box is rebooted and before every block
(:meth:`BoxLease.hold`); a reboot ends the session and so the lock, which
is taken again once the box is back.  So abstat never reboots a box, nor
measures on it, while another experiment holds it; another experiment may
use the box between our reboot and our block (the block's boot id check
then notices a box that was rebooted meanwhile).
"""
from __future__ import annotations

import getpass
import os
import shlex
import socket
import time
from typing import Any

from abstat.lab.host import HostFailed, HostHooks
from abstat.lab.protocol import BoxSession, NoAnswer, ProtocolError

LEASE_TIMEOUT_S = 60.0  # for the box to answer whether the lease is free

# Runs on the box (python3 -c SCRIPT HOLDER WAIT); standard library only, Python 3.8.
SCRIPT = r"""
import fcntl, json, os, select, sys, time
path = os.environ.get("ABSTAT_LEASE") or "/tmp/abstat.lease"
holder, wait = sys.argv[1], sys.argv[2] == "wait"
try:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
except OSError:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        print(json.dumps({"error": "cannot open %s: %s" % (path, err.strerror)}), flush=True)
        sys.exit(2)
def held_by():
    try:
        return os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
    except OSError:
        return "another process"
def gone():
    ready = select.select([sys.stdin], [], [], 0)[0]
    return bool(ready) and not os.read(sys.stdin.fileno(), 4096)
told = False
while True:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
    except OSError:
        if not wait:
            print(json.dumps({"held": held_by()}), flush=True)
            sys.exit(75)
        if not told:
            print(json.dumps({"waiting": held_by()}), flush=True)
            told = True
        if gone():
            sys.exit(0)
        time.sleep(0.5)
try:
    os.ftruncate(fd, 0)
    os.pwrite(fd, holder.encode(), 0)
except OSError:
    pass
print(json.dumps({"leased": path}), flush=True)
while os.read(sys.stdin.fileno(), 4096):
    pass
"""


def holder_text(experiment: str) -> str:
    """Who holds a lease: the experiment, the user and machine of the controller, its pid, since when."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return (f"experiment {experiment!r} of {user}@{socket.gethostname()} (pid {os.getpid()}, since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')})")


class BoxLease(HostHooks):
    """The lease of one host for one experiment (see the module's documentation)."""

    def __init__(self, wait: bool = True) -> None:
        self.wait = wait
        self.session: BoxSession | None = None
        self._waiting = False

    def acquire(self, worker: Any) -> None:
        """Nothing yet: the lease is taken before each boot and block (:meth:`hold`)."""

    def hold(self, worker: Any) -> None:
        if self.session is not None and self.session.process.poll() is None:
            return  # still held (no reboot since)
        self._end(worker)
        command = (f"python3 -c {shlex.quote(SCRIPT)} {shlex.quote(holder_text(worker.plan.experiment))} "
                   f"{'wait' if self.wait else 'no-wait'}")
        try:
            self.session = BoxSession(worker.ssh.open(command))
        except OSError as err:
            raise HostFailed(f"cannot run ssh: {err}") from None
        deadline = time.monotonic() + LEASE_TIMEOUT_S
        while True:
            try:
                message = self.session.message(max(0.5, min(1.0, deadline - time.monotonic())))
            except NoAnswer:
                if self._waiting or time.monotonic() < deadline:
                    worker._check_stop()
                    continue
                raise HostFailed(f"cannot take the lease of the box: no answer within {LEASE_TIMEOUT_S:g} s") from None
            except ProtocolError as err:
                raise HostFailed(f"cannot take the lease of the box: {err}") from None
            if message is None:
                _, reason = self.session.end(5)
                raise HostFailed(f"cannot take the lease of the box: {reason or 'the session ended'}")
            if "leased" in message:
                self._waiting = False
                return
            if "held" in message:
                raise HostFailed(f"the box is leased to {str(message['held'])[:300]} (--no-wait)")
            if "waiting" in message and not self._waiting:
                self._waiting = True
                worker.state("waiting for the lease")
                worker.emit("note", text=f"waiting for the box: leased to {str(message['waiting'])[:300]}")
            elif "error" in message:
                raise HostFailed(f"cannot take the lease of the box: {str(message['error'])[:300]}")

    def release(self, worker: Any) -> None:
        self._end(worker)

    def _end(self, worker: Any) -> None:
        session, self.session = self.session, None
        if session is not None:
            worker.ssh.close_session(session)
