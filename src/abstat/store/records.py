"""What the store hands out: plain records, no database handles."""

from __future__ import annotations

from dataclasses import dataclass

from abstat.readers.sampleset import SampleSet

__all__ = ["ExperimentSummary", "Invocation", "SampleSet"]


@dataclass(frozen=True)
class Invocation:
    id: int
    experiment_id: int
    experiment: str
    uid: str = ""


@dataclass
class ExperimentSummary:
    name: str
    created_at: str
    last_run_at: str | None
    invocations: int
    boots: int
    hosts: list[str]
    variants: list[str]
    runs_ok: int
    runs_failed: int
