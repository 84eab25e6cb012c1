"""An experiment as data: :class:`ExperimentSpec`, typed and validated, and its JSON form.

A specification holds everything an experiment needs to run and to be run
again: the variants and their commands, hooks, background load, metric
sources and their units, order and seed, warm-up and runs, the failure
policy, timeout and shell, labels and revision labelling, the hosts, boots
and checks of the lab, the analysis the run ends with, and the store.
Building one checks every field (:mod:`abstat.engine.parts`): a bad value
raises :class:`SpecError`, one line naming the field.  Its JSON form is what
the store keeps, so that ``abstat run --resume`` reloads a specification,
never a command line.  Nothing here runs anything or looks at this machine;
whether a command exists is the engine's preflight (:mod:`abstat.engine.session`).

The JSON form (:func:`encode`, :func:`decode`)::

    {"abstat_spec": 1, "experiment": "hcall",
     "variants": [{"name": "before", "command": "./hcall", "labels": {}}, ...],
     "runs": 10, "warmup": 0, "order": "interleaved", "seed": 1234,
     "shell": false, "timeout": null, "on_failure": "stop",
     "hooks": {"setup": null, "cleanup": null, "prepare": "make clean", "conclude": null},
     "background": [], "metrics": [{"source": "json-lines"}, {"source": "regex", ...}], "cpus": [2, 3],
     "parameters": {"size": ["4096", "65536"]},
     "labels": {"mode": "pv64"}, "rev": null,
     "lab": {"hosts": [{"label": "milan", "destination": "milan"}], "boot": {...}, "check": {...},
             "boots": 3, "boot_timeout": 600.0},
     "analysis": {"baseline": null, "confidence": 95.0, "higher_is_better": [], "lower_is_better": []},
     "store": null}

:func:`decode` takes the document as untrusted input (the store, a file a
user wrote): every key is known, every value has its type, range, size and
name checked, and anything wrong is one :class:`~abstat.engine.spec.SpecError`
naming it.  Keys left out take their defaults (only ``variants`` is
required), so a hand-written file can be short.  ``abstat_spec`` is the
version: a document of a newer version is refused; a version's meaning
never changes (a new field is a new version, and this decoder keeps reading
the old ones).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from abstat.engine.parts import (
    DEFAULT_BOOT_TIMEOUT_S,
    FAILURE_POLICIES,
    HOOKS,
    MAX_BACKGROUND,
    MAX_COMMAND_CHARS,
    MAX_METRICS,
    MAX_NAME_CHARS,
    MAX_RUNS,
    MAX_SEED,
    MAX_VALUE_CHARS,
    MAX_VARIANTS,
    NAME_CHARS,
    ORDERS,
    RESERVED_LABELS,
    SPEC_VERSION,
    Analysis,
    Hooks,
    Host,
    Lab,
    Sequential,
    SpecError,
    Variant,
    _choice,
    _cpus,
    _flag,
    _integer,
    _labels,
    _parameters,
    _seconds,
    _text,
    _unique,
)
from abstat.box.runner.sources import SOURCES, JsonLines
from abstat.engine.spec_json import encode, json_object, spec_arguments

__all__ = [
    "Analysis",
    "DEFAULT_BOOT_TIMEOUT_S",
    "ExperimentSpec",
    "HOOKS",
    "Hooks",
    "Host",
    "Lab",
    "MAX_COMMAND_CHARS",
    "MAX_RUNS",
    "NAME_CHARS",
    "SPEC_VERSION",
    "Sequential",
    "SpecError",
    "Variant",
    "decode",
    "dumps",
    "encode",
    "loads",
]


@dataclass(frozen=True)
class ExperimentSpec:
    """An experiment: what to run, how, where, and where its runs go.

    ``seed`` None draws one when the experiment starts; ``experiment`` None
    names it ``run-DATE-TIME``; ``rev`` (a directory) labels the runs with its
    git revision (``rev``, ``commit_time``); ``lab`` None runs here, else on
    its hosts over ssh (and boots them when it has boot commands); ``store``
    None is ``$ABSTAT_STORE``, else ``./abstat.db``.  ``metrics`` are the
    sources of metrics besides the built-in ones (:mod:`abstat.box.runner.sources`).
    ``cpus`` (empty: any) are the CPUs every measured command and its children
    start confined to (``--cpus``); ``sequential`` stops the experiment once
    decided (``--until-decided``; ``runs`` is then the maximum).
    ``parameters`` (``-L NAME VALUES``: name -> values) make a grid: every
    variant runs at every combination of the values, ``{NAME}`` replaced in its
    command and the hooks (:mod:`abstat.engine.grid`).  The three are version 2
    of the JSON form.  ``analysis.threshold`` (version 3) is the practical threshold the end's verdicts
    judge by; with ``sequential`` it is ``sequential.threshold`` (left out: taken from it).
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
    cpus: tuple[int, ...] = ()
    isolate: bool = False
    sequential: Sequential | None = None
    parameters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        variants = _unique("variants", self.variants, Variant, "variant", MAX_VARIANTS, "name", "variant")
        object.__setattr__(self, "variants", variants)
        self._check_running()
        self._check_metrics()
        self._check_names()
        if self.lab is not None:
            self._check_lab({variant.name for variant in variants})
        if not isinstance(self.analysis, Analysis):
            raise SpecError("analysis", f"must be Analysis, not {type(self.analysis).__name__}")
        if self.store is not None:
            _text("store", self.store, MAX_VALUE_CHARS)
        object.__setattr__(self, "cpus", _cpus("cpus", self.cpus))
        _flag("isolate", self.isolate)
        if self.isolate and not self.cpus:
            raise SpecError("isolate", "needs cpus: the CPUs to give the measured commands alone")
        if self.sequential is not None:
            self._check_sequential()
        self._check_parameters()

    def _check_running(self) -> None:
        """runs, warmup, order, seed, shell, timeout, on_failure, hooks and background."""
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

    def _check_names(self) -> None:
        """experiment, labels and rev."""
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

    def _check_sequential(self) -> None:
        if not isinstance(self.sequential, Sequential):
            raise SpecError("sequential", f"must be Sequential, not {type(self.sequential).__name__}")
        if self.sequential.min_runs > self.runs:
            raise SpecError("sequential.min_runs", f"is more than the maximum, runs ({self.runs})")
        if self.lab is not None and self.lab.boot:
            raise SpecError("sequential", "stopping when decided needs every variant in each boot (no boot commands)")
        if self.order == "sequential" or len(self.variants) < 2:
            raise SpecError("sequential", "needs two or more variants run in interleaved or random order")
        threshold = self.analysis.threshold  # the end's verdicts judge by the threshold the looks did
        if threshold is None:
            object.__setattr__(self, "analysis", replace(self.analysis, threshold=self.sequential.threshold))
        elif threshold != self.sequential.threshold:
            raise SpecError("analysis.threshold", f"is not sequential.threshold ({self.sequential.threshold:g})")

    def _check_parameters(self) -> None:
        parameters = _parameters("parameters", self.parameters, self.labels)
        object.__setattr__(self, "parameters", parameters)
        if not parameters:
            return
        if self.lab is not None and self.lab.boot:
            raise SpecError("parameters", "a parameter scan on hosts needs every point in each boot (no boot commands)")
        if self.sequential is not None:
            raise SpecError("parameters", "a parameter scan cannot stop when decided yet")
        from abstat.engine.grid import check_placeholders, grid_size

        if grid_size(parameters) * len(self.variants) > MAX_VARIANTS:
            raise SpecError("parameters", f"the grid times the variants is more than {MAX_VARIANTS} combinations")
        check_placeholders(self)

    def _check_metrics(self) -> None:
        metrics = self.metrics
        if not isinstance(metrics, (list, tuple)) or len(metrics) > MAX_METRICS:
            raise SpecError("metrics", f"must be a list of at most {MAX_METRICS} metric sources")
        seen: set[str] = set()
        for index, source in enumerate(metrics):
            _check_source(f"metrics[{index}]", source, seen)
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
        """The versioned JSON form (:func:`encode`)."""
        return encode(self)

    @classmethod
    def from_json(cls, document: Any, source: str | None = None) -> ExperimentSpec:
        """Decode and validate an untrusted JSON document (:func:`decode`)."""
        return decode(document, source)


def _check_source(where: str, source: Any, seen: set[str]) -> None:
    """One metric source: of a known kind, its name not in ``seen`` (then added), its patterns compiling."""
    if type(source) not in SOURCES.values():
        raise SpecError(where, f"not a metric source: {type(source).__name__}")
    key = getattr(source, "name", source.kind)
    if key in seen:
        raise SpecError(where, f"{key!r} given twice")
    seen.add(key)
    if hasattr(source, "compiled"):
        try:
            source.compiled()
        except ValueError as err:
            raise SpecError(where, str(err)) from None


# --------------------------------------------------------------------------
# the JSON form

MAX_DOCUMENT_BYTES = 4 << 20
_TOP = (
    "abstat_spec",
    "experiment",
    "variants",
    "runs",
    "warmup",
    "order",
    "seed",
    "shell",
    "timeout",
    "on_failure",
    "hooks",
    "background",
    "metrics",
    "labels",
    "rev",
    "lab",
    "analysis",
    "store",
    "cpus",
    "isolate",
    "sequential",
    "parameters",
)


def dumps(spec: ExperimentSpec) -> str:
    return json.dumps(encode(spec), indent=2, sort_keys=False) + "\n"


def loads(text: str | bytes, source: str | None = None) -> ExperimentSpec:
    """Decode a JSON text (a file's contents): :class:`SpecError` for bad JSON too."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise SpecError("", f"a specification is at most {MAX_DOCUMENT_BYTES >> 20} MiB", source)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise SpecError("", f"not a JSON specification: {err}", source) from None
    return decode(document, source)


def decode(document: Any, source: str | None = None) -> ExperimentSpec:
    """The validated specification of a JSON document (parsed already)."""
    doc = json_object("specification", document, _TOP, source)
    version = _version(doc.get("abstat_spec"), source)
    try:
        return _build(doc, source, version)
    except SpecError as err:
        if err.path is None and source is not None:
            raise SpecError(err.field, err.problem, source) from None
        raise
    except (TypeError, ValueError) as err:  # a source's own check, or a value of the wrong type deep down
        raise SpecError("specification", str(err), source) from None


def _version(version: Any, source: str | None) -> int:
    """``abstat_spec``: a version this abstat reads."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise SpecError("abstat_spec", "missing or not a version number: not an abstat specification", source)
    if version > SPEC_VERSION:
        raise SpecError(
            "abstat_spec",
            f"version {version} was written by a newer abstat (this one reads up to {SPEC_VERSION})",
            source,
        )
    if version < 1:
        raise SpecError("abstat_spec", f"no version {version}", source)
    return version


def _build(doc: dict[str, Any], source: str | None, version: int = SPEC_VERSION) -> ExperimentSpec:
    return ExperimentSpec(**spec_arguments(doc, source, version))
