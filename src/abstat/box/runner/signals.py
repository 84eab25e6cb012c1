"""Teardown that a second Ctrl-C or SIGTERM cannot abandon.

:func:`deferred` blocks SIGINT, SIGTERM and SIGHUP while a short critical
section runs (stopping processes, committing a run): a signal that arrives
meanwhile is held, not lost.  Code inside may call :func:`wait_for_signal`
instead of sleeping, to learn at once that the user insists (and escalate,
e.g. from SIGTERM to SIGKILL).  Signals still pending when the section ends
are either delivered (``deliver=True``: Ctrl-C then raises
KeyboardInterrupt right after the section, as does one that
:func:`wait_for_signal` consumed) or consumed and recorded in
:attr:`Deferred.received` (``deliver=False``).

Only the main thread receives signals in Python; elsewhere these are no-ops.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

try:  # the C functions behind ``signal``'s wrappers, which convert every result to enums (17 µs a call,
    # against 0.5-1 µs: a section is entered several times per run, between runs)
    import _signal as _raw
except ImportError:  # not CPython
    _raw = signal

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})

_active: list[Deferred] = []
_listeners: list[Callable[[int], None]] = []  # told of every stop signal a section holds (the store's watchdog)
_stopped: list[int] = []  # stop signals turned into KeyboardInterrupt since interrupt_on_termination()


@dataclass
class Deferred:
    """Signals received while deferred (``blocking``: blocked with the signal mask, else caught)."""

    blocking: bool
    received: list[int] = field(default_factory=list)
    reported: int = 0  # how many of ``received`` wait_for_signal has returned


def _can_block() -> bool:
    return (
        threading.current_thread() is threading.main_thread()
        and hasattr(signal, "pthread_sigmask")
        and hasattr(signal, "sigtimedwait")
    )  # macOS has no sigtimedwait: signals are then not held


@contextmanager
def deferred(deliver: bool = True) -> Iterator[Deferred]:
    state = Deferred(blocking=_can_block() and not any(d.blocking for d in _active))
    previous_mask = _raw.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if state.blocking else None
    # A signal sent to the process can land on another thread (rich's refresh thread, a
    # reader thread), which does not block it; Python then runs the handler in the main
    # thread.  Record such a signal instead of letting it raise inside the section.
    previous_handlers = {}
    if state.blocking:
        for signum in STOP_SIGNALS:
            try:
                previous_handlers[signum] = _raw.signal(signum, _record)
            except (OSError, ValueError):
                pass
    _active.append(state)
    try:
        yield state
    finally:
        if previous_mask is not None:
            if not deliver:
                while (got := _take(0)) is not None:
                    state.received.append(got)
            for signum, handler in previous_handlers.items():
                _raw.signal(signum, handler)
        _active.remove(state)  # after the handlers: a signal _record takes until then is this section's
        if previous_mask is not None:
            _raw.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
            if deliver and state.received:
                signal.raise_signal(state.received[0])  # consumed while waiting: act on it now


def add_listener(listener: Callable[[int], None]) -> None:
    """Call ``listener(signum)`` whenever a stop signal arrives inside a :func:`deferred` section or
    where :func:`interrupt_on_termination` turns it into KeyboardInterrupt."""
    _listeners.append(listener)


def _record(signum: int, frame: FrameType | None) -> None:
    for listener in _listeners:
        listener(signum)
    for state in reversed(_active):
        if state.blocking:
            state.received.append(signum)
            return
    # No section holds it: Python ran this handler late, after its section had ended (a signal taken by
    # another thread) or a caller restored it out of order.  It is never dropped: the handler in place
    # now acts on it, and where that is this one, it stops what runs like Ctrl-C.
    handler = signal.getsignal(signum)
    if handler is _record or handler is None:
        raise KeyboardInterrupt
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)


def _take(timeout: float) -> int | None:
    if not _raw.sigpending() & STOP_SIGNALS and timeout <= 0:
        return None
    info = signal.sigtimedwait(STOP_SIGNALS, max(timeout, 0.0))
    return info.si_signo if info is not None else None


def wait_for_signal(timeout: float) -> int | None:
    """Sleep up to ``timeout`` seconds; return a stop signal that arrived
    (consumed, and recorded in the innermost :func:`deferred`), else None."""
    for state in reversed(_active):
        if state.blocking:
            deadline = time.monotonic() + timeout
            while True:
                if len(state.received) > state.reported:  # e.g. recorded by _record (another thread's)
                    state.reported += 1
                    return state.received[state.reported - 1]
                remaining = deadline - time.monotonic()
                got = _take(min(max(remaining, 0.0), 0.05))
                if got is not None:
                    state.received.append(got)
                    state.reported = len(state.received)
                    return got
                if remaining <= 0:
                    return None
    time.sleep(timeout)
    return None


def interrupted() -> bool:
    """True when a stop signal was received inside the current deferred sections."""
    return any(state.received for state in _active)


def _raise_interrupt(signum: int, frame: object) -> None:
    for listener in _listeners:
        listener(signum)
    _stopped.append(signum)
    raise KeyboardInterrupt


def raise_if_stopped() -> None:
    """Raise KeyboardInterrupt again if a stop signal was turned into one since
    :func:`interrupt_on_termination` and the program goes on: something swallowed it (an extension
    module whose import the signal cut raises ImportError, which an optional import catches).  Called
    where a long command starts its next step."""
    if _stopped:
        raise KeyboardInterrupt


def interrupt_on_termination() -> dict[int, object]:
    """SIGTERM and SIGHUP stop what runs like Ctrl-C (KeyboardInterrupt): the run in progress and
    the background load are killed, what ran is kept; the listeners hear of each (and of Ctrl-C).
    Returns the previous handlers, for :func:`restore_handlers`; nothing changes outside the main thread."""
    previous: dict[int, object] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    _stopped.clear()
    interrupt = [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    for signum in (*interrupt, signal.SIGTERM, signal.SIGHUP):
        try:
            previous[signum] = signal.signal(signum, _raise_interrupt)
        except (OSError, ValueError):
            pass
    return previous


def restore_handlers(previous: dict[int, object]) -> None:
    """Put back the handlers :func:`interrupt_on_termination` replaced; the stops it recorded end with it."""
    _stopped.clear()
    for signum, handler in previous.items():
        signal.signal(signum, handler)  # type: ignore[arg-type]
