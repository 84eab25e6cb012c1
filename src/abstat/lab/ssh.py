"""The lab's transport: the real ``ssh`` client, one master connection per host.

The destination goes to ``ssh`` unchanged, so ``~/.ssh/config`` aliases,
keys, agents, ports and jump hosts work as for ``ssh DEST``.
``$ABSTAT_SSH_COMMAND`` (like ``GIT_SSH_COMMAND``) replaces ``ssh``, e.g.
``ssh -F ./lab_ssh_config``.

Each host gets a master connection (``ssh -M -N``) that abstat starts and
stops itself, with its control socket in a private directory; every
command and runner session multiplexes over it (``ControlPath``), so a run
costs no new TCP or key exchange.  When the master is gone (the host
rebooted) the next :meth:`SshHost.connect` starts a new one.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile
import threading
import time
from typing import Any

SSH_COMMAND_ENV = "ABSTAT_SSH_COMMAND"
# Keep-alives notice a host that vanished (a reboot does not close TCP):
# 3 missed answers at 5 s intervals drop the connection.
_COMMON_OPTIONS = ("-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")


def ssh_command() -> list[str]:
    text = os.environ.get(SSH_COMMAND_ENV, "").strip()
    return shlex.split(text) if text else ["ssh"]


OUTPUT_KEPT = 65536  # bytes kept of each stream of a command run on a box (its end)


def _keep_tail(stream: Any, buffer: bytearray) -> None:
    """Read ``stream`` to its end, keeping its last :data:`OUTPUT_KEPT` bytes in ``buffer``."""
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            buffer.extend(chunk)
            if len(buffer) > OUTPUT_KEPT:
                del buffer[: len(buffer) - OUTPUT_KEPT]
    except (OSError, ValueError):
        return
    finally:
        try:
            stream.close()
        except OSError:
            pass


class SshError(Exception):
    """The host could not be reached; the text is ssh's own explanation."""


def _last_line(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    lines = [line.strip() for line in (data or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def control_directory() -> str:
    """A new private directory (mode 0700) for the control sockets: under ``/tmp`` when it can be
    written, whatever ``$TMPDIR`` says (a socket's path must stay short: at most 107 bytes, and ssh
    adds a suffix while it creates it), else under the temporary directory."""
    for base in ("/tmp", None):
        try:
            return tempfile.mkdtemp(prefix="abstat-ssh-", dir=base)
        except OSError:
            if base is None:
                raise
    raise AssertionError("unreachable")


class SshHost:
    """One ssh destination, with abstat's own master connection to it."""

    def __init__(self, label: str, destination: str, control_dir: str) -> None:
        self.label = label
        self.destination = destination
        name = hashlib.sha256(f"{label}\0{destination}".encode(errors="surrogateescape")).hexdigest()[:16]
        self.control_path = os.path.join(control_dir, f"{name}.sock")  # no label text in a path ssh expands (%)
        self._master: subprocess.Popen | None = None
        self._master_log = os.path.join(control_dir, f"{name}.log")
        self._lock = threading.Lock()
        self._sessions: list[subprocess.Popen] = []

    def _argv(self, *options: str) -> list[str]:
        from abstat.lab.testbox.paths import ssh_options  # a test box that is up: its own ssh configuration

        return [
            *ssh_command(),
            *ssh_options(self.destination),
            *_COMMON_OPTIONS,
            "-o",
            f"ControlPath={self.control_path}",
            *options,
        ]

    def command_argv(self, remote_command: str) -> list[str]:
        """``ssh`` running ``remote_command`` over the master (or directly when there is none)."""
        return [*self._argv("-o", "ControlMaster=no", "-T"), "--", self.destination, remote_command]

    # -- the master connection ----------------------------------------

    def connected(self) -> bool:
        master = self._master
        return master is not None and master.poll() is None and os.path.exists(self.control_path)

    def connect(self, timeout: float) -> None:
        """Start the master connection; SshError with ssh's reason when it fails."""
        if self.connected():
            return
        self.disconnect()
        try:
            os.unlink(self.control_path)
        except FileNotFoundError:
            pass
        seconds = max(1, int(min(timeout, 30)))
        try:
            log = open(self._master_log, "wb")
        except OSError as err:  # the control directory is gone: the experiment is ending
            raise SshError(f"cannot write {self._master_log}: {err.strerror}") from None
        with log:
            master = subprocess.Popen(
                [
                    *self._argv("-M", "-N", "-o", "ControlPersist=no", "-o", f"ConnectTimeout={seconds}"),
                    "--",
                    self.destination,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self._master = master
        deadline = time.monotonic() + timeout + 5
        while not os.path.exists(self.control_path):
            if master.poll() is not None or time.monotonic() > deadline:
                self.disconnect()
                try:
                    with open(self._master_log, "rb") as log_read:
                        reason = _last_line(log_read.read())
                except OSError:  # removed by close() meanwhile (the experiment is ending)
                    reason = ""
                raise SshError(reason or f"ssh {self.destination} exited with status {master.returncode}")
            time.sleep(0.01)

    def disconnect(self) -> None:
        master, self._master = self._master, None
        if master is None:
            return
        if master.poll() is None:
            master.terminate()
            try:
                master.wait(timeout=5)
            except subprocess.TimeoutExpired:
                master.kill()
                master.wait()

    # -- commands and sessions ----------------------------------------

    def run(self, remote_command: str, timeout: float) -> tuple[int, str, str]:
        """Run a command on the host: (exit status, stdout, stderr); 255 is ssh's own failure.

        Of each stream only the last :data:`OUTPUT_KEPT` bytes are kept (a box cannot fill the
        workstation's memory); after ``timeout`` the session is killed (status -1)."""
        try:
            process = self.open(remote_command, stdin=subprocess.DEVNULL)
        except OSError as error:
            raise SshError(f"cannot run ssh: {error}") from None
        kept: list[bytearray] = [bytearray(), bytearray()]
        readers = [
            threading.Thread(target=_keep_tail, args=(stream, buffer), daemon=True)
            for stream, buffer in zip((process.stdout, process.stderr), kept)
        ]
        for reader in readers:
            reader.start()
        code: int | None
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = None
        finally:
            self._forget(process)
        for reader in readers:
            reader.join(5)
        out, err = (bytes(buffer).decode(errors="replace") for buffer in kept)
        if code is None:
            return -1, out, f"no answer within {timeout:g} s"
        return code, out, err

    def open(self, remote_command: str, *, stdin: int = subprocess.PIPE) -> subprocess.Popen:
        """A running ``ssh`` session with pipes (the caller waits for it)."""
        process = subprocess.Popen(
            self.command_argv(remote_command), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        with self._lock:
            self._sessions.append(process)
        return process

    def _forget(self, process: subprocess.Popen) -> None:
        with self._lock:
            if process in self._sessions:
                self._sessions.remove(process)

    def close_session(self, session: Any) -> None:
        """End a :class:`abstat.lab.boxsession.BoxSession` (at most 10 s after its input closes), or
        a plain session from :meth:`open` (killed if still running, then forgotten)."""
        if isinstance(session, subprocess.Popen):
            if session.poll() is None:
                session.kill()
                session.wait()
            self._forget(session)
            return
        session.close()
        self._forget(session.process)

    def abort(self) -> None:
        """Kill every session and the master (Ctrl-C, end of the experiment)."""
        with self._lock:
            sessions = list(self._sessions)
        for process in sessions:
            if process.poll() is None:
                process.kill()
        self.disconnect()

    def close(self) -> None:
        self.abort()
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for process in sessions:
            process.wait()
        for path in (self.control_path, self._master_log):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
