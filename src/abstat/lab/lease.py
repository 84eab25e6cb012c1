"""Box leases: two experiments never measure on one box at once.

A lease is a lock on the box itself: an ssh session runs a small ``python3``
program there that takes ``flock`` on ``$ABSTAT_LEASE`` (default
``/run/abstat.lease`` for root, else ``$XDG_RUNTIME_DIR/abstat-UID.lease`` or
``/tmp/abstat-UID.lease``: a file of mode 0600 of the user's, refused when
another user owns it, may write it, or may replace it, so no one else can
hold it or swap it), writes who holds it into the file, and keeps it
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
from abstat.lab.boxsession import BoxSession
from abstat.lab.protocol import NoAnswer, ProtocolError
from abstat.errors import named

LEASE_TIMEOUT_S = 60.0  # for the box to answer whether the lease is free
MAX_ANSWER = 65536  # bytes of one answer of the lease program
LINE_PATIENCE_S = 2.0  # for an answer begun to end (it is written at once)

# Runs on the box (python3 -c SCRIPT HOLDER WAIT); standard library only, Python 3.8.
SCRIPT = r"""
import fcntl, os, select, stat, sys, time
def say(key, text):  # one JSON object: without json, whose import (re, enum) is most of this program's start
    units = text.encode("utf-16-be", "surrogatepass")
    codes = (units[i] << 8 | units[i + 1] for i in range(0, len(units), 2))
    quoted = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else "\\u%04x" % c for c in codes)
    print('{"%s": "%s"}' % (key, quoted), flush=True)
uid = os.geteuid()
default = "/run/abstat.lease" if uid == 0 else os.path.join(
    os.environ.get("XDG_RUNTIME_DIR") or "/tmp", "abstat-%d.lease" % uid)
path = os.environ.get("ABSTAT_LEASE") or default
holder, wait = sys.argv[1], sys.argv[2] == "wait"
def refuse(why):
    say("error", "%s: %s" % (path, why))
    sys.exit(2)
try:
    where = os.lstat(os.path.dirname(os.path.abspath(path)))
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    info = os.fstat(fd)
except OSError as err:
    refuse("cannot open: %s" % err.strerror)
# a lease no one else can hold or replace: a file of this user's, that no one else may open for writing,
# in a directory that is no link and that only its owner (or root) may change, or a sticky one (/tmp)
if not stat.S_ISREG(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
    refuse("not a lease file of this user's (owned by uid %d, mode %o): remove it"
           % (info.st_uid, info.st_mode & 0o7777))
if stat.S_ISLNK(where.st_mode) or (where.st_mode & 0o022 and not where.st_mode & stat.S_ISVTX) \
        or where.st_uid not in (0, uid):
    refuse("its directory may be changed by others: choose another ABSTAT_LEASE")
os.fchmod(fd, 0o600)  # only this user may open it (a read-only descriptor is enough to flock)
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
            say("held", held_by())
            sys.exit(75)
        if not told:
            say("waiting", held_by())
            told = True
        if gone():
            sys.exit(0)
        time.sleep(0.5)
try:
    now = os.stat(path)
except OSError:
    now = None
if now is None or (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
    refuse("replaced while it was being taken")
try:
    os.ftruncate(fd, 0)
    os.pwrite(fd, holder.encode(), 0)
except OSError:
    pass
say("leased", path)
while os.read(sys.stdin.fileno(), 4096):
    pass
"""


class _LeaseSession(BoxSession):
    """The lease program's session: its every answer is one short line written at once, so a line longer
    than :data:`MAX_ANSWER`, or begun and not ended within :data:`LINE_PATIENCE_S`, is refused at once."""

    def __init__(self, process: Any) -> None:
        self._partial_since: float | None = None
        super().__init__(process)

    def _read_stdout(self) -> None:
        stream: Any = self.process.stdout
        pending = bytearray()
        try:
            while stream is not None and not self._closed.is_set() and (chunk := stream.read1(65536)):
                pending += chunk
                while (end := pending.find(b"\n")) >= 0:
                    self._put(bytes(pending[: end + 1]))
                    del pending[: end + 1]
                if len(pending) > MAX_ANSWER:
                    self._put(ProtocolError(f"a line longer than {MAX_ANSWER} bytes"))
                    self.process.kill()
                    return
                self._partial_since = (self._partial_since or time.monotonic()) if pending else None
        except (OSError, ValueError):
            pass
        self._put(None)

    def _next_line(self, deadline: float) -> bytes | None:
        while True:
            try:
                return super()._next_line(min(deadline, time.monotonic() + 0.5))
            except NoAnswer:
                since = self._partial_since
                if since is not None and time.monotonic() - since > LINE_PATIENCE_S:
                    self.kill()
                    raise ProtocolError(f"a line that did not end within {LINE_PATIENCE_S:g} s") from None
                if time.monotonic() >= deadline:
                    raise


def holder_text(experiment: str) -> str:
    """Who holds a lease: the experiment, the user and machine of the controller, its pid, since when."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return (
        f"experiment {experiment!r} of {user}@{socket.gethostname()} (pid {os.getpid()}, since "
        f"{time.strftime('%Y-%m-%d %H:%M:%S')})"
    )


class BoxLease(HostHooks):
    """The lease of one host for one experiment (see the module's documentation)."""

    def __init__(self, wait: bool = True) -> None:
        self.wait = wait
        self.session: BoxSession | None = None
        self._leased = False  # the session's program answered that it holds the lease
        self._waiting = False

    def acquire(self, worker: Any) -> None:
        """Nothing yet: the lease is taken before each boot and block (:meth:`hold`)."""

    def start(self, worker: Any) -> None:
        """The lease program started in the box's new boot; :meth:`hold` waits for its answer."""
        if self.session is None or self.session.process.poll() is not None:
            self._open(worker)

    def _open(self, worker: Any) -> None:
        self._end(worker)
        # -I -S: standard library only; Python starts faster without site (a boot's every lease starts one)
        command = (
            f"python3 -I -S -c {shlex.quote(SCRIPT)} {shlex.quote(holder_text(worker.experiment))} "
            f"{'wait' if self.wait else 'no-wait'}"
        )
        try:
            # every answer of the lease is one short line written at once: one that does not end is refused
            self.session = _LeaseSession(worker.ssh.open(command))
        except OSError as err:
            raise HostFailed(f"cannot run ssh: {err}") from None

    def hold(self, worker: Any) -> None:
        alive = self.session is not None and self.session.process.poll() is None
        if alive and self._leased:
            return  # still held (no reboot since)
        if not alive:
            self._open(worker)
        assert self.session is not None
        self._leased = False
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
            if self._answer(worker, message):
                self._leased = True
                return

    def _answer(self, worker: Any, message: dict[str, Any]) -> bool:
        """One answer of the lease program: True once leased; HostFailed when it cannot be."""
        if "leased" in message:
            self._waiting = False
            return True
        if "held" in message:
            raise HostFailed(
                f"the box is leased to {str(message['held'])[:300]}"
                + (named(" ({no_wait})", "no_wait") if not self.wait else "")
            )
        if "waiting" in message and not self._waiting:
            self._waiting = True
            worker.state("waiting for the lease")
            worker.emit("note", text=f"waiting for the box: leased to {str(message['waiting'])[:300]}")
        elif "error" in message:
            raise HostFailed(f"cannot take the lease of the box: {str(message['error'])[:300]}")
        return False

    def release(self, worker: Any) -> None:
        self._end(worker)

    def _end(self, worker: Any) -> None:
        session, self.session = self.session, None
        self._leased = False
        if session is not None:
            worker.ssh.close_session(session)
