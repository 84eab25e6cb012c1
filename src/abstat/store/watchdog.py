"""Every wait on a PostgreSQL server bounded in time; Ctrl-C never held by one.

psycopg waits on a connection's socket for as long as the server takes: a frozen
server (SIGSTOPped, or a socket that accepts and never answers) held ``abstat run``
forever, and on Ctrl-C psycopg itself waits on a cancel request to that same
server.  Every wait of a store's connection (psycopg's ``Connection.wait``, the
one place its statements, commits and COPY wait) goes through :func:`watched`:

* a stop signal (SIGINT, SIGTERM, SIGHUP) during the wait is held, as in
  :func:`abstat.box.runner.signals.deferred` (psycopg never sees a KeyboardInterrupt,
  so never waits on its cancel); the wait has :data:`GRACE_S` more to finish
  (a commit on a live server takes milliseconds), then its socket is shut down;
  the signal is delivered when the wait has ended; so has a wait that begins
  while abstat stops (its teardown's commit, a ROLLBACK after KeyboardInterrupt);
* a wait longer than :data:`STALL_S` makes the watchdog ask whether the server
  still answers: a new connection to the same address, sent an SSLRequest,
  which a live postmaster answers at once whatever its backends are busy with;
  without an answer within :data:`PROBE_S` the socket is shut down.

A wait whose socket was shut down fails with psycopg's OperationalError, the
connection broken; :func:`reason` says why, for the store's one-line error.
The watchdog is one daemon thread, woken only when a wait begins while it
sleeps, and it leaves the stop signals unblocked, so that one arriving while
the main thread holds them is still noticed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

GRACE_S = 2.0
STOPPING_S = 60.0
STALL_S = 10.0
PROBE_S = 5.0
TICK_S = 0.1
_SSL_REQUEST = struct.pack("!ii", 8, 80877103)


class _Watch:
    __slots__ = ("fd", "started", "deadline", "probed", "why")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.started = time.monotonic()
        self.deadline = 0.0  # set when a stop signal arrives: the wait may last until then
        self.probed = self.started  # when the server last answered (or the wait began)
        self.why = ""


class Watchdog:
    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entered by the signal listener, which runs in the main thread
        self.watches: dict[int, _Watch] = {}
        self.cut: dict[int, tuple[str, bool]] = {}  # id of a connection whose socket was shut down -> why, by a signal
        self.sleeping = True
        self.stopped_at, self.stopped_by = 0.0, ""  # the last stop signal: when, and what a wait cut then says
        self.ids = itertools.count()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        thread = threading.Thread(target=self._loop, name="abstat-store-watchdog", daemon=True)
        thread.start()

    def begin(self, key: int, fd: int) -> None:
        watch = _Watch(fd)
        if self._stopping():  # a teardown after Ctrl-C: its commit (on a frozen server) gets GRACE_S too
            watch.deadline, watch.why = watch.started + GRACE_S, self.stopped_by
        with self.lock:
            self.watches[key] = watch
            self.cut.pop(key, None)
            if self.sleeping:
                self.sleeping = False
                self._wake()

    def end(self, key: int) -> None:
        with self.lock:
            self.watches.pop(key, None)

    def stop_signal(self, signum: int) -> None:
        """A stop signal arrived: every wait in progress has GRACE_S more, and so has every wait that
        begins within STOPPING_S (the teardown's)."""
        with self.lock:
            self.stopped_at = time.monotonic()
            self.stopped_by = f"stopped by {signal.Signals(signum).name} while waiting for the store server"
            for watch in self.watches.values():
                if not watch.deadline:
                    watch.deadline, watch.why = self.stopped_at + GRACE_S, self.stopped_by
            self._wake()

    def _stopping(self) -> bool:
        """Whether abstat is stopping: a stop signal came lately, or a KeyboardInterrupt is being handled
        (a ROLLBACK in an ``except``)."""
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            self.stopped_by = self.stopped_by or "stopped by SIGINT while waiting for the store server"
            return True
        return bool(self.stopped_by) and time.monotonic() - self.stopped_at < STOPPING_S

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # the pipe is full: the thread is awake anyway
            os.write(self.wake_w, b"!")

    def _loop(self) -> None:
        from abstat.box.runner.signals import STOP_SIGNALS

        if hasattr(signal, "pthread_sigmask"):  # this thread receives them when the main thread holds them
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        while True:
            with self.lock:
                idle = not self.watches
                self.sleeping = idle
            readable, _, _ = select.select([self.wake_r], [], [], None if idle else TICK_S)
            if readable:
                os.read(self.wake_r, 512)
            self._check()

    def _check(self) -> None:
        now = time.monotonic()
        with self.lock:
            due = [
                (key, watch)
                for key, watch in self.watches.items()
                if (watch.deadline and now >= watch.deadline) or now - watch.probed >= STALL_S
            ]
        for key, watch in due:
            if watch.deadline and now >= watch.deadline:
                self._shut(key, watch, watch.why, True)
                continue
            waited = now - watch.started
            if _answers(watch.fd):
                watch.probed = time.monotonic()
            else:
                self._shut(
                    key,
                    watch,
                    f"the store server did not answer for {waited:.0f} s (nor a new"
                    f" connection to it within {PROBE_S:.0f} s)",
                    False,
                )

    def _shut(self, key: int, watch: _Watch, why: str, by_signal: bool) -> None:
        with self.lock:
            if self.watches.get(key) is not watch:  # the wait ended meanwhile: its fd may be another's now
                return
            self.cut[key] = why, by_signal
            try:
                with socket.socket(fileno=os.dup(watch.fd)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)  # the waiting poll() wakes; libpq reads the end
            except OSError:
                pass


def _answers(fd: int) -> bool:
    """Whether the server at the other end of ``fd`` answers a new connection's SSLRequest within PROBE_S."""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            family, address = sock.family, sock.getpeername()
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(PROBE_S)
            probe.connect(address)
            probe.sendall(_SSL_REQUEST)
            probe.recv(1)  # 'N' or 'S'; an end of file is an answer too
        return True
    except OSError:  # a timeout, a refused connection: no server answers there
        return False


_watchdog: list[Watchdog] = []  # the one watchdog, once a connection needs it
_create = threading.Lock()


def _dog() -> Watchdog:
    with _create:
        if not _watchdog:
            from abstat.box.runner import signals

            _watchdog.append(Watchdog())
            signals.add_listener(_watchdog[0].stop_signal)
        return _watchdog[0]


@contextmanager
def watched(key: int, fd: int) -> Iterator[None]:
    """One wait on the connection ``key`` (its ``id``) over the socket ``fd``: bounded, and in the
    main thread with the stop signals held until it ends (see the module's text)."""
    from abstat.box.runner import signals

    dog = _dog()
    with signals.deferred():
        dog.begin(key, fd)
        try:
            yield
        finally:
            dog.end(key)


def reason(key: int) -> str | None:
    """Why the watchdog shut down the connection ``key``'s socket, if it did."""
    return _watchdog[0].cut.get(key, (None,))[0] if _watchdog else None


def stopped(key: int) -> bool:
    """Whether the watchdog shut down the connection ``key``'s socket because a stop signal came."""
    return bool(_watchdog) and _watchdog[0].cut.get(key, ("", False))[1]


def forget(key: int) -> None:
    """The connection ``key`` is closed (its ``id`` may be another's next)."""
    if _watchdog:
        _watchdog[0].cut.pop(key, None)
