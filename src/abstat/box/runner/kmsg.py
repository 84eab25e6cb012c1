"""Metrics from the kernel log: ``--metric-source kmsg``.

A kernel module (``insmod ipi_benchmark.ko``) prints its results with
``printk``, not on standard output.  This collector notes the end of the
kernel log (``/dev/kmsg``, seeked to its end) just before each measured
command starts, reads every record written from there once the command has
ended, and applies the ``--metric`` patterns to their text, one line per
record, as :mod:`abstat.box.runner.metrics` does to a program's output.  Records
from before the run are never read.  Only the kernel's own records count: of
the kernel facility (any process may write to /dev/kmsg, as facility
``user``) and stamped within the run's window (from just before the command
started to its end); the others are counted in a note, never matched.  A
record the kernel writes for another process in that window (a crash report
naming it) still counts: the note names how many lines matched, so a value
from somewhere else shows.  ``ABSTAT_KMSG_USER_LINES=1`` in the runner's
environment also takes records of user space (tests write to /dev/kmsg as a
module would; no other use).

The log's clock (the kernel's ``local_clock``) is not CLOCK_MONOTONIC: NTP
slews one and not the other, so they drift apart with uptime (4 ms after 8
hours on the 2-core VM; a fixed slack of 2 ms then refused every record).
When the log is opened, one record is written to it (``abstat: kernel log
clock reference``, facility user, level debug) and read back: its stamp
against CLOCK_MONOTONIC read around the write gives the offset the window is
moved by.  Where the log cannot be written, the offset is taken as 0.

Standard library only: on a lab run this reads the test box's own log.
"""

from __future__ import annotations

import errno
import os
import re
import time

from abstat.box.runner.metrics import extract_regex_metrics
from abstat.box.runner.model import FieldError, Measurement, MetricPattern, RunContext

KMSG_PATH = "/dev/kmsg"
MAX_RECORDS = 100_000  # per run: a flood beyond this is cut with a note
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
WINDOW_SLACK_US = 2_000  # the log's clock and CLOCK_MONOTONIC, read a little apart
KERNEL_FACILITY = 0


def record_header(record: bytes) -> tuple[int, int] | None:
    """(facility, timestamp in microseconds since boot) of a ``PRIO,SEQ,USEC,FLAGS;`` record, or None."""
    head = record.split(b";", 1)[0].split(b",")
    if len(head) < 3 or not (head[0].isdigit() and head[2].isdigit()) or len(head[0]) > 6 or len(head[2]) > 20:
        return None
    return int(head[0]) >> 3, int(head[2])


def open_kmsg(path: str = KMSG_PATH) -> int:
    """The log opened for reading without blocking (ValueError: one line naming why not)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        hint = " (reading the kernel log needs root or CAP_SYSLOG)" if err.errno in (errno.EACCES, errno.EPERM) else ""
        raise FieldError(
            f"{{metric_source}} kmsg: cannot read {path}: {err.strerror or err}{hint}", "metric_source"
        ) from None


CLOCK_PROBE = b"<15>abstat: kernel log clock reference\n"  # facility user (1 << 3) + debug (7)


def clock_offset(fd: int, path: str = KMSG_PATH) -> int:
    """The log's clock minus CLOCK_MONOTONIC, in microseconds (see the module): 0 when the log cannot be
    written or the reference record is not found among the next records."""
    try:
        os.lseek(fd, 0, os.SEEK_END)
        writer = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            before = _now_us()
            os.write(writer, CLOCK_PROBE)
            after = _now_us()
        finally:
            os.close(writer)
        for _ in range(1000):
            record = os.read(fd, 8192)
            header = record_header(record)
            if header is not None and record_text(record) == CLOCK_PROBE[4:-1].decode():
                return header[1] - (before + after) // 2
    except OSError:  # not writable (no root), the log moved on, nothing more to read: no correction
        return 0
    return 0


def check_readable(path: str = KMSG_PATH) -> None:
    """ValueError (one line) when the kernel log cannot be read here."""
    os.close(open_kmsg(path))


def record_text(record: bytes) -> str:
    """The message of one ``/dev/kmsg`` record (``PRIO,SEQ,USEC,FLAGS;TEXT`` and
    `` KEY=VALUE`` dictionary lines), its ``\\xNN`` escapes decoded."""
    text = record.decode("utf-8", errors="replace")
    head, sep, rest = text.partition(";")
    if not sep:
        return ""
    message = rest.split("\n", 1)[0]
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), message)


class KmsgCollector:
    """Notes the log's end before each measured run; reads what was written by its end."""

    def __init__(self, patterns: list[MetricPattern], path: str = KMSG_PATH) -> None:
        self.patterns = list(patterns)
        self.path = path
        self._fd = open_kmsg(path)
        self._user_lines = os.environ.get("ABSTAT_KMSG_USER_LINES") == "1"
        self._start_us = 0
        self._offset_us = clock_offset(self._fd, path)

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        os.lseek(self._fd, 0, os.SEEK_END)  # the next read is the first record written after now
        self._start_us = _now_us() + self._offset_us - WINDOW_SLACK_US
        return argv

    def _accept(self, record: bytes, end_us: int) -> bool:
        """Whether a record is the kernel's own, written within the run's window."""
        header = record_header(record)
        if header is None:
            return False
        facility, stamp = header
        return (facility == KERNEL_FACILITY or self._user_lines) and self._start_us <= stamp <= end_us

    def _records(self) -> tuple[list[str], list[str]]:
        lines: list[str] = []
        notes: list[str] = []
        end_us, ignored = _now_us() + self._offset_us + WINDOW_SLACK_US, 0
        for _ in range(MAX_RECORDS):
            try:
                record = os.read(self._fd, 8192)
            except BlockingIOError:
                break
            except OSError as err:
                if err.errno == errno.EPIPE:  # overwritten before it was read: the next read goes on
                    notes.append(
                        "kernel log: records of this run were overwritten before they were read "
                        "(the log buffer is too small for what the run wrote)"
                    )
                    continue
                notes.append(f"kernel log: cannot read {self.path}: {err.strerror or err}")
                break
            if not record:
                break
            if self._accept(record, end_us):
                lines.append(record_text(record))
            else:
                ignored += 1
        else:
            notes.append(f"kernel log: more than {MAX_RECORDS:,} records during this run: the rest not read")
        if ignored:
            notes.append(
                f"kernel log: {ignored} record(s) not written by the kernel during this run ignored "
                "(from user space, or stamped outside the run)"
            )
        return lines, notes

    def collect(self, measurement: Measurement, context: RunContext) -> None:
        lines, notes = self._records()
        measurement.notes.extend(notes)
        if not measurement.ok:
            return
        values, problems = extract_regex_metrics("".join(line + "\n" for line in lines), self.patterns)
        matched = sum(1 for line in lines if any(p.regex.search(line) for p in self.patterns))
        if matched:  # where the values came from: a line of another origin would show here
            measurement.notes.append(f"kernel log: {matched} line(s) of the kernel's matched, of {len(lines)} read")
        for pattern in self.patterns:
            if pattern.unit:
                measurement.units[pattern.name] = pattern.unit
        for name, numbers in values.items():
            measurement.values[name] = numbers
        if problems:  # a module that did not print its result did not succeed
            measurement.status = "failed"
            measurement.notes.extend(f"kernel log: {problem}" for problem in problems)

    def close(self) -> list[str]:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        return []


def _now_us() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
