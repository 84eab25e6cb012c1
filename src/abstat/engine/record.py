"""What the engine writes to the store and returns: settings of an invocation, the result.

Every invocation records ``settings``: the options as before (``runs``,
``warmup``, ``order``, ``seed``, ``hooks``, ``metrics``... which ``abstat show``
and older readers know), ``spec``, the specification as run, in its JSON
form (what ``abstat run --resume`` reloads), and ``caller``, what the caller
asked to keep with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from abstat.engine.events import RunDone
from abstat.engine.spec import ExperimentSpec
from abstat.box.runner.schedule import SCHEDULE_VERSION
from abstat.box.runner.sources import JsonLines, RegexMetric


def settings_of(
    spec: ExperimentSpec,
    perf_events: list[str],
    caller: dict[str, Any] | None = None,
    point: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The ``settings`` of an invocation of ``spec`` (``perf_events``: those counted here; ``caller``:
    what the caller keeps with it, see :class:`abstat.engine.Engine`; ``point``: a parameter scan's grid
    point this invocation holds, whose values its ``variants`` commands have)."""
    from abstat import __version__
    from abstat.engine.grid import substitute

    settings = {
        "runs": spec.runs,
        "warmup": spec.warmup,
        "order": spec.order,
        "seed": spec.seed,
        "schedule": SCHEDULE_VERSION,  # how the seed's schedule is planned (abstat.box.runner.schedule)
        "timeout": spec.timeout,
        "shell": spec.shell,
        "ignore_failure": spec.ignore_failure,
        "hooks": spec.hooks.items(),
        "background": list(spec.background),
        "metrics": [source.text for source in spec.metrics if isinstance(source, RegexMetric)],
        "json_lines": any(isinstance(source, JsonLines) for source in spec.metrics),
        "perf_events": list(perf_events),
        "variants": {v.name: substitute(v.command, point or {}) for v in spec.variants},
        "cpus": list(spec.cpus),
        **({"isolate": True} if spec.isolate else {}),
        "abstat": __version__,
        "spec": dict(spec.to_json(), store=None),  # where it is stored goes without saying (and may hold a password)
    }
    if spec.parameters:  # which labels are the grid's (abstat report's grid analysis reads them)
        settings["parameters"] = {name: list(values) for name, values in spec.parameters.items()}
    if caller:
        settings["caller"] = caller
    return settings


def default_name(store: Any, prefix: str = "run") -> str:
    """``PREFIX-YYYYMMDD-HHMMSS`` (``-2``, ``-3``... when taken) for an unnamed experiment."""
    base = time.strftime(f"{prefix}-%Y%m%d-%H%M%S", time.localtime())
    name, counter = base, 1
    while store.has_experiment(name):
        counter += 1
        name = f"{base}-{counter}"
    return name


def run_notes(notes: list[str], stderr_tail: str) -> list[str]:
    """A run's notes as stored: the measurement's, and the end of its standard error when it failed."""
    return list(notes) + ([f"stderr: {stderr_tail}"] if stderr_tail else [])


def add_run(store: Any, invocation: Any, run: RunDone, command: str) -> None:
    store.add_run(
        invocation,
        variant=run.variant,
        command=command,
        iteration=run.iteration,
        position=run.position,
        status=run.status,
        exit_code=run.exit_code,
        started_at=run.started_at,
        wall=run.wall,
        values=run.values,
        units=run.units,
        notes=list(run.notes),
    )


@dataclass
class ExperimentResult:
    """What :meth:`abstat.engine.Engine.run` returns: the specification as run, its runs, how it ended.

    ``status`` is ``complete``, ``interrupted`` (Ctrl-C, SIGTERM) or
    ``failed`` (``error`` says why: a hook, a run without
    ``on_failure="continue"``, a host: ``hosts_failed``).  Every run listed is
    in the store (``store``) under ``experiment``.
    """

    spec: ExperimentSpec
    experiment: str
    store: str
    status: str = "complete"
    runs: list[RunDone] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    hosts_failed: dict[str, str] = field(default_factory=dict)

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"

    @property
    def failed_runs(self) -> list[RunDone]:
        return [run for run in self.runs if not run.ok]

    def values(
        self, variant: str, metric: str = "wall", host: str | None = None, point: dict[str, str] | None = None
    ) -> list[float]:
        """Every value of ``metric`` from the successful runs of ``variant`` (of ``host``; at a parameter
        scan's grid ``point``, e.g. ``{"size": "10"}``; None: every point), in run order."""
        return [
            value
            for run in self.runs
            if run.ok
            and run.variant == variant
            and (host is None or run.host == host)
            and (point is None or run.point == point)
            for value in run.values.get(metric, [])
        ]
