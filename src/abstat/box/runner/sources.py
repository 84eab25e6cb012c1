"""Metric sources: what a measured run yields besides its built-in metrics.

Every run gets wall, user and sys time, peak RSS and context switches from
``os.wait4`` (:data:`abstat.box.runner.model.BUILTIN_METRICS`).  A source adds
more, and is part of an experiment's specification
(``ExperimentSpec.metrics``) in the JSON form below, which the controller
validates and a test box decodes with the same code (this module ships to the
box; standard library only):

- ``{"source": "regex", "name": N, "pattern": RE, "unit": U}``: ``--metric
  NAME=REGEX[:UNIT]``, every match of group 1 in the output adds a value
  (a pattern ``json:PATH``, from ``--metric [NAME=]json:PATH``, reads one value
  per run from the JSON document printed: :mod:`abstat.box.runner.jsonpath`);
- ``{"source": "json-lines"}``: every numeric field of a JSON-object line
  (on by default; ``--no-json-lines`` leaves it out);
- ``{"source": "perf", "events": [...]}``: ``perf stat`` counters (``--perf``);
- ``{"source": "kmsg", "metrics": [{"name", "pattern", "unit"}, ...]}``: the
  ``--metric`` patterns applied to the kernel log lines written during each run
  (``--metric-source kmsg``, :mod:`abstat.box.runner.kmsg`);
- ``{"source": "trace", "probes": [{"name": N, "probe": P}, ...], "all_cpus": B}``:
  calls and time per call of kernel functions or tracepoint pairs during each
  run, with bpftrace (``--trace``, :mod:`abstat.box.runner.trace`);
- ``{"source": "monitor", "monitors": ["interrupts", ...]}``: the kernel's
  counters (interrupts, softirqs, vmstat, schedstat, pressure) read before and
  after each run, their differences as ``monitor.NAME.FIELD``
  (``--monitor``, :mod:`abstat.box.runner.monitor`).

A new source is one class here (``kind``, ``from_json``, ``to_json`` and
``collector()`` returning a :class:`~abstat.box.runner.model.Collector` that
wraps and reads each run) registered in :data:`SOURCES`; see
docs/architecture.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from abstat.box.runner import jsonpath
from abstat.box.runner import kmsg as kmsg_mod
from abstat.box.runner import monitor as monitor_mod
from abstat.box.runner import trace as trace_mod
from abstat.box.runner.model import (BUILTIN_METRICS, Collector, FieldError, MetricPattern, check_metric_name,
                                     parse_metric_pattern)

# kmsg and trace are imported here, not in the functions that use them: on a test box the runner's
# zip is gone once the runner is imported.

MAX_PATTERN_CHARS = 4096
MAX_EVENTS = 64
_EVENT = re.compile(r"[A-Za-z0-9_.:/=,\-]{1,200}|\{[A-Za-z0-9_.:/=,\-]{1,200}\}[A-Za-z:]{0,8}")
_UNIT = re.compile(r"[A-Za-z%/_][A-Za-z0-9%/_.\-]{0,31}")


def _keys(data: Any, kind: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"a metric source must be an object, not {type(data).__name__}")
    unknown = sorted(set(data) - allowed - {"source"})
    if unknown:
        raise ValueError(f"metric source {kind!r}: unknown field {unknown[0]!r}")
    return data


def _items(data: dict[str, Any], kind: str, key: str, what: str) -> list[Any]:
    items = data.get(key)
    if not isinstance(items, list) or not items or len(items) > MAX_EVENTS:
        raise ValueError(f"metric source {kind!r}: {key} must be a list of 1 to {MAX_EVENTS} {what}")
    return items


@dataclass(frozen=True)
class RegexMetric:
    """``--metric NAME=REGEX[:UNIT]``: each match of group 1 in the run's output is one value."""

    kind: ClassVar[str] = "regex"
    name: str
    pattern: str
    unit: str | None = None

    @classmethod
    def parse(cls, text: str) -> RegexMetric:
        """From the command-line form ``NAME=REGEX[:UNIT]`` (ValueError with the user's message);
        ``[NAME=]json:PATH[:UNIT]`` is a JSON path (:mod:`abstat.box.runner.jsonpath`), kept as the pattern
        ``json:PATH``: no regular expression of that form has the capture group a regex metric needs."""
        if jsonpath.is_json_metric(text):
            parsed = jsonpath.parse_json_metric(text)
            return cls(parsed.name, "json:" + parsed.text, parsed.unit)
        compiled = parse_metric_pattern(text)
        return cls(compiled.name, compiled.regex.pattern, compiled.unit)

    @classmethod
    def from_json(cls, data: Any) -> RegexMetric:
        data = _keys(data, cls.kind, {"name", "pattern", "unit"})
        name, pattern, unit = data.get("name"), data.get("pattern"), data.get("unit")
        if not isinstance(name, str) or not isinstance(pattern, str) or not (unit is None or isinstance(unit, str)):
            raise ValueError("metric source 'regex': name and pattern must be strings, unit a string or null")
        source = cls(name, pattern, unit)
        source.compiled()
        return source

    def compiled(self) -> MetricPattern:
        """The checked, compiled pattern (ValueError naming the problem)."""
        if self.pattern.startswith("json:") and "(" not in self.pattern:
            parsed = jsonpath.parse_json_metric(f"{self.name}={self.pattern}" + (f":{self.unit}" if self.unit else ""))
            if self.name in BUILTIN_METRICS:
                raise ValueError(f"metric {self.name!r}: a built-in metric name")
            return parsed
        check_metric_name(self.name)
        if self.name in BUILTIN_METRICS:
            raise ValueError(f"metric {self.name!r}: a built-in metric name")
        if len(self.pattern) > MAX_PATTERN_CHARS:
            raise ValueError(f"metric {self.name!r}: the regular expression is longer than {MAX_PATTERN_CHARS}")
        if self.unit is not None and not _UNIT.fullmatch(self.unit):
            raise ValueError(f"metric {self.name!r}: bad unit {self.unit!r}")
        try:
            regex = re.compile(self.pattern, re.MULTILINE)
        except re.error as err:
            raise ValueError(f"metric {self.name!r}: bad regular expression {self.pattern!r}: {err}") from None
        if regex.groups < 1:
            raise ValueError(f"metric {self.name!r}: regular expression {self.pattern!r} has no capture group "
                             "(the value is group 1)")
        return MetricPattern(self.name, regex, self.unit)

    @property
    def text(self) -> str:
        """The command-line form, as ``settings["metrics"]`` records it."""
        return f"{self.name}={self.pattern}" + (f":{self.unit}" if self.unit else "")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "name": self.name, "pattern": self.pattern, "unit": self.unit}


@dataclass(frozen=True)
class JsonLines:
    """Every numeric field of each JSON-object line the benchmark prints."""

    kind: ClassVar[str] = "json-lines"

    @classmethod
    def from_json(cls, data: Any) -> JsonLines:
        _keys(data, cls.kind, set())
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind}


@dataclass(frozen=True)
class Perf:
    """Counters with ``perf stat``: hardware and software events (those this machine supports)."""

    kind: ClassVar[str] = "perf"
    events: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Any) -> Perf:
        events = _items(_keys(data, cls.kind, {"events"}), cls.kind, "events", "event names")
        for event in events:
            if not isinstance(event, str) or not _EVENT.fullmatch(event):
                raise ValueError(f"metric source 'perf': bad event name {event!r}")
        return cls(tuple(events))

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "events": list(self.events)}


@dataclass(frozen=True)
class Kmsg:
    """``--metric-source kmsg``: the patterns read the kernel log lines each run wrote."""

    kind: ClassVar[str] = "kmsg"
    metrics: tuple[RegexMetric, ...]

    @classmethod
    def from_json(cls, data: Any) -> Kmsg:
        items = _items(_keys(data, cls.kind, {"metrics"}), cls.kind, "metrics", "patterns")
        return cls(tuple(RegexMetric.from_json(item) for item in items))

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "metrics": [{k: v for k, v in m.to_json().items() if k != "source"}
                                                 for m in self.metrics]}

    def compiled(self) -> list[MetricPattern]:
        """The checked, compiled patterns (ValueError naming the problem)."""
        if not self.metrics or not all(isinstance(m, RegexMetric) for m in self.metrics):
            raise ValueError("metric source 'kmsg': metrics must be 1 or more RegexMetric")
        return [metric.compiled() for metric in self.metrics]

    def check(self) -> None:
        """ValueError when this machine's kernel log cannot be read."""
        kmsg_mod.check_readable()

    def collector(self) -> Collector:
        return kmsg_mod.KmsgCollector(self.compiled())


@dataclass(frozen=True)
class Trace:
    """``--trace [NAME=]PROBE``: calls (``NAME.calls``) and time per call (``NAME.ns``) during each run."""

    kind: ClassVar[str] = "trace"
    probes: tuple[tuple[str, str], ...]  # (metric name prefix, probe)
    all_cpus: bool = False

    @classmethod
    def parse(cls, texts: list[str], all_cpus: bool = False) -> Trace:
        """From ``--trace`` options (ValueError with the user's message)."""
        return cls._checked(tuple(trace_mod.parse_probe(text) for text in texts), all_cpus)

    @classmethod
    def _checked(cls, probes: tuple[tuple[str, str], ...], all_cpus: bool) -> Trace:
        if not probes or len(probes) > MAX_EVENTS:
            raise ValueError(f"metric source 'trace': 1 to {MAX_EVENTS} probes")
        seen: set[str] = set()
        for name, _ in probes:
            if name in seen:
                raise FieldError(f"{{trace}}: two probes are named {name!r} (name one: NAME=PROBE)", "trace")
            seen.add(name)
            if any(metric in BUILTIN_METRICS for metric in trace_mod.metric_names(name)):
                raise FieldError(f"{{trace}} {name!r}: a built-in metric name", "trace")
        return cls(probes, all_cpus)

    @classmethod
    def from_json(cls, data: Any) -> Trace:
        data = _keys(data, cls.kind, {"probes", "all_cpus"})
        items, all_cpus = data.get("probes"), data.get("all_cpus", False)
        if not isinstance(items, list) or not isinstance(all_cpus, bool):
            raise ValueError("metric source 'trace': probes must be a list, all_cpus true or false")
        probes = []
        for item in items:
            if not isinstance(item, dict) or set(item) != {"name", "probe"} or not all(
                    isinstance(item[k], str) for k in item):
                raise ValueError("metric source 'trace': each probe is {\"name\": ..., \"probe\": ...}")
            name, probe = trace_mod.parse_probe(f"{item['name']}={item['probe']}")
            probes.append((name, probe))
        return cls._checked(tuple(probes), all_cpus)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "probes": [{"name": n, "probe": p} for n, p in self.probes],
                "all_cpus": self.all_cpus}

    def compiled(self) -> Trace:
        """Itself, every probe checked as :meth:`from_json` does (a probe becomes bpftrace code)."""
        return Trace.from_json(self.to_json())

    def check(self) -> None:
        """ValueError naming the first probe that cannot attach on this machine, and why."""
        for _, probe in self.probes:
            trace_mod.check_probe(probe, self.all_cpus)

    def collector(self) -> Collector:
        return trace_mod.TraceCollector(list(self.probes), self.all_cpus)


@dataclass(frozen=True)
class Monitor:
    """``--monitor NAME[,NAME]``: the kernel's counters before and after each run (``monitor.NAME.FIELD``)."""

    kind: ClassVar[str] = "monitor"
    monitors: tuple[str, ...]

    @classmethod
    def parse(cls, texts: list[str]) -> Monitor:
        """From ``--monitor`` options (ValueError with the user's message)."""
        names: list[str] = []
        for text in texts:
            names.extend(name for name in monitor_mod.parse_names(text) if name not in names)
        return cls(tuple(names))

    @classmethod
    def from_json(cls, data: Any) -> Monitor:
        items = _items(_keys(data, cls.kind, {"monitors"}), cls.kind, "monitors", "monitor names")
        if not all(isinstance(item, str) for item in items):
            raise ValueError("metric source 'monitor': monitors must be names")
        return cls.parse([",".join(items)])

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "monitors": list(self.monitors)}

    def compiled(self) -> Monitor:
        """Itself, its names checked as :meth:`from_json` does."""
        return Monitor.from_json(self.to_json())

    def check(self) -> None:
        """ValueError naming a monitor whose file this machine does not have."""
        monitor_mod.check(self.monitors)

    def collector(self) -> Collector:
        return monitor_mod.MonitorCollector(self.monitors)


MetricSource = Any  # one of the classes in SOURCES (a Union would need updating with every new source)

SOURCES: dict[str, Any] = {cls.kind: cls for cls in (RegexMetric, JsonLines, Perf, Kmsg, Trace, Monitor)}


def decode_source(data: Any) -> MetricSource:
    """A metric source from its JSON form (ValueError naming what is wrong)."""
    kind = data.get("source") if isinstance(data, dict) else None
    cls = SOURCES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown metric source {kind!r} (known: {', '.join(SOURCES)})")
    return cls.from_json(data)


def check_sources(sources: list[MetricSource] | tuple[MetricSource, ...]) -> list[str]:
    """Why sources cannot work on this machine (one line each; before any run): the kernel
    log unreadable, a probe that does not attach."""
    return [str(err) for err in source_problems(sources)]


def source_problems(sources: list[MetricSource] | tuple[MetricSource, ...]) -> list[ValueError]:
    """:func:`check_sources`' problems as the errors raised (a :class:`FieldError` names its field)."""
    problems = []
    for source in sources:
        check = getattr(source, "check", None)
        if check is not None:
            try:
                check()
            except ValueError as err:
                problems.append(err)
    return problems


@dataclass
class ExecutorOptions:
    """What :class:`~abstat.box.runner.executor.ProcessExecutor` is built with for a list of sources."""

    patterns: list[MetricPattern]
    json_lines: bool
    perf_events: tuple[str, ...]
    collectors: list[Collector]


def executor_options(sources: list[MetricSource] | tuple[MetricSource, ...]) -> ExecutorOptions:
    """Regex and JSON-lines sources share one scan of the output; perf wraps the command; the
    sources of other kinds bring their own collector (``source.collector()``)."""
    options = ExecutorOptions([], False, (), [])
    for source in sources:
        if isinstance(source, RegexMetric):
            options.patterns.append(source.compiled())
        elif isinstance(source, JsonLines):
            options.json_lines = True
        elif isinstance(source, Perf):
            options.perf_events = source.events
        else:
            options.collectors.append(source.collector())
    return options
