"""Metrics from the kernel log: ``--metric-source kmsg``.

A kernel module (``insmod ipi_benchmark.ko``) prints its results with
``printk``, not on standard output.  This collector notes the end of the
kernel log (``/dev/kmsg``, seeked to its end) just before each measured
command starts, reads every record written from there once the command has
ended, and applies the ``--metric`` patterns to their text, one line per
record, as :mod:`abstat.runner.metrics` does to a program's output.  Records
from before the run are never read; records that any other process or the
kernel writes during the run are (the log is the whole machine's).

Standard library only: on a lab run this reads the test box's own log.
"""
from __future__ import annotations

import errno
import os
import re

from abstat.runner.metrics import extract_regex_metrics
from abstat.runner.model import Measurement, MetricPattern, RunContext

KMSG_PATH = "/dev/kmsg"
MAX_RECORDS = 100_000  # per run: a flood beyond this is cut with a note
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


def open_kmsg(path: str = KMSG_PATH) -> int:
    """The log opened for reading without blocking (ValueError: one line naming why not)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        hint = " (reading the kernel log needs root or CAP_SYSLOG)" if err.errno in (errno.EACCES, errno.EPERM) else ""
        raise ValueError(f"--metric-source kmsg: cannot read {path}: {err.strerror or err}{hint}") from None


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

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        os.lseek(self._fd, 0, os.SEEK_END)  # the next read is the first record written after now
        return argv

    def _records(self) -> tuple[list[str], list[str]]:
        lines: list[str] = []
        notes: list[str] = []
        while len(lines) < MAX_RECORDS:
            try:
                record = os.read(self._fd, 8192)
            except BlockingIOError:
                return lines, notes
            except OSError as err:
                if err.errno == errno.EPIPE:  # overwritten before it was read: the next read goes on
                    notes.append("kernel log: records of this run were overwritten before they were read "
                                 "(the log buffer is too small for what the run wrote)")
                    continue
                notes.append(f"kernel log: cannot read {self.path}: {err.strerror or err}")
                return lines, notes
            if not record:
                return lines, notes
            lines.append(record_text(record))
        notes.append(f"kernel log: more than {MAX_RECORDS:,} records during this run: the rest not read")
        return lines, notes

    def collect(self, measurement: Measurement, context: RunContext) -> None:
        lines, notes = self._records()
        measurement.notes.extend(notes)
        if not measurement.ok:
            return
        values, problems = extract_regex_metrics("".join(line + "\n" for line in lines), self.patterns)
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
