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

The regex source is :mod:`abstat.box.runner.regexmetric`'s (re-exported here).
A new source is one class here (``kind``, ``from_json``, ``to_json`` and
``collector()`` returning a :class:`~abstat.box.runner.model.Collector` that
wraps and reads each run) registered in :data:`SOURCES`; see
docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from abstat.box.runner import kmsg as kmsg_mod
from abstat.box.runner import monitor as monitor_mod
from abstat.box.runner import trace as trace_mod
from abstat.box.runner.model import BUILTIN_METRICS, Collector, FieldError, MetricPattern
from abstat.box.runner.regexmetric import _EVENT, MAX_EVENTS, RegexMetric, _items, _keys

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

# kmsg and trace are imported here, not in the functions that use them: on a test box the runner's
# zip is gone once the runner is imported.


@dataclass(frozen=True)
class JsonLines:
    """Every numeric field of each JSON-object line the benchmark prints."""

    kind = "json-lines"

    @classmethod
    def from_json(cls, data: Any) -> JsonLines:
        _keys(data, cls.kind, set())
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind}


@dataclass(frozen=True)
class Perf:
    """Counters with ``perf stat``: hardware and software events (those this machine supports)."""

    kind = "perf"
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

    kind = "kmsg"
    metrics: tuple[RegexMetric, ...]

    @classmethod
    def from_json(cls, data: Any) -> Kmsg:
        items = _items(_keys(data, cls.kind, {"metrics"}), cls.kind, "metrics", "patterns")
        return cls(tuple(RegexMetric.from_json(item) for item in items))

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.kind,
            "metrics": [{k: v for k, v in m.to_json().items() if k != "source"} for m in self.metrics],
        }

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

    kind = "trace"
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
            if (
                not isinstance(item, dict)
                or set(item) != {"name", "probe"}
                or not all(isinstance(item[k], str) for k in item)
            ):
                raise ValueError('metric source \'trace\': each probe is {"name": ..., "probe": ...}')
            name, probe = trace_mod.parse_probe(f"{item['name']}={item['probe']}")
            probes.append((name, probe))
        return cls._checked(tuple(probes), all_cpus)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.kind,
            "probes": [{"name": n, "probe": p} for n, p in self.probes],
            "all_cpus": self.all_cpus,
        }

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

    kind = "monitor"
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


if TYPE_CHECKING:
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
