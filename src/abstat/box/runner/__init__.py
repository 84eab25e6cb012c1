"""Run benchmarks: executors, scheduling, hooks, background load.

Standard library only, so ``abstat run`` works on a bare test box.  The names
below are loaded on first use: reading a store (``abstat show``) needs only
``BUILTIN_METRICS``, not the executor and its process machinery.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

_HOMES = {
    "FakeExecutor": "fake",
    "ProcessExecutor": "executor",
    "RunContext": "model",
    "Collector": "model",
    "command_problem": "model",
    "command_problems": "model",
    "ExperimentOutcome": "experiment",
    "ExperimentPlan": "plan",
    "run_experiment": "experiment",
    "BUILTIN_METRICS": "model",
    "Command": "model",
    "Measurement": "model",
    "MetricPattern": "model",
    "RunResult": "model",
    "VariantCommand": "model",
    "parse_metric_pattern": "model",
    "ORDERS": "schedule",
    "Slot": "schedule",
    "build_schedule": "schedule",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once loaded, an ordinary attribute (tests may replace it)
    return value
