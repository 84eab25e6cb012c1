"""The executor of an experiment plan: one builder for runs on this machine and on a test box.

:func:`build_executor` turns an :class:`~abstat.box.runner.plan.ExperimentPlan`'s
measuring settings (its metric ``sources``, ``cpus`` and ``isolate``) into a
:class:`~abstat.box.runner.executor.ProcessExecutor`: the engine's local
sessions (:class:`abstat.engine.session.LocalSession`) and the runner on a box
(:mod:`abstat.box.runner.remote`) build theirs here, so the two measure alike.
Standard library only: this ships to the box.
"""

from __future__ import annotations

from collections.abc import Callable

from abstat.box.runner import perf as perf_mod
from abstat.box.runner.executor import ProcessExecutor  # imported now: on a box, the shipped zip is deleted once loaded
from abstat.box.runner.sources import executor_options

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)

if TYPE_CHECKING:
    from abstat.box.runner.plan import ExperimentPlan


def build_executor(
    plan: ExperimentPlan,
    *,
    perf: perf_mod.PerfSupport | None = None,
    subreaper: bool = True,
    cgroups: bool = True,
    make: Callable[..., ProcessExecutor] | None = None,
) -> tuple[ProcessExecutor, perf_mod.PerfSupport | None]:
    """The executor that measures ``plan``'s runs, and the perf probe it counts with.

    Regex and JSON-lines sources share one scan of the output, a perf source wraps
    each command (``perf``: the probe of its events, probed here when None), the
    other sources bring their collectors; every measured command starts on
    ``plan.cpus`` (``plan.isolate``: theirs alone).  ``subreaper``, ``cgroups``: see
    :class:`~abstat.box.runner.executor.ProcessExecutor` (``make``: its class, unless
    given).  Raises ValueError when a metric source cannot be set up,
    :class:`~abstat.box.isolate.IsolationError` when the CPUs cannot be isolated."""
    options = executor_options(plan.sources)
    if perf is None and options.perf_events:
        perf = perf_mod.probe(options.perf_events)
    executor = (make or ProcessExecutor)(
        patterns=options.patterns,
        json_lines=options.json_lines,
        perf=perf,
        collectors=options.collectors,
        subreaper=subreaper,
        cgroups=cgroups,
        cpus=plan.cpus,
        isolate=plan.isolate,
    )
    return executor, perf
