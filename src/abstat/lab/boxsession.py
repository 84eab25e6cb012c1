"""Reading a session with a test box: :class:`BoxSession` (the controller's side of the runner protocol).

:class:`BoxSession` reads a session's standard output in a thread of its own, in lines of at most
:data:`MAX_LINE` bytes, and drains standard error into its last lines, so that no pipe fills up and
nothing grows without bound; every wait on it has a timeout.  Before the hello at most
:data:`MAX_BANNER_LINES` lines (:data:`MAX_BANNER_BYTES`) of a login script's greeting are skipped;
after it, at most :data:`MAX_JUNK_LINES` lines that are not JSON objects.  The messages are checked by
:mod:`abstat.lab.protocol`'s ``decode_*``.
"""

from __future__ import annotations

import collections
import json
import math
import queue
import subprocess
import threading
import time
from typing import Any

from abstat.lab.protocol import MAX_TEXT, Hello, NoAnswer, ProtocolError, decode_hello

MAX_LINE = 4 << 20  # bytes of one line (a result of ~200,000 values)
MAX_BANNER_LINES = 200  # lines before the hello (a login script's greeting)
MAX_BANNER_BYTES = 1 << 20
MAX_JUNK_LINES = 1000  # lines that are not JSON objects, after the hello
STDERR_LINES = 20  # standard error lines kept (the last ones)


class BoxSession:
    """The pipes of one ssh session to a box, read by threads of its own.

    :meth:`hello` and :meth:`message` wait at most their ``timeout``;
    :meth:`close` ends the session whatever the box does (it is killed when
    it does not end by itself)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self._lines: queue.Queue[bytes | None | ProtocolError] = queue.Queue(maxsize=16)
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._junk = 0
        self._closed = threading.Event()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True, name="abstat-box-stdout"),
            threading.Thread(target=self._read_stderr, daemon=True, name="abstat-box-stderr"),
        ]
        for thread in self._threads:
            thread.start()

    def _put(self, item: bytes | None | ProtocolError) -> None:
        while not self._closed.is_set():
            try:
                self._lines.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        try:
            assert stream is not None
            while not self._closed.is_set():
                line = stream.readline(MAX_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_LINE:
                    self._put(ProtocolError(f"a line longer than {MAX_LINE} bytes"))
                    self.process.kill()  # a box that talks without end is ended
                    return
                self._put(line)
        except (OSError, ValueError):
            pass
        self._put(None)

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        try:
            assert stream is not None
            while True:
                line = stream.readline(MAX_TEXT)
                if not line:
                    return
                text = line.decode(errors="replace").strip()
                if text:
                    self._stderr.append(text[:1000])
        except (OSError, ValueError):
            return

    def _next_line(self, deadline: float) -> bytes | None:
        """The next line, None at the end of the session; ProtocolError past the deadline."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoAnswer("no answer in time")
            try:
                item = self._lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if isinstance(item, ProtocolError):
                raise item
            if item is None:
                self._put(None)  # the end stays the end
                return None
            return item

    def hello(self, timeout: float) -> Hello | None:
        """The runner's hello, past a login script's greeting; None when the session ended first."""
        deadline = time.monotonic() + timeout
        skipped = size = 0
        while True:
            line = self._next_line(deadline)
            if line is None:
                return None
            message = _message(line)
            if message is not None and "hello" in message:
                return decode_hello(message["hello"])
            skipped += 1
            size += len(line)
            if skipped > MAX_BANNER_LINES or size > MAX_BANNER_BYTES:
                raise ProtocolError(
                    f"more than {MAX_BANNER_LINES} lines or {MAX_BANNER_BYTES} bytes before "
                    "the runner's hello (a login script that prints too much?)"
                )

    def message(self, timeout: float = math.inf) -> dict[str, Any] | None:
        """The next JSON object the runner sent (None: the session ended)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._next_line(deadline)
            if line is None:
                return None
            message = _message(line)
            if message is not None:
                return message
            self._junk += 1
            if self._junk > MAX_JUNK_LINES:
                raise ProtocolError(f"more than {MAX_JUNK_LINES} lines that are not the runner's messages")

    def stderr_tail(self) -> str:
        """The last line the session wrote on standard error so far."""
        return self._stderr[-1] if self._stderr else ""

    def wait(self, timeout: float) -> int:
        """The session's exit status, killing it after ``timeout`` seconds."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def end(self, timeout: float) -> tuple[int, str]:
        """Wait for the session to end (killing it after ``timeout``): its exit status and the last
        line of its standard error."""
        code = self.wait(timeout)
        self._threads[1].join(2)
        return code, self.stderr_tail()

    def kill(self) -> None:
        """End the session at once (a box that broke the protocol)."""
        if self.process.poll() is None:
            self.process.kill()

    def close(self, grace: float = 10.0) -> None:
        """Close standard input (the runner ends, its cleanup hooks run), wait at most ``grace``
        seconds, kill; then the readers end with the pipes."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        self.wait(grace)
        self._closed.set()
        for thread in self._threads:
            thread.join(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None and not any(t.is_alive() for t in self._threads):
                try:
                    stream.close()
                except OSError:
                    pass


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None
