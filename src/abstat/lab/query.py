"""One question to each host, in parallel, through the shipped runner.

``abstat doctor --host`` uses it: connect (the lab's :class:`SshHost`), ship
the bundle, read the runner's hello, send one request line, read the one
answer.  A host that cannot be reached, or does not answer within the
timeout, gets its one-line reason instead; the other hosts are unaffected.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abstat.lab import bundle
from abstat.lab.config import HostSpec
from abstat.lab.boxsession import BoxSession
from abstat.lab.protocol import NoAnswer, ProtocolError
from abstat.lab.ssh import SshError, SshHost, control_directory


MAX_TIMEOUT_S = 86400.0


@dataclass
class HostAnswer:
    host: HostSpec
    answer: Any = None  # the value of the reply's key, when it came
    error: str | None = None  # why not, in one line
    hello: dict[str, Any] = field(default_factory=dict)


def _ask(ssh: SshHost, request: dict[str, Any], key: str, timeout: float, result: HostAnswer) -> None:
    try:
        ssh.connect(timeout)
    except SshError as err:
        result.error = f"cannot reach the host: {err}"
        return
    session = BoxSession(ssh.open(bundle.remote_command()))
    deadline = time.monotonic() + timeout + 5
    try:
        process = session.process
        assert process.stdin is not None
        try:
            process.stdin.write(bundle.payload())
            process.stdin.flush()
        except (OSError, ValueError):
            pass
        hello = session.hello(max(1.0, deadline - time.monotonic()))
        if hello is None:
            _, reason = session.end(10)
            result.error = f"cannot start the runner with python3 on the host: {reason or 'the session ended'}"
            return
        try:
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
        except (OSError, ValueError):
            pass
        result.hello = {"machine": hello.machine, "boot_id": hello.boot_id}
        message = session.message(max(1.0, deadline - time.monotonic()))
        if message is not None and key in message:
            result.answer = message[key]
            return
        result.error = f"the host did not answer ({session.end(10)[1] or 'the session ended'})"
    except NoAnswer:
        session.kill()
        result.error = f"no answer within {timeout:g} s"
    except ProtocolError as err:
        session.kill()
        result.error = f"the host sent an invalid answer: {err}"
    finally:
        ssh.close_session(session)


def ask_hosts(hosts: Sequence[HostSpec], request: dict[str, Any], *, timeout: float = 30.0) -> list[HostAnswer]:
    """``request`` (one key) to every host at once; answers in the order of ``hosts``."""
    (key,) = request
    timeout = min(timeout, MAX_TIMEOUT_S) if timeout > 0 else MAX_TIMEOUT_S  # inf, nan: a day is "forever"
    results = [HostAnswer(host) for host in hosts]
    control_dir = control_directory()
    connections = [SshHost(host.label, host.destination, control_dir) for host in hosts]
    threads = [
        threading.Thread(target=_ask, args=(ssh, request, key, timeout, result), daemon=True)
        for ssh, result in zip(connections, results)
    ]
    try:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + timeout + 10  # connecting may take the timeout; answering a little more
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
    finally:
        for ssh, thread, result in zip(connections, threads, results):
            if thread.is_alive():
                ssh.abort()  # the reader sees the end of its session and returns
                thread.join(10)
                result.answer, result.error = None, f"no answer within {timeout:g} s"
            ssh.close()
        shutil.rmtree(control_dir, ignore_errors=True)
    return results
