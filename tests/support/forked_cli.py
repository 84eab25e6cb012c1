"""``python -m abstat ARGS`` for the bad-input tests, without paying an interpreter's start-up per call.

The first call of each sub-command runs the real ``python -m abstat`` (so every command's exit status and
standard error are checked through a real interpreter at least once).  Later calls fork this test process
and run ``abstat.cli.main`` in the child exactly as ``abstat/__main__.py`` does: its own process group,
working directory, environment, ``sys.argv`` and standard streams on files, atexit handlers of its own,
a traceback and status 1 for an uncaught exception, the status of ``SystemExit`` otherwise.  What the
tests see is the same ``subprocess.CompletedProcess``: returncode, stdout and stderr bytes.
"""

from __future__ import annotations

import atexit
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

_REAL: set[str] = set()


def run(
    args: list[str], *, cwd: str | os.PathLike, stdin: bytes, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    command = args[0] if args else ""
    if command not in _REAL or os.environ.get("ABSTAT_TEST_NO_FORK"):
        _REAL.add(command)
        return subprocess.run(
            [sys.executable, "-m", "abstat", *args], cwd=cwd, input=stdin, capture_output=True, timeout=timeout, env=env
        )
    streams = [tempfile.TemporaryFile() for _ in range(3)]
    streams[0].write(stdin)
    streams[0].seek(0)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os._exit(_child(args, cwd, env, streams))
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            _kill(pid)
            raise subprocess.TimeoutExpired(["abstat", *args], timeout)
        time.sleep(0.002)
    out, err = (_read(stream) for stream in streams[1:])
    streams[0].close()
    return subprocess.CompletedProcess(["abstat", *args], os.waitstatus_to_exitcode(status), out, err)


def _read(stream) -> bytes:
    stream.seek(0)
    data = stream.read()
    stream.close()
    return data


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass
    os.waitpid(pid, 0)


def _child(args: list[str], cwd, env: dict[str, str], streams: list) -> int:  # pragma: no cover
    try:
        os.setpgid(0, 0)
        for fd, stream in enumerate(streams):
            os.dup2(stream.fileno(), fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
            signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdin = _text(0, "r", sys.__stdin__)
        sys.stdout = _text(1, "w", sys.__stdout__)
        sys.stderr = _text(2, "w", sys.__stderr__, line_buffering=True)
        import abstat

        sys.argv = [os.path.join(os.path.dirname(abstat.__file__), "__main__.py"), *args]
        atexit._clear()
    except BaseException:
        return 99
    code = 0
    try:
        from abstat.cli import main

        code = main(args)
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    return 0 if code is None else code if isinstance(code, int) else 1


def _text(fd: int, mode: str, like, line_buffering: bool = False) -> io.TextIOWrapper:
    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors=getattr(like, "errors", None) or "strict",
        line_buffering=line_buffering,
    )
