"""How an interrupted ``abstat`` ends: with status 130, whatever arrives while the interpreter exits.

Once a command has been interrupted (Ctrl-C, or SIGTERM/SIGHUP where a command turns them into Ctrl-C)
and has said so, what it ran is stopped and what it recorded is kept; only the interpreter's exit is
left.  Two things used to end that exit by a signal instead of 130 (``python -m abstat`` waited on as
status -2, or -15):

* CPython (3.10 to 3.13 at least) remembers a KeyboardInterrupt that ended an ``eval``/``exec`` of a
  string (a dataclass's or a namedtuple's generated methods, made while a lazily imported module
  loads) even when the program caught it, and ``python -m`` then ends by re-sending itself SIGINT
  (``_Py_UnhandledKeyboardInterrupt``, checked after finalization; CI: ``abstat bisect: interrupted``
  then -2, a SIGTERM having landed in an import).  Every ``eval`` of a string starts by clearing it:
  :func:`forget_caught_interrupts`.
* A second Ctrl-C or SIGTERM during the exit: a KeyboardInterrupt in an exit function (a traceback),
  or death by the signal once the handlers are gone.  :func:`arm` makes SIGINT, SIGTERM and SIGHUP
  end the process at once with 130 (a wait at exit, such as on a store server that froze, is cut,
  never waited out); after every other exit function, with only the interpreter's own teardown left
  (no waits), they are ignored instead, as Python would otherwise restore their default actions.

:func:`watch` registers that last exit function; it must run before any other is registered.
"""

import os
import sys

# ``signal`` (and the enum module it loads) and ``contextlib`` are imported only when needed:
# ``abstat ministat`` starts as fast as Python itself.  No ``from __future__ import annotations`` (the
# annotations here hold at run time): that statement imports the ``__future__`` module, which
# ``abstat --help`` otherwise does not.

_state: dict[str, object] = {"watching": False, "armed": False, "line": b"", "ending": False}


def watch() -> None:
    """This process is ``abstat`` (not a program or a test calling :func:`abstat.cli.main`): register
    the exit function that runs after all others (exit functions run last-registered first)."""
    import atexit

    if not _state["watching"]:
        _state["watching"] = True
        atexit.register(_after_the_exit_functions)


def arm(line: str = "") -> None:
    """From now on SIGINT, SIGTERM and SIGHUP end the process with status 130, after writing ``line``
    (the one line saying it was interrupted) if :func:`said` has not been called yet.  Only in a
    process whose exit is watched (:func:`watch`): another program's signals are its own."""
    if not _state["watching"]:
        return
    _state["line"] = line.encode("utf-8", "replace")
    _state["armed"] = True
    _handle_stop_signals(_end_now)


def said() -> None:
    """The line :func:`arm` was given has been written."""
    _state["line"] = b""


def forget_caught_interrupts() -> None:
    """Clear CPython's memory of a KeyboardInterrupt that ended an ``eval``/``exec`` of a string and was
    caught since (see the module's text): evaluating a string resets it before it runs."""
    eval("None")


def caused_by_interrupt(err: BaseException) -> bool:
    """Whether ``err`` was raised because of a KeyboardInterrupt (``raise ... from``): an extension
    module whose initialization a Ctrl-C cut (pybind11's ``ImportError: initialization failed``)."""
    seen: set[int] = set()
    cause = err.__cause__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def _end_now(signum: int, frame: object) -> None:
    if _state["ending"]:  # a flush below blocks (a reader that stopped reading): this signal ends it
        os._exit(130)
    _state["ending"] = True
    line = _state["line"]
    _state["line"] = b""
    _flush(sys.stdout)
    _flush(sys.stderr)
    if isinstance(line, bytes) and line:
        try:  # noqa: SIM105 -- no import of contextlib in a signal handler
            os.write(2, line)
        except OSError:
            pass
    os._exit(130)


def _after_the_exit_functions() -> None:
    if not _state["armed"]:
        return
    if not _flush(sys.stdout):  # its reader went away: the interpreter's last flush would fail too (status 120)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
    _flush(sys.stderr)
    import signal

    _handle_stop_signals(signal.SIG_IGN)


def _handle_stop_signals(handler: object) -> None:
    import contextlib
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(OSError, ValueError):  # not the main thread
            signal.signal(signum, handler)  # type: ignore[arg-type]


def _flush(stream: object) -> bool:
    try:
        stream.flush()  # type: ignore[attr-defined]
    except Exception:
        return False
    return True
