"""The measurements of a bisection, through the engine's process control.

``abstat bisect`` and ``abstat bisect step`` choose every run themselves (a
commit, in its worktree), so they measure through an engine session
(:meth:`abstat.engine.Engine.session`): one specification holds the
benchmark, its metric and timeout, and the session runs each build and
measurement (``measure``, ``run_hook``) with the runner's containment.  A
bisection on test boxes would give the same calls a session on the host
(docs/architecture.md).
"""

from __future__ import annotations

from typing import Any

VARIANT = "bench"


def measurement_spec(run: str, metric_spec: str | None, timeout: float | None) -> Any:
    """The specification of a bisection's benchmark: ``run`` in a shell, ``metric_spec``
    (``NAME=REGEX``) or only the built-in metrics, no JSON lines."""
    from abstat.engine import ExperimentSpec, Variant
    from abstat.box.runner.sources import RegexMetric

    metrics = (RegexMetric.parse(metric_spec),) if metric_spec else ()
    return ExperimentSpec((Variant(VARIANT, run),), runs=1, shell=True, timeout=timeout, metrics=metrics)


def measurement_session(run: str, metric_spec: str | None, timeout: float | None) -> Any:
    """An engine session for the bisection's builds and runs (close it when done)."""
    from abstat.engine import Engine

    return Engine().session(measurement_spec(run, metric_spec, timeout))
