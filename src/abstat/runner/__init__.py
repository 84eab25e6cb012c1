"""Run benchmarks: executors, scheduling, hooks, background load.

Standard library only, so ``abstat run`` works on a bare test box.
"""
from __future__ import annotations

from abstat.runner.executor import FakeExecutor, ProcessExecutor, RunContext
from abstat.runner.experiment import ExperimentOutcome, ExperimentPlan, run_experiment
from abstat.runner.model import (
    BUILTIN_METRICS,
    Command,
    Measurement,
    MetricPattern,
    RunResult,
    Variant,
    parse_metric_pattern,
)
from abstat.runner.schedule import ORDERS, Slot, build_schedule

__all__ = [
    "BUILTIN_METRICS", "Command", "ExperimentOutcome", "ExperimentPlan", "FakeExecutor",
    "Measurement", "MetricPattern", "ORDERS", "ProcessExecutor", "RunContext", "RunResult",
    "Slot", "Variant", "build_schedule", "parse_metric_pattern", "run_experiment",
]
