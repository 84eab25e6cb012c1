"""An interrupted ``python -m abstat`` says so in one line and ends with status 130, never by a signal.

CI once saw ``abstat bisect: interrupted`` then status -2: the SIGTERM had landed in an ``exec`` of a
string (a dataclass's generated methods, made while a module was imported); CPython remembered that
KeyboardInterrupt although abstat caught it, and ``python -m`` then re-sent itself SIGINT after its
exit.  A second Ctrl-C or SIGTERM while abstat exits must end it at once (a wait at exit, such as on a
store server that froze, is never waited out), also with 130.

Each case is a command module of the test's, run through abstat's own entry (``main()`` as the program,
started with ``python -m`` as ``python -m abstat`` is), every signal sent at a point the command fixes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support import paths

LAUNCHER = """
import sys
from abstat.cli import main, registry

registry.COMMANDS["bisect"] = ("interrupted_command", "the test's command")
sys.argv = [sys.argv[0], "bisect"]
sys.exit(main())
"""


def _abstat(tmp_path, command: str) -> subprocess.CompletedProcess:
    (tmp_path / "launch_abstat.py").write_text(LAUNCHER)
    (tmp_path / "interrupted_command.py").write_text(textwrap.dedent(command))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([paths.SRC, str(tmp_path)])}
    env.pop("ABSTAT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "launch_abstat"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("who_says", ["abstat", "the command"])
def test_a_signal_caught_inside_a_string_exec_ends_with_130(tmp_path, signum, who_says):
    """The signal lands while an ``exec`` of a string runs; abstat (``bisect``: SIGTERM as Ctrl-C) or
    the command itself (as ``run`` does, with its own line) catches the KeyboardInterrupt."""
    catch = who_says == "the command"
    done = _abstat(
        tmp_path,
        f"""
        import sys
        from abstat.box.runner import signals

        GENERATED = "import os, signal\\nos.kill(os.getpid(), signal.{signum})\\nwhile True:\\n    pass\\n"

        def main(rest):
            previous = signals.interrupt_on_termination()
            try:
                exec(GENERATED)
            except KeyboardInterrupt:
                if not {catch}:
                    raise
                sys.stderr.write("abstat bisect: interrupted: its own line\\n")
                return 130
            finally:
                signals.restore_handlers(previous)
        """,
    )
    said = "abstat bisect: interrupted: its own line\n" if catch else "abstat bisect: interrupted\n"
    assert (done.returncode, done.stderr) == (130, said)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_second_signal_while_exiting_ends_the_wait_with_130(tmp_path, signum):
    """After "interrupted", an exit function waits on something only a signal ends (a store server
    that froze); the second signal comes during that wait: abstat ends at once, with 130."""
    done = _abstat(
        tmp_path,
        f"""
        import atexit, os, signal, threading, time

        def wait_at_exit():
            threading.Timer(0.2, os.kill, (os.getpid(), signal.{signum})).start()
            time.sleep(600)

        def main(rest):
            atexit.register(wait_at_exit)
            raise KeyboardInterrupt
        """,
    )
    assert (done.returncode, done.stderr) == (130, "abstat bisect: interrupted\n")


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_interpreters_last_teardown_keeps_130(tmp_path, signum):
    """The second signal comes while the interpreter tears its modules down (after every exit function,
    once Python has put the signals' default actions back): the status is still 130."""
    marker = tmp_path / "torn-down"
    done = _abstat(
        tmp_path,
        f"""
        import os, signal

        class Late:
            def __del__(self, kill=os.kill, pid=os.getpid(), write=os.open, close=os.close):
                close(write({str(marker)!r}, os.O_CREAT | os.O_WRONLY, 0o644))
                kill(pid, signal.{signum})

        KEPT = Late()  # in this module's namespace until the interpreter clears the modules

        def main(rest):
            raise KeyboardInterrupt
        """,
    )
    assert marker.exists()  # the signal was sent during the teardown
    assert (done.returncode, done.stderr) == (130, "abstat bisect: interrupted\n")


def test_an_import_that_ctrl_c_cut_is_an_interruption(tmp_path):
    """pybind11 extension modules turn a KeyboardInterrupt during their initialization into
    ``ImportError: initialization failed`` (its cause): interrupted, not an internal error."""
    done = _abstat(
        tmp_path,
        """
        def main(rest):
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as cut:
                raise ImportError("initialization failed") from cut
        """,
    )
    assert (done.returncode, done.stderr) == (130, "abstat bisect: interrupted\n")


def test_main_called_by_another_program_leaves_its_signals_alone(tmp_path):
    """``abstat.cli.main(ARGS)`` inside another program (a test, a script): interrupted, it returns 130
    and the caller's signal handlers are as they were."""
    (tmp_path / "interrupted_command.py").write_text("def main(rest):\n    raise KeyboardInterrupt\n")
    code = textwrap.dedent(
        """
        import signal, sys
        from abstat.cli import main, registry

        registry.COMMANDS["bisect"] = ("interrupted_command", "the test's command")
        before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
        status = main(["bisect"])
        after = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
        print(status, before == after)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([paths.SRC, str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "130 True\n", "abstat bisect: interrupted\n")
