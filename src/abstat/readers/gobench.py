"""Go benchmark text, read as golang.org/x/perf/benchfmt reads it.

The format (golang.org/design/14313-benchmark-format, as benchfmt
implements it):

- A line that starts with ``Benchmark`` is a result:
  ``Benchmark<name> <iterations> <value> <unit> [<value> <unit>...]``.
  Any name is accepted, ``Benchmarkuber_zap_text`` (bent's size files)
  included.  A bare ``BenchmarkName`` line (``go test -v`` prints one
  before the result) is skipped.  Fields are separated by white space; the
  iteration count is a Go integer and the values Go floats (``1_000`` is
  not a number, in Go either).  A line that does not parse is reported,
  with its file and line number, and skipped: the rest of the file is read.
- ``key: value`` lines (the key starts with a lower-case letter and holds
  no space or upper-case letter) set configuration for the results that
  follow; ``key:`` alone clears it.
- ``Unit <unit> key=value...`` lines give unit metadata for the whole file;
  ``assume=exact`` says the unit is measured without noise (binary sizes).
- Every other line, an indented ``Benchmark`` line included, is ignored.

Labels: the configuration keys, ``benchmark`` (the name without its
``-N`` GOMAXPROCS suffix and ``key=value`` parts), ``gomaxprocs``, the
sub-benchmark keys, and ``metric`` (the unit).  A sub-benchmark key that
clashes with a configuration key or with one of abstat's own labels
(``/metric=``, ``/benchmark=``, ``/goos=`` beside a ``goos:`` line) is
kept as ``/key``, as benchstat names it, so that it neither merges
different benchmarks nor overwrites the configuration.
"""

from __future__ import annotations

import math
import re
from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet

# Labels abstat gives a result itself; a sub-benchmark key of the same name becomes "/key".
OWN_LABELS = frozenset({"benchmark", "metric", "gomaxprocs", "variant", "command"})

_INT = re.compile(r"[+-]?[0-9]+\Z")
# Go's strconv.ParseFloat syntax, decimal and hexadecimal, without underscores
# (Go allows them only after a base prefix: 0x_1p0; no benchmark prints that).
_FLOAT = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])\Z"
)
_PROCS = re.compile(r"-(\d+)\Z")
_INT64_MAX = 2**63 - 1


class _Skip(Exception):
    """A result line that is skipped; the message says why (None: silently)."""


def read_gobench(path: str, text: str | None = None) -> list[SampleSet]:
    """Go benchmark text: one set per (benchmark, configuration, unit).

    Lines that do not parse are skipped and reported in every set's
    ``notes`` (``file:line: message``), as benchstat reports them."""
    if text is None:
        from abstat.readers.source import read_text

        text = read_text(path)
    reading = _Reading(path)
    for lineno, line in enumerate(text.split("\n"), 1):
        reading.line(lineno, line[:-1] if line.endswith("\r") else line)
    if not reading.found:
        raise _nothing_read(path, reading.problems)
    notes = _notes(path, reading.problems, reading.indented)
    sets = list(reading.found.values())
    for sample_set in sets:
        sample_set.notes.extend(notes)
        _apply_unit_metadata(sample_set, reading.units.get(sample_set.unit or "", {}))
    return sets


def _nothing_read(path: str, problems: list[tuple[int, str]]) -> InputError:
    """The error for a file with no result read: the first line skipped, if any."""
    if problems:
        lineno, problem = problems[0]
        return InputError(f"{problem}; no result line could be read", path=path, line=lineno)
    return InputError("no Go benchmark result lines", path=path)


class _Reading:
    """The state of a file being read, line by line, as benchfmt reads it: the configuration in
    force, the units' metadata, the sets found, the lines skipped and the indented results."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.config: dict[str, str] = {}
        self.units: dict[str, dict[str, str]] = {}
        self.found: dict[tuple[tuple[str, str], ...], SampleSet] = {}
        self.problems: list[tuple[int, str]] = []
        self.indented = 0

    def line(self, lineno: int, line: str) -> None:
        if line.startswith("Benchmark"):
            self.result(lineno, line)
        elif line.startswith("Unit") and (len(line) == 4 or line[4].isspace()):
            self.problems.extend((lineno, problem) for problem in _unit_line(line, self.units))
        elif (key_value := _config_line(line)) is not None:
            self.configure(*key_value)
        elif line.lstrip().startswith("Benchmark") and line[:1].isspace():
            self.indented += 1

    def configure(self, key: str, value: str) -> None:
        """A configuration line: the key's value from here on (an empty value removes the key)."""
        if value:
            self.config[key] = value
        else:
            self.config.pop(key, None)

    def result(self, lineno: int, line: str) -> None:
        try:
            name, pairs = _result(line)
        except _Skip as skip:
            if skip.args[0]:
                self.problems.append((lineno, skip.args[0]))
            return
        labels = _labels(name, self.config)
        for value, unit in pairs:
            set_labels = dict(labels, metric=unit)
            key = tuple(sorted(set_labels.items()))
            if key not in self.found:
                self.found[key] = SampleSet(labels=set_labels, runs=[[]], source=self.path, unit=unit)
            self.found[key].runs[0].append(value)


def _notes(path: str, problems: list[tuple[int, str]], indented: int) -> list[str]:
    """The notes on the lines skipped (the first three named) and the indented results ignored."""
    notes = []
    if problems:
        shown = "; ".join(f"line {lineno}: {problem}" for lineno, problem in problems[:3])
        shown += f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        notes.append(
            f"{path}: {len(problems)} malformed line{'s' if len(problems) > 1 else ''} skipped, "
            f"as benchstat skips them: {shown}"
        )
    if indented:
        notes.append(
            f"{path}: {indented} indented Benchmark line{'s' if indented > 1 else ''} ignored "
            "(Go's benchfmt reads only lines that start with 'Benchmark')"
        )
    return notes


def _fields(text: str) -> list[str]:
    return text.split()


def _result(line: str) -> tuple[str, list[tuple[float, str]]]:
    """``(name, [(value, unit), ...])`` of a result line; _Skip otherwise."""
    rest = line[len("Benchmark") :]
    fields = _fields(rest)
    if len(fields) <= 1 and rest == rest.rstrip() and not rest[:1].isspace():
        raise _Skip(None)  # "BenchmarkName" alone: go test -v prints it before the result
    name = rest.split(None, 1)[0] if rest[:1] and not rest[:1].isspace() else ""
    fields = fields if name else ["", *fields]
    _check_iterations(fields)
    return name, _measurements(fields[2:])


def _check_iterations(fields: list[str]) -> None:
    """The iteration count after the name: an int64, as benchfmt parses it; _Skip otherwise."""
    if len(fields) < 2:
        raise _Skip("missing iteration count")
    if not _INT.match(fields[1]):
        raise _Skip(f"parsing iteration count: invalid syntax: {fields[1]!r}")
    if abs(int(fields[1])) > _INT64_MAX:
        raise _Skip(f"parsing iteration count: value out of range: {fields[1]!r}")


def _measurements(values: list[str]) -> list[tuple[float, str]]:
    """The ``(value, unit)`` pairs after the iteration count; _Skip when one does not parse."""
    pairs: list[tuple[float, str]] = []
    if not values:
        raise _Skip("missing measurements")
    for index in range(0, len(values), 2):
        text = values[index]
        if not _FLOAT.match(text):
            raise _Skip(f"parsing measurement: invalid syntax: {text!r}")
        if index + 1 >= len(values):
            raise _Skip("missing units")
        value = float.fromhex(text) if "x" in text.lower() else float(text)
        if not math.isfinite(value):
            raise _Skip(f"measurement {text!r} is not finite: abstat cannot compare it")
        pairs.append((value, values[index + 1]))
    return pairs


def _labels(name: str, config: dict[str, str]) -> dict[str, str]:
    labels = dict(config)
    match = _PROCS.search(name)
    procs = None
    if match:
        procs = match.group(1)
        name = name[: match.start()]
    base, *parts = name.split("/")
    kept = [base, *_sub_benchmark_labels(parts, config, labels)]
    if procs is not None:
        labels["/gomaxprocs" if "gomaxprocs" in config else "gomaxprocs"] = procs
    labels["benchmark"] = "/".join(kept)
    return labels


def _sub_benchmark_labels(parts: list[str], config: dict[str, str], labels: dict[str, str]) -> list[str]:
    """The ``key=value`` parts of a sub-benchmark's name as labels (``/key`` when the key is taken by the
    file's configuration or abstat's own labels); the other parts, which stay in the benchmark's name."""
    kept = []
    for part in parts:
        key, eq, value = part.partition("=")
        if eq and key:
            if key in OWN_LABELS or key in config or key.startswith("/"):
                key = "/" + key
            labels[key] = value
        else:
            kept.append(part)
    return kept


def _config_line(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` line as benchfmt reads it, else None."""
    key = _config_key(line)
    if key is None:
        return None
    value = line[len(key) + 1 :]
    if not value:
        return key, ""
    stripped = value.lstrip(" \t")
    if stripped == value:
        return None  # "key:value" (no blank after the colon) is not configuration
    return key, stripped


def _config_key(line: str) -> str | None:
    """The key before the line's first colon: it starts with a lower-case letter and has no space nor
    upper-case letter in it; else None."""
    if not line or not line[0].islower():
        return None
    colon = line.find(":")
    if colon <= 0:
        return None
    key = line[:colon]
    if any(ch.isspace() or ch.isupper() for ch in key):
        return None
    return key


def _unit_line(line: str, units: dict[str, dict[str, str]]) -> list[str]:
    """Record ``Unit <unit> key=value...``; return the problems found."""
    fields = _fields(line)[1:]
    if not fields:
        return ["missing unit"]
    unit, problems = fields[0], []
    metadata = units.setdefault(unit, {})
    for item in fields[1:]:
        key, eq, value = item.partition("=")
        if not eq or not key:
            problems.append(f"expected key=value, not {item!r}")
        elif key in metadata and metadata[key] != value:
            problems.append(f"metadata {key} of unit {unit} already set to {metadata[key]}")
        else:
            metadata[key] = value
    return problems


def _apply_unit_metadata(sample_set: SampleSet, metadata: dict[str, Any]) -> None:
    if not metadata:
        return
    sample_set.extra["unit_metadata"] = dict(metadata)
    if metadata.get("assume") == "exact":
        sample_set.extra["assume"] = "exact"
        values = sample_set.values
        if min(values) != max(values):
            sample_set.notes.append(
                f"{sample_set.labels.get('benchmark', '?')} ({sample_set.unit}): exact values expected "
                f"(Unit {sample_set.unit} assume=exact), but they range from {min(values):g} to {max(values):g}"
            )
