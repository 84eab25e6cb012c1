"""The parts of an experiment's specification, and the checks every field goes through.

:class:`Variant`, :class:`Hooks`, :class:`Host`, :class:`Lab` and
:class:`Analysis` check their fields when built (types, ranges, sizes,
names): a bad value raises :class:`SpecError`, one line naming the field.
:class:`abstat.engine.spec.ExperimentSpec` holds them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from abstat.errors import InputError

SPEC_VERSION = 3  # 2: cpus, sequential, parameters; 3: analysis.threshold
MAX_RUNS = 1_000_000  # per variant: the schedule is built in memory
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
MAX_PARAMETERS = 10  # -L NAME VALUES: the grid's dimensions
MAX_CPU = 65_535  # a CPU number (Linux's NR_CPUS is at most 8192)
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


def _unique(where: str, value: Any, cls: type, noun: str, limit: int, key: str, key_noun: str) -> tuple[Any, ...]:
    """A non-empty list of at most ``limit`` ``cls`` whose ``key`` differ, as a tuple."""
    items = tuple(value) if isinstance(value, (list, tuple)) else None
    if not items:
        raise SpecError(where, f"give at least one {noun}")
    if len(items) > limit:
        raise SpecError(where, f"more than {limit} {noun}s")
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, cls):
            raise SpecError(where, f"must hold {noun}s, not {type(item).__name__}")
        if getattr(item, key) in seen:
            raise SpecError(where, f"{key_noun} {getattr(item, key)!r} given twice")
        seen.add(getattr(item, key))
    return items


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
        object.__setattr__(
            self, "hosts", _unique("lab.hosts", self.hosts, Host, "host", MAX_HOSTS, "label", "host label")
        )
        for kind in ("boot", "check"):
            object.__setattr__(self, kind, _variant_commands(f"lab.{kind}", getattr(self, kind)))
        _integer("lab.boots", self.boots, 1, MAX_BOOTS)
        object.__setattr__(self, "boot_timeout", _seconds("lab.boot_timeout", self.boot_timeout))
        if self.check and not self.boot:
            raise SpecError("lab.check", "needs boot commands (it checks the boot of a variant)")
        if self.boots != 1 and not self.boot:
            raise SpecError("lab.boots", "needs boot commands")

    @property
    def reboots(self) -> bool:
        return bool(self.boot)


def _variant_commands(where: str, commands: Any) -> dict[str, str]:
    """``lab.boot`` or ``lab.check``: variant name -> command."""
    if not isinstance(commands, Mapping):
        raise SpecError(where, "must map variant names to commands")
    return {_name(f"{where} variant", k): _text(f"{where}[{k!r}]", v) for k, v in commands.items()}


@dataclass(frozen=True)
class Analysis:
    """The comparison a run ends with: baseline variant, confidence in percent, higher-is-better metrics, and
    the practical threshold in percent (None: none; with ``sequential``, its threshold: ``--threshold``)."""

    baseline: str | None = None
    confidence: float = 95.0
    higher_is_better: tuple[str, ...] = ()
    lower_is_better: tuple[str, ...] = ()
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.baseline is not None:
            _name("analysis.baseline", self.baseline)
        if (
            isinstance(self.confidence, bool)
            or not isinstance(self.confidence, (int, float))
            or not 50 <= self.confidence <= 99.99
        ):
            # as the command line's -c (cli/args/values.py): beyond 99.99 the permutation draws grow without bound
            raise SpecError("analysis.confidence", f"must be a percentage from 50 to 99.99 (got {self.confidence!r})")
        for key in ("higher_is_better", "lower_is_better"):
            object.__setattr__(self, key, _metric_names(f"analysis.{key}", getattr(self, key)))
        both = set(_split(self.higher_is_better)) & set(_split(self.lower_is_better))
        if both:
            raise SpecError("analysis.lower_is_better", f"names {sorted(both)[0]!r}, also higher-is-better")
        if self.threshold is not None and not is_threshold(self.threshold):
            raise SpecError("analysis.threshold", f"must be a percentage from 0 to below 100 (got {self.threshold!r})")


def is_threshold(value: Any) -> bool:
    """Whether ``value`` is a practical threshold: a percentage from 0 to below 100 (as compare takes it)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < 100


def _metric_names(where: str, items: Any) -> tuple[str, ...]:
    if not isinstance(items, (list, tuple)) or len(items) > MAX_METRICS:
        raise SpecError(where, f"must be a list of at most {MAX_METRICS} metric names")
    return tuple(_text(where, item, MAX_VALUE_CHARS) for item in items)


def _split(items: tuple[str, ...]) -> list[str]:
    """``METRIC[,METRIC]`` items' names (as the command line's options take them)."""
    return [name.strip() for item in items for name in item.split(",") if name.strip()]


def _cpus(where: str, value: Any) -> tuple[int, ...]:
    """CPU numbers: distinct, each 0..MAX_CPU, in increasing order."""
    if not isinstance(value, (list, tuple)) or len(value) > MAX_CPU + 1:
        raise SpecError(where, "must be a list of CPU numbers")
    cpus = sorted({_integer(where, cpu, 0, MAX_CPU) for cpu in value})
    if len(cpus) != len(value):
        raise SpecError(where, "a CPU is listed twice")
    return tuple(cpus)


@dataclass(frozen=True)
class Sequential:
    """``--until-decided``: judge at planned looks and stop once every candidate is settled
    (:mod:`abstat.comparison.sequential`); the spec's ``runs`` is the maximum per variant."""

    min_runs: int = 5
    threshold: float = 2.0  # percent: equivalent when the interval lies inside +-threshold
    metric: str | None = None  # None: the first metric the spec defines, else wall

    def __post_init__(self) -> None:
        _integer("sequential.min_runs", self.min_runs, 2, MAX_RUNS)
        if (
            isinstance(self.threshold, bool)
            or not isinstance(self.threshold, (int, float))
            or not (0 < self.threshold < 100 and math.isfinite(self.threshold))
        ):
            raise SpecError("sequential.threshold", f"must be a percentage between 0 and 100 (got {self.threshold!r})")
        if self.metric is not None:
            _text("sequential.metric", self.metric, MAX_NAME_CHARS)


def _parameters(where: str, value: Any, labels: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """``-L NAME VALUES``: names (as labels' keys, not one abstat sets or ``labels`` holds) -> distinct,
    non-empty values, in order."""
    if not isinstance(value, Mapping):
        raise SpecError(where, f"must be an object of names and lists of values, not {type(value).__name__}")
    if len(value) > MAX_PARAMETERS:
        raise SpecError(where, f"more than {MAX_PARAMETERS} parameters")
    parameters: dict[str, tuple[str, ...]] = {}
    for name, values in value.items():
        _parameter_name(where, name, labels)
        parameters[name] = _parameter_values(f"{where}[{name!r}]", values)
    return parameters


def _parameter_name(where: str, name: Any, labels: Mapping[str, str]) -> None:
    """A parameter's name: a label's key that neither abstat nor the experiment's labels use."""
    _name(f"{where} name", name)
    if name in RESERVED_LABELS or name == "host" or name in labels:
        taken = "a label of the experiment" if name in labels else "a label abstat sets"
        raise SpecError(f"{where}[{name!r}]", f"{name!r} is {taken}: choose another name")


def _parameter_values(where: str, values: Any) -> tuple[str, ...]:
    """A parameter's values: 1 to ``MAX_VARIANTS`` distinct texts, in order."""
    if not isinstance(values, (list, tuple)) or not values or len(values) > MAX_VARIANTS:
        raise SpecError(where, f"must be a list of 1 to {MAX_VARIANTS} values")
    texts = tuple(_text(where, text, MAX_VALUE_CHARS) for text in values)
    if len(set(texts)) != len(texts):
        twice = next(text for text in texts if texts.count(text) > 1)
        raise SpecError(where, f"value {twice!r} given twice")
    return texts
