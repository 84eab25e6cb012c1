"""An experiment as the runner runs it: :class:`ExperimentPlan`, and its JSON form.

The engine builds the plan of a validated specification once
(:func:`abstat.engine.session.experiment_plan`: a parameter grid expanded into
variants, every command with the shell flag).  A run on this machine hands it
to :func:`abstat.box.runner.experiment.run_experiment`; a run on a test box
sends :meth:`ExperimentPlan.to_json` over ssh with the block's slots, and the
runner there runs :meth:`ExperimentPlan.from_json` of it with the same loop
(:mod:`abstat.box.runner.remote`).  Standard library only: this ships to the box.

The JSON form (a request adds ``"slots"``: the runs of the block left to run)::

    {"variants": {"before": "./hcall", ...}, "runs": 10, "warmup": 0,
     "order": "interleaved", "seed": 1234, "shell": false, "timeout": null,
     "hooks": {"prepare": "make clean"}, "background": [],
     "sources": [{"source": "json-lines"}], "ignore_failure": false,
     "cpus": [2, 3], "isolate": false, "decide": false,
     "variant_hooks": {"before [size=10]": {"prepare": "..."}}}

Only ``variants`` is required; ``sources`` absent, the first protocol's
``metrics``, ``json_lines`` and ``perf_events`` are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from abstat.box.runner.model import Command, VariantCommand
from abstat.box.runner.schedule import Slot, build_schedule
from abstat.box.runner.sources import JsonLines, Perf, RegexMetric, decode_source

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

HOOK_KINDS = ("setup", "cleanup", "prepare", "conclude")


@dataclass
class ExperimentPlan:
    """What the runner needs of an experiment: the variants (a grid's points as variants of their
    own), the schedule's settings, hooks, background loads, and how runs are measured (metric
    ``sources``, ``cpus``, ``isolate``); ``decide``: ``--until-decided`` on a box (it asks the
    controller at each block's end); ``slots``: a schedule given (the rest of a boot's block)."""

    variants: list[VariantCommand]
    runs: int
    warmup: int = 0
    order: str = "interleaved"
    seed: int = 0
    timeout: float | None = None
    setup: Command | None = None
    cleanup: Command | None = None
    prepare: Command | None = None
    conclude: Command | None = None
    background: list[Command] = field(default_factory=list)
    ignore_failure: bool = False
    variant_hooks: dict[str, dict[str, Command]] = field(default_factory=dict)  # variant -> kind -> its own hook
    sources: list[Any] = field(default_factory=list)  # abstat.box.runner.sources' metric sources
    cpus: tuple[int, ...] = ()
    isolate: bool = False
    decide: bool = False
    slots: list[Slot] | None = None

    def schedule(self) -> list[Slot]:
        if self.slots is not None:
            return list(self.slots)
        return build_schedule(
            [v.name for v in self.variants], self.runs, warmup=self.warmup, order=self.order, seed=self.seed
        )

    @property
    def names(self) -> list[str]:
        """The variants' names, in order."""
        return [variant.name for variant in self.variants]

    @property
    def shell(self) -> bool:
        """Whether the commands run with ``/bin/sh -c`` (all of them, or none)."""
        return bool(self.variants) and self.variants[0].command.shell

    def hooks(self) -> dict[str, Command]:
        """The hooks given, kind -> command."""
        found = {kind: getattr(self, kind) for kind in HOOK_KINDS}
        return {kind: command for kind, command in found.items() if command is not None}

    def commands(self) -> list[Command]:
        """Every command of the plan: variants, hooks, each variant's own hooks, background loads."""
        found = [v.command for v in self.variants] + list(self.hooks().values()) + list(self.background)
        return found + [command for kinds in self.variant_hooks.values() for command in kinds.values()]

    def to_json(self) -> dict[str, Any]:
        """The plan's JSON form (what :meth:`from_json` reads back)."""
        shell = self.shell
        if any(command.shell != shell for command in self.commands()):
            raise ValueError("a plan's commands run all with a shell or all without")
        return {
            "variants": {v.name: v.command.text for v in self.variants},
            "runs": self.runs,
            "warmup": self.warmup,
            "order": self.order,
            "seed": self.seed,
            "shell": shell,
            "timeout": self.timeout,
            "hooks": {kind: command.text for kind, command in self.hooks().items()},
            "background": [command.text for command in self.background],
            "sources": [source.to_json() for source in self.sources],
            "ignore_failure": self.ignore_failure,
            "cpus": list(self.cpus),
            "isolate": self.isolate,
            "decide": self.decide,
            "variant_hooks": {
                name: {kind: command.text for kind, command in kinds.items()}
                for name, kinds in self.variant_hooks.items()
            },
        }

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ExperimentPlan:
        """The plan of a JSON form (ValueError naming what is wrong in a metric source or ``cpus``)."""
        shell = bool(body.get("shell"))
        hooks = {kind: Command(text, shell) for kind, text in (body.get("hooks") or {}).items() if text}
        return cls(
            variants=[VariantCommand(name, Command(text, shell)) for name, text in body["variants"].items()],
            runs=body.get("runs", 0),
            warmup=body.get("warmup", 0),
            order=body.get("order", "interleaved"),
            seed=body.get("seed", 0),
            timeout=body.get("timeout"),
            setup=hooks.get("setup"),
            cleanup=hooks.get("cleanup"),
            prepare=hooks.get("prepare"),
            conclude=hooks.get("conclude"),
            background=[Command(text, shell) for text in body.get("background") or []],
            ignore_failure=bool(body.get("ignore_failure")),
            variant_hooks={
                name: {kind: Command(text, shell) for kind, text in kinds.items() if text}
                for name, kinds in (body.get("variant_hooks") or {}).items()
            },
            sources=_sources(body),
            cpus=_cpus(body),
            isolate=body.get("isolate") is True,
            decide=body.get("decide") is True,
        )


def _sources(body: dict[str, Any]) -> list[Any]:
    """The metric sources: ``sources`` (JSON forms), else the first protocol's keys ``metrics``
    (``NAME=REGEX[:UNIT]`` texts), ``json_lines`` (default on) and ``perf_events``."""
    if "sources" in body:
        return [decode_source(item) for item in body["sources"] or []]
    found: list[Any] = [RegexMetric.parse(text) for text in body.get("metrics") or []]
    if body.get("json_lines", True):
        found.append(JsonLines())
    if body.get("perf_events"):
        found.append(Perf(tuple(body["perf_events"])))
    return found


def _cpus(body: dict[str, Any]) -> tuple[int, ...]:
    """``cpus`` (absent from older controllers' plans): a list of CPU numbers."""
    cpus = body.get("cpus") or []
    if not isinstance(cpus, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in cpus):
        raise ValueError("the plan's cpus must be a list of CPU numbers")
    return tuple(cpus)
