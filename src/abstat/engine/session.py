"""Sessions: where the engine's runs happen, with the processes they start under control.

:class:`LocalSession` is this machine: the preflight of a specification
(every command exists, the metric sources can be set up), the executor built
from its metric sources (regex, JSON lines, perf, and any collector a new
source brings), and the experiment loop of :mod:`abstat.box.runner.experiment`.
It is also what a caller that picks each run itself measures through
(``abstat bisect``: :meth:`LocalSession.measure`, :meth:`LocalSession.run_hook`,
the :class:`~abstat.box.runner.model.Executor` interface).

On hosts, the lab's :class:`abstat.lab.host.HostWorker` plays this part
over ssh (:mod:`abstat.engine.hosts`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from abstat.engine.events import EventSink, RunStarted, ignore
from abstat.engine.spec import ExperimentSpec
from abstat.errors import UsageError, named, usage_error
from abstat.box.runner.model import Command, Measurement, RunContext, RunResult, command_problem

if TYPE_CHECKING:
    from abstat.box.runner.plan import ExperimentPlan


def commands_of(spec: ExperimentSpec) -> list[tuple[str, str]]:
    """(what, command) of every command a spec runs: variants, hooks, background loads."""
    from abstat.engine.grid import schedule_entries

    found: list[tuple[str, str]] = []
    for entry in schedule_entries(spec):  # at every grid point, {NAME} replaced
        found.append((f"variant {entry.name!r}", entry.command))
        found += [(f"--{kind}", text) for kind, text in entry.hooks.items() if (f"--{kind}", text) not in found]
    found += [("--background", text) for text in spec.background]
    return found


def check_commands(spec: ExperimentSpec) -> None:
    """Fail before anything runs when a command cannot be executed on this machine."""
    for what, text in commands_of(spec):
        problem = command_problem(what, text, spec.shell)
        if problem is not None:
            raise UsageError(problem)
    from abstat.box.runner.sources import source_problems

    for error in source_problems(spec.metrics):  # the kernel log readable, every --trace probe attaches
        raise usage_error(error)
    from abstat.box.runner.process import cpus_problem

    problem = cpus_problem(spec.cpus)
    if problem is None and spec.isolate:
        from abstat.box.isolate import isolation_problem

        problem = isolation_problem(spec.cpus)
    if problem is not None:
        raise UsageError(problem)


def probe_perf(spec: ExperimentSpec) -> Any:
    """What ``perf stat`` can count here of the spec's perf events (None without a perf source)."""
    from abstat.box.runner import perf as perf_mod
    from abstat.box.runner.sources import Perf

    events = next((source.events for source in spec.metrics if isinstance(source, Perf)), None)
    return perf_mod.probe(events) if events else None


class LocalSession:
    """This machine's processes for one specification; :meth:`close` ends everything they started.

    ``perf`` is the spec's perf probe (:func:`probe_perf`; probed here when
    not given).  Pass ``subreaper=False, cgroups=False`` in a program that runs
    processes of its own at the same time (see
    :class:`~abstat.box.runner.executor.ProcessExecutor`).  ``notes``: what the
    metric sources said when the session closed.
    """

    def __init__(
        self,
        spec: ExperimentSpec,
        *,
        on_event: EventSink = ignore,
        perf: Any = None,
        subreaper: bool = True,
        cgroups: bool = True,
    ) -> None:
        from abstat.box.runner import ProcessExecutor  # the package's name for it (a test may replace it)
        from abstat.box.runner.build import build_executor

        self.spec = spec
        self.on_event = on_event
        self.notes: list[str] = []
        # A caller that chooses each run (abstat bisect) leaves the seed open: it draws no schedule.
        self.plan = experiment_plan(spec if spec.seed is not None else spec.replace(seed=0))
        self.executor, self.perf = build_executor(
            self.plan, perf=perf, subreaper=subreaper, cgroups=cgroups, make=ProcessExecutor
        )

    # -- the Executor interface, for callers that choose each run -------------

    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        return self.executor.measure(command, context, timeout=timeout)

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        return self.executor.run_hook(kind, command, context, timeout=timeout)

    def start_background(self, command: Command) -> Any:
        return self.executor.start_background(command)

    # -- a whole specification -------------------------------------------------

    def run(self, on_result: Callable[[RunResult], None]) -> Any:
        """Run the spec's schedule (seed fixed); ``on_result`` gets each measured run as it completes.
        Returns the runner's :class:`~abstat.box.runner.experiment.ExperimentOutcome`."""
        from abstat.box.runner.experiment import run_experiment

        assert self.spec.seed is not None, "the engine fixes the seed before running"
        sink = self.on_event

        def slot(slot: Any, position: int, total: int) -> None:  # shown with its grid point, if any
            sink(RunStarted(slot.variant, slot.iteration, slot.warmup, position, total))

        return run_experiment(
            self.plan, self.executor, on_result=on_result, on_slot=slot, should_stop=stop_when_decided(self.spec)
        )

    def close(self) -> None:
        """End every process the session started (idempotent)."""
        self.executor.close()
        self.notes.extend(self.executor.notes)
        self.executor.notes.clear()

    def __enter__(self) -> LocalSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def experiment_plan(spec: ExperimentSpec) -> ExperimentPlan:
    """The runner's plan of a spec (its seed must be fixed): what runs here, and what a test box gets
    (:meth:`~abstat.box.runner.plan.ExperimentPlan.to_json`)."""
    from abstat.box.runner.model import VariantCommand
    from abstat.box.runner.plan import ExperimentPlan
    from abstat.engine.grid import schedule_entries

    assert spec.seed is not None, "the engine fixes the seed before running"
    hooks = {kind: Command(text, spec.shell) for kind, text in spec.hooks.items().items()}
    entries = schedule_entries(spec)  # a grid: every variant at every point, one variant of the schedule each
    own_hooks = (
        {e.name: {kind: Command(text, spec.shell) for kind, text in e.hooks.items()} for e in entries}
        if spec.parameters
        else {}
    )
    return ExperimentPlan(
        variants=[VariantCommand(e.name, Command(e.command, spec.shell)) for e in entries],
        runs=spec.runs,
        warmup=spec.warmup,
        order=spec.order,
        seed=spec.seed,
        timeout=spec.timeout,
        background=[Command(text, spec.shell) for text in spec.background],
        ignore_failure=spec.ignore_failure,
        variant_hooks=own_hooks,
        sources=list(spec.metrics),
        cpus=spec.cpus,
        isolate=spec.isolate,
        decide=spec.sequential is not None,  # on a box, the runner asks at each block's end
        setup=hooks.get("setup"),
        cleanup=hooks.get("cleanup"),
        prepare=hooks.get("prepare"),
        conclude=hooks.get("conclude"),
    )


UNTIL = ("until_decided",)  # the field a note of --until-decided names (abstat.errors.named)


def decided_metric(spec: ExperimentSpec) -> str:
    """The metric ``--until-decided`` judges: the one it names, else the first the spec defines, else wall."""
    from abstat.box.runner.sources import Kmsg, RegexMetric

    assert spec.sequential is not None
    if spec.sequential.metric:
        return spec.sequential.metric
    for source in spec.metrics:
        if isinstance(source, RegexMetric):
            return source.name
        if isinstance(source, Kmsg):
            return source.metrics[0].name
    return "wall"


def stop_when_decided(spec: ExperimentSpec) -> Callable[[list[RunResult]], str | None] | None:
    """``run_experiment``'s ``should_stop`` for ``--until-decided`` (None without it): at each of the design's
    looks, :meth:`abstat.comparison.sequential.SequentialDesign.decide` on the runs so far."""
    if spec.sequential is None:
        return None
    from abstat.comparison.sequential import SequentialDesign

    design = SequentialDesign(
        spec.sequential.min_runs, spec.runs, spec.sequential.threshold, alpha=1 - spec.analysis.confidence / 100
    )
    looks, metric = set(design.looks()), decided_metric(spec)
    baseline = spec.analysis.baseline or spec.names[0]
    state: list[Any] = [None]

    def should_stop(results: list[RunResult]) -> str | None:
        runs = len(results) // len(spec.variants)
        if runs not in looks:
            return None
        runs_of = _runs_compared(spec.names, results, metric)
        if any(sum(len(run) for run in found) < 2 for found in runs_of.values()):
            return (
                None
                if runs < spec.runs
                else named(f"{{until_decided}}: fewer than 2 values of {metric!r} per variant", *UNTIL)
            )
        higher = _higher_is_better(spec, metric, results)
        samples = {name: found[0] if len(found) == 1 else found for name, found in runs_of.items()}
        state[0] = design.decide(samples, baseline, runs, state[0], higher_is_better=higher)
        reason = state[0].stop_reason
        return None if reason is None else named(f"{{until_decided}} on {metric}: {reason}", *UNTIL)

    return should_stop


def _runs_compared(names: list[str], results: list[RunResult], metric: str) -> dict[str, list[list[float]]]:
    """Each variant's runs' values of ``metric``, which a look compares as the end table does
    (``abstat.render.run_rows``: the runs, or one run's values); a look judging the pooled samples told an
    estimate and interval other than the table's below it (attack23 #10d)."""
    runs: dict[str, list[list[float]]] = {name: [] for name in names}
    for result in results:
        values = list(result.measurement.values.get(metric, ())) if result.measurement.ok else []
        if values:
            runs[result.variant].append(values)
    return runs


def _higher_is_better(spec: ExperimentSpec, metric: str, results: list[RunResult]) -> bool:
    """The decided metric's direction as the report judges it (:func:`abstat.report.analysis.higher_is_better`
    of the unit its runs measured it in: a throughput in MB/s is better higher)."""
    from abstat.report.analysis import higher_is_better

    units = (getattr(r.measurement, "units", None) or {} for r in results)
    unit = next((u[metric] for u in units if isinstance(u.get(metric), str)), None)
    return higher_is_better(metric, unit, spec.analysis.higher_is_better, spec.analysis.lower_is_better)
