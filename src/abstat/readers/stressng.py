"""stress-ng (``--metrics-brief`` text and ``--yaml``) and schbench outputs.

``stress-ng``       the metrics rows (``STRESSOR bogo-ops real usr sys ops/s ops/s [cpu% rss]``) and the
                    ``VALUE WHAT (average per stressor)`` lines: labels ``stressor`` and ``metric``.
``stress-ng-yaml``  the ``metrics:`` list of ``stress-ng --yaml FILE``.
``schbench``        per run (a run ends at ``average rps:``), the last block of each kind (the
                    whole run's percentiles: schbench prints them every interval, cumulated):
                    ``wakeup-latency.p99.0`` (usec), ``request-latency.*``, ``rps.*`` and ``average-rps``
                    (requests per second, unit ``1/s``).

A file of several runs (one output after another) gives one value per run.
"""

from __future__ import annotations

import math
import re

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"  # unambiguous: no backtracking blow-up
STRESS_PREFIX = re.compile(r"^stress-ng: (?:info|metrc):\s+\[\d+\]\s+")
STRESS_HEADER = re.compile(r"stressor\s+bogo ops\s+real time")
STRESS_ROW = re.compile(rf"^([\w.-]+)\s+((?:{_NUM}\s+){{5,7}}{_NUM})\s*$")
STRESS_MISC = re.compile(
    rf"^([\w.-]+)\s+({_NUM})\s+(.+?)\s*\((?:average|geometric mean|harmonic mean)"
    r"[^)]*\)\s*$"
)
STRESS_COLUMNS = (
    "bogo-ops",
    "real-time",
    "usr-time",
    "sys-time",
    "bogo-ops-per-sec-real-time",
    "bogo-ops-per-sec-usr-sys-time",
    "cpu-used-per-instance",
    "rss-max",
)
STRESS_UNITS = {
    "real-time": "s",
    "usr-time": "s",
    "sys-time": "s",
    "bogo-ops-per-sec-real-time": "ops/s",
    "bogo-ops-per-sec-usr-sys-time": "ops/s",
    "cpu-used-per-instance": "%",
    "rss-max": "KB",
}
# a figure that is a rate (``write128 MB/sec``, ``... per second``): its unit ends in /s (higher is better)
MISC_RATE = re.compile(r"(?:\b(\w+)/|\bper )sec(?:ond)?s?$")
SCHBENCH_HEAD = re.compile(r"^(Wakeup Latencies|Request Latencies|RPS) percentiles \((\w+)\)")
SCHBENCH_ROW = re.compile(rf"^\s*\*?\s*({_NUM})th:\s*({_NUM})\b")
SCHBENCH_END = re.compile(rf"^average rps:\s*({_NUM})")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _add(found: dict[tuple[str, str], list[float]], key: tuple[str, str], value: float) -> None:
    found.setdefault(key, []).append(value)


def _sets(
    path: str, found: dict[tuple[str, str], list[float]], units: dict[str, str | None], fmt: str, keys: tuple[str, str]
) -> list[SampleSet]:
    if not found:
        raise InputError(f"{fmt}: no result lines found", path=path)
    return [
        SampleSet(
            labels=dict(zip(keys, key, strict=False)),
            runs=[values],
            source=path,
            unit=units.get(key[1]),
            extra={"format": fmt},
        )
        for key, values in found.items()
    ]


def read_stress_ng(path: str, text: str) -> list[SampleSet]:
    found: dict[tuple[str, str], list[float]] = {}
    units: dict[str, str | None] = dict(STRESS_UNITS)
    in_table = False
    for line in text.splitlines():
        prefix = STRESS_PREFIX.match(line)
        if not prefix:
            continue
        body = line[prefix.end() :].strip()
        if STRESS_HEADER.search(body):
            in_table = True
            continue
        row = STRESS_ROW.match(body)
        if row and in_table:
            for name, value in zip(STRESS_COLUMNS, row.group(2).split(), strict=False):
                _add(found, (row.group(1), name), _float(value))
            continue
        misc = STRESS_MISC.match(body)
        if misc:
            metric = _misc_metric(misc)
            _add(found, (misc.group(1), metric), _float(misc.group(2)))
            rate = MISC_RATE.search(misc.group(3).strip())
            if rate:
                units[metric] = f"{rate.group(1) or '1'}/s"
    return _sets(path, found, units, "stress-ng", ("stressor", "metric"))


def _misc_metric(misc: re.Match[str]) -> str:
    """The metric's name of a line of stress-ng's other figures: its words joined by dashes."""
    return re.sub(r"[^\w/%.]+", "-", misc.group(3).strip()).strip("-")


def read_stress_ng_yaml(path: str, text: str) -> list[SampleSet]:
    """The ``metrics:`` list of stress-ng's YAML (read line by line: its YAML is this simple)."""
    found: dict[tuple[str, str], list[float]] = {}
    in_metrics = False
    stressor = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.strip() == "...":
            continue
        if not line[:1].isspace():
            in_metrics = line.strip() == "metrics:"
            continue
        if not in_metrics:
            continue
        key, value = _yaml_pair(path, number, line)
        if key == "stressor":
            stressor = value
            continue
        if stressor is None:
            raise InputError("stress-ng YAML: a metric before its '- stressor:'", path=path, line=number)
        try:
            _add(found, (stressor, key), _float(value))
        except ValueError:
            continue  # a text field
    units = {
        "wall-clock-time": "s",
        "user-time": "s",
        "system-time": "s",
        "max-rss": "KB",
        "bogo-ops-per-second-real-time": "ops/s",
        "bogo-ops-per-second-usr-sys-time": "ops/s",
        "cpu-usage-per-instance": "%",
    }
    return _sets(path, found, dict(units), "stress-ng-yaml", ("stressor", "metric"))


def _yaml_pair(path: str, number: int, line: str) -> tuple[str, str]:
    """The key and the value (unquoted) of a ``- key: value`` line of the metrics list."""
    key, sep, value = line.strip().lstrip("- ").partition(":")
    if not sep:
        raise InputError("stress-ng YAML: a metrics line without 'key: value'", path=path, line=number)
    return key, value.strip().strip("'\"")


def read_schbench(path: str, text: str) -> list[SampleSet]:
    found: dict[tuple[str, str], list[float]] = {}
    units: dict[str, str | None] = {}
    last: dict[str, float] = {}
    kind = None
    for line in text.splitlines():
        head = SCHBENCH_HEAD.match(line)
        if head:
            kind, unit = _schbench_kind(head)
            for key in [k for k in last if k.startswith(kind + ".")]:
                del last[key]  # a later block of the same kind replaces the earlier one
            continue
        row = SCHBENCH_ROW.match(line)
        if row and kind is not None:
            metric = f"{kind}.p{row.group(1)}"
            last[metric] = _float(row.group(2))
            units[metric] = unit
            continue
        end = SCHBENCH_END.match(line.strip())
        if end:
            last["average-rps"] = _float(end.group(1))
            units["average-rps"] = "1/s"
            _add_schbench_run(found, last)
            last, kind = {}, None
    _add_schbench_run(found, last)
    return _sets(path, found, units, "schbench", ("benchmark", "metric"))


def _schbench_kind(head: re.Match[str]) -> tuple[str, str | None]:
    """The metric of a block of percentiles (``wakeup-latency``, ``request-latency``, ``rps``) and its unit."""
    kind = head.group(1).split()[0].lower()
    if kind == "rps":  # requests per second, as average-rps: a throughput, higher is better
        return "rps", "1/s"
    return f"{kind}-latency", ("us" if head.group(2) == "usec" else None)


def _add_schbench_run(found: dict[tuple[str, str], list[float]], last: dict[str, float]) -> None:
    """The last value of each metric of a run (its blocks up to the average rps line, or the end)."""
    for metric, value in last.items():
        _add(found, ("schbench", metric), value)


def detect(text: str) -> str | None:
    head = text[: 1 << 16]
    lines = head.splitlines()
    if any(line.strip() == "metrics:" for line in lines) and "stress-ng-version:" in head:
        return "stress-ng-yaml"
    if any(STRESS_PREFIX.match(line) and STRESS_HEADER.search(line) for line in lines):
        return "stress-ng"
    if any(SCHBENCH_HEAD.match(line) for line in lines):
        return "schbench"
    return None


READERS = {"stress-ng": read_stress_ng, "stress-ng-yaml": read_stress_ng_yaml, "schbench": read_schbench}
