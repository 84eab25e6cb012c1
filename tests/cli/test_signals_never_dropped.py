"""A stop signal whose handler Python runs after its deferred section ended is not dropped.

CPython runs a Python signal handler in the main thread at its next check, which can come after the
section that installed ``_record`` has ended (the signal taken by another thread, or handlers restored
out of order).  ``_record`` used to return without recording it anywhere: a SIGTERM lost, and
``abstat bisect`` ran on to its end with status 0 (2 of 80 SIGTERMs in a stress run).
"""

from __future__ import annotations

import signal

import pytest

from abstat.box.runner import signals


def test_a_late_record_with_no_section_stops_like_ctrl_c():
    heard: list[int] = []
    signals.add_listener(heard.append)
    previous = signal.signal(signal.SIGTERM, signals._record)  # left in place out of order
    try:
        with pytest.raises(KeyboardInterrupt):
            signals._record(signal.SIGTERM, None)
    finally:
        signal.signal(signal.SIGTERM, previous)
        signals._listeners.remove(heard.append)
    assert heard == [signal.SIGTERM]


def test_a_late_record_hands_the_signal_to_the_handler_in_place():
    got: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))
    try:
        signals._record(signal.SIGHUP, None)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert got == [signal.SIGHUP]


def test_a_late_record_of_an_ignored_signal_is_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        signals._record(signal.SIGINT, None)  # nothing raised
    finally:
        signal.signal(signal.SIGINT, previous)
