"""An experiment as data: :class:`ExperimentSpec`, typed and validated.

A specification holds everything an experiment needs to run and to be run
again: the variants and their commands, hooks, background load, metric
sources and their units, order and seed, warm-up and runs, the failure
policy, timeout and shell, labels and revision labelling, the hosts, boots
and checks of the lab, the analysis the run ends with, and the store.
Building one checks every field (types, ranges, sizes, names): a bad value
raises :class:`SpecError`, one line naming the field.  Its JSON form
(:mod:`abstat.engine.spec_json`) is what the store keeps, so that
``abstat run --resume`` reloads a specification, never a command line.

Nothing here runs anything or looks at this machine; whether a command
exists is the engine's preflight (:mod:`abstat.engine.session`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from abstat.errors import InputError
from abstat.runner.sources import SOURCES, JsonLines

SPEC_VERSION = 1
MAX_RUNS = 1_000_000          # per variant: the schedule is built in memory
MAX_VARIANTS = 1000
MAX_HOSTS = 1000
MAX_BOOTS = 10_000
MAX_LABELS = 100
MAX_COMMAND_CHARS = 65_536
MAX_NAME_CHARS = 200
MAX_VALUE_CHARS = 4096
MAX_BACKGROUND = 100
MAX_METRICS = 200
MAX_SEED = 2**63
ORDERS = ("interleaved", "sequential", "random")
FAILURE_POLICIES = ("stop", "continue")
HOOKS = ("setup", "cleanup", "prepare", "conclude")
RESERVED_LABELS = frozenset({"experiment", "variant", "metric"})
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-")
HOST_CHARS = NAME_CHARS | {"@"}
DEFAULT_BOOT_TIMEOUT_S = 600.0


class SpecError(InputError):
    """A specification field is bad: one line, ``FIELD: problem`` (exit status 2)."""

    def __init__(self, field_name: str, problem: str, source: str | None = None) -> None:
        self.field = field_name
        self.problem = problem
        super().__init__(f"{field_name}: {problem}" if field_name else problem, path=source)


# --------------------------------------------------------------------------
# checks shared by the parts

def _text(where: str, value: Any, limit: int = MAX_COMMAND_CHARS, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise SpecError(where, f"must be a string, not {type(value).__name__}")
    if not empty and not value.strip():
        raise SpecError(where, "must not be empty")
    if len(value) > limit:
        raise SpecError(where, f"is longer than {limit:,} characters")
    if "\x00" in value:
        raise SpecError(where, "holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SpecError(where, f"{value!r} is not valid UTF-8 (abstat stores text as UTF-8)") from None
    return value


def _name(where: str, value: Any, chars: frozenset[str] = NAME_CHARS) -> str:
    _text(where, value, MAX_NAME_CHARS)
    if not set(value) <= chars or (chars is HOST_CHARS and value.startswith("-")):
        allowed = "'_.+-@' (not starting with '-')" if chars is HOST_CHARS else "'_.+-'"
        raise SpecError(where, f"{value!r}: use letters, digits and {allowed}")
    return value


def _integer(where: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(where, f"must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise SpecError(where, f"must be from {low:,} to {high:,} (got {value:,})")
    return value


def _seconds(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise SpecError(where, f"must be a positive number of seconds (got {value!r})")
    return float(value)


def _flag(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SpecError(where, f"must be true or false, not {value!r}")
    return value


def _labels(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise SpecError(where, f"must be an object of names and values, not {type(value).__name__}")
    if len(value) > MAX_LABELS:
        raise SpecError(where, f"more than {MAX_LABELS} labels")
    labels = {}
    for key, text in value.items():
        _name(f"{where} key", key)
        labels[key] = _text(f"{where}[{key!r}]", text, MAX_VALUE_CHARS, empty=True)
    return labels


def _choice(where: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise SpecError(where, f"{value!r}: choose one of {', '.join(choices)}")
    return value


# --------------------------------------------------------------------------
# the parts

@dataclass(frozen=True)
class Variant:
    """One thing to measure: a name and its command; ``labels`` go on its runs only."""

    name: str
    command: str
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _name("variant name", self.name)
        _text(f"variant {self.name!r} command", self.command)
        object.__setattr__(self, "labels", _labels(f"variant {self.name!r} labels", self.labels))
        if RESERVED_LABELS & set(self.labels):
            raise SpecError(f"variant {self.name!r} labels", "experiment, variant and metric are set by abstat")


@dataclass(frozen=True)
class Hooks:
    """``setup``/``cleanup`` once per variant, ``prepare``/``conclude`` around every run."""

    setup: str | None = None
    cleanup: str | None = None
    prepare: str | None = None
    conclude: str | None = None

    def __post_init__(self) -> None:
        for kind in HOOKS:
            value = getattr(self, kind)
            if value is not None:
                _text(f"hooks.{kind}", value)

    def items(self) -> dict[str, str]:
        """The hooks given, kind -> command."""
        return {kind: getattr(self, kind) for kind in HOOKS if getattr(self, kind) is not None}


@dataclass(frozen=True)
class Host:
    """A test box: ``label`` is the value of the ``host`` label, ``destination`` what ssh is given."""

    label: str
    destination: str

    def __post_init__(self) -> None:
        _name("host label", self.label, HOST_CHARS)
        destination = _text(f"host {self.label!r} destination", self.destination, MAX_NAME_CHARS)
        if destination.startswith("-") or any(c.isspace() for c in destination):
            raise SpecError(f"host {self.label!r} destination", f"{destination!r}: not an ssh destination")


@dataclass(frozen=True)
class Lab:
    """Hosts to run on over ssh, and the boots: ``boot`` and ``check`` map a variant to a command."""

    hosts: tuple[Host, ...]
    boot: Mapping[str, str] = field(default_factory=dict)
    check: Mapping[str, str] = field(default_factory=dict)
    boots: int = 1
    boot_timeout: float = DEFAULT_BOOT_TIMEOUT_S

    def __post_init__(self) -> None:
        hosts = tuple(self.hosts) if isinstance(self.hosts, (list, tuple)) else None
        if not hosts:
            raise SpecError("lab.hosts", "give at least one host")
        if len(hosts) > MAX_HOSTS:
            raise SpecError("lab.hosts", f"more than {MAX_HOSTS} hosts")
        for host in hosts:
            if not isinstance(host, Host):
                raise SpecError("lab.hosts", f"must hold hosts, not {type(host).__name__}")
        labels = [host.label for host in hosts]
        twice = next((label for label in labels if labels.count(label) > 1), None)
        if twice is not None:
            raise SpecError("lab.hosts", f"host label {twice!r} given twice")
        object.__setattr__(self, "hosts", hosts)
        for kind in ("boot", "check"):
            commands = getattr(self, kind)
            if not isinstance(commands, Mapping):
                raise SpecError(f"lab.{kind}", "must map variant names to commands")
            object.__setattr__(self, kind, {_name(f"lab.{kind} variant", k): _text(f"lab.{kind}[{k!r}]", v)
                                            for k, v in commands.items()})
        _integer("lab.boots", self.boots, 1, MAX_BOOTS)
        object.__setattr__(self, "boot_timeout", _seconds("lab.boot_timeout", self.boot_timeout))
        if self.check and not self.boot:
            raise SpecError("lab.check", "needs boot commands (it checks the boot of a variant)")
        if self.boots != 1 and not self.boot:
            raise SpecError("lab.boots", "needs boot commands")

    @property
    def reboots(self) -> bool:
        return bool(self.boot)


@dataclass(frozen=True)
class Analysis:
    """The comparison a run ends with: baseline variant, confidence in percent, higher-is-better metrics."""

    baseline: str | None = None
    confidence: float = 95.0
    higher_is_better: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.baseline is not None:
            _name("analysis.baseline", self.baseline)
        if isinstance(self.confidence, bool) or not isinstance(self.confidence, (int, float)) \
                or not 0 < self.confidence < 100:
            raise SpecError("analysis.confidence", f"must be a percentage between 0 and 100 (got {self.confidence!r})")
        items = self.higher_is_better
        if not isinstance(items, (list, tuple)) or len(items) > MAX_METRICS:
            raise SpecError("analysis.higher_is_better", f"must be a list of at most {MAX_METRICS} metric names")
        object.__setattr__(self, "higher_is_better",
                           tuple(_text("analysis.higher_is_better", item, MAX_VALUE_CHARS) for item in items))


@dataclass(frozen=True)
class ExperimentSpec:
    """An experiment: what to run, how, where, and where its runs go.

    ``seed`` None draws one when the experiment starts; ``experiment`` None
    names it ``run-DATE-TIME``; ``rev`` (a directory) labels the runs with its
    git revision (``rev``, ``commit_time``); ``lab`` None runs here, else on
    its hosts over ssh (and boots them when it has boot commands); ``store``
    None is ``$ABSTAT_STORE``, else ``./abstat.db``.  ``metrics`` are the
    sources of metrics besides the built-in ones (:mod:`abstat.runner.sources`).
    """

    variants: tuple[Variant, ...]
    runs: int = 10
    warmup: int = 0
    order: str = "interleaved"
    seed: int | None = None
    shell: bool = False
    timeout: float | None = None
    on_failure: str = "stop"
    hooks: Hooks = field(default_factory=Hooks)
    background: tuple[str, ...] = ()
    metrics: tuple[Any, ...] = (JsonLines(),)
    experiment: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    rev: str | None = None
    lab: Lab | None = None
    analysis: Analysis = field(default_factory=Analysis)
    store: str | None = None

    def __post_init__(self) -> None:
        variants = tuple(self.variants) if isinstance(self.variants, (list, tuple)) else None
        if not variants:
            raise SpecError("variants", "give at least one variant")
        if len(variants) > MAX_VARIANTS:
            raise SpecError("variants", f"more than {MAX_VARIANTS} variants")
        names: set[str] = set()
        for variant in variants:
            if not isinstance(variant, Variant):
                raise SpecError("variants", f"must hold variants, not {type(variant).__name__}")
            if variant.name in names:
                raise SpecError("variants", f"variant {variant.name!r} given twice")
            names.add(variant.name)
        object.__setattr__(self, "variants", variants)
        _integer("runs", self.runs, 1, MAX_RUNS)
        _integer("warmup", self.warmup, 0, MAX_RUNS)
        _choice("order", self.order, ORDERS)
        if self.seed is not None:
            _integer("seed", self.seed, -MAX_SEED, MAX_SEED)
        _flag("shell", self.shell)
        if self.timeout is not None:
            object.__setattr__(self, "timeout", _seconds("timeout", self.timeout))
        _choice("on_failure", self.on_failure, FAILURE_POLICIES)
        if not isinstance(self.hooks, Hooks):
            raise SpecError("hooks", f"must be Hooks, not {type(self.hooks).__name__}")
        background = self.background
        if not isinstance(background, (list, tuple)) or len(background) > MAX_BACKGROUND:
            raise SpecError("background", f"must be a list of at most {MAX_BACKGROUND} commands")
        object.__setattr__(self, "background", tuple(_text("background", text) for text in background))
        self._check_metrics()
        if self.experiment is not None:
            _text("experiment", self.experiment, MAX_NAME_CHARS)
            if ":" in self.experiment or self.experiment.strip() != self.experiment or "\n" in self.experiment:
                raise SpecError("experiment", f"bad name {self.experiment!r}: without ':' or surrounding spaces")
        labels = _labels("labels", self.labels)
        reserved = sorted(RESERVED_LABELS & set(labels))
        if reserved:
            raise SpecError("labels", f"{reserved[0]!r} is set by abstat itself")
        object.__setattr__(self, "labels", labels)
        if self.rev is not None:
            _text("rev", self.rev, MAX_VALUE_CHARS)
        if self.lab is not None:
            self._check_lab(names)
        if not isinstance(self.analysis, Analysis):
            raise SpecError("analysis", f"must be Analysis, not {type(self.analysis).__name__}")
        if self.store is not None:
            _text("store", self.store, MAX_VALUE_CHARS)

    def _check_metrics(self) -> None:
        metrics = self.metrics
        if not isinstance(metrics, (list, tuple)) or len(metrics) > MAX_METRICS:
            raise SpecError("metrics", f"must be a list of at most {MAX_METRICS} metric sources")
        seen: set[str] = set()
        for index, source in enumerate(metrics):
            if type(source) not in SOURCES.values():
                raise SpecError(f"metrics[{index}]", f"not a metric source: {type(source).__name__}")
            key = getattr(source, "name", source.kind)
            if key in seen:
                raise SpecError(f"metrics[{index}]", f"{key!r} given twice")
            seen.add(key)
            if hasattr(source, "compiled"):
                try:
                    source.compiled()
                except ValueError as err:
                    raise SpecError(f"metrics[{index}]", str(err)) from None
        object.__setattr__(self, "metrics", tuple(metrics))

    def _check_lab(self, names: set[str]) -> None:
        lab = self.lab
        if not isinstance(lab, Lab):
            raise SpecError("lab", f"must be Lab, not {type(lab).__name__}")
        for kind in ("boot", "check"):
            unknown = sorted(set(getattr(lab, kind)) - names)
            if unknown:
                raise SpecError(f"lab.{kind}", f"no variant {unknown[0]!r} (variants: {', '.join(sorted(names))})")
        missing = [v.name for v in self.variants if v.name not in lab.boot]
        if lab.boot and missing:
            raise SpecError("lab.boot", f"give one for every variant (missing: {', '.join(missing)})")
        if "host" in self.labels:
            raise SpecError("labels", "'host' is the host's label on a lab run")

    # -- derived ---------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The variants' names, in order."""
        return [variant.name for variant in self.variants]

    @property
    def ignore_failure(self) -> bool:
        return self.on_failure == "continue"

    def command(self, variant: str) -> str:
        return next(v.command for v in self.variants if v.name == variant)

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON form (:mod:`abstat.engine.spec_json`)."""
        from abstat.engine.spec_json import encode

        return encode(self)

    @classmethod
    def from_json(cls, document: Any, source: str | None = None) -> ExperimentSpec:
        """Decode and validate an untrusted JSON document; :class:`SpecError` names what is wrong."""
        from abstat.engine.spec_json import decode

        return decode(document, source)
