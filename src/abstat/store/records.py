"""What the store hands out: plain records, no database handles."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass
class SampleSet:
    """Samples of one metric of one variant under one set of labels.

    ``runs`` holds one list of values per run group (each ``abstat run``
    invocation, hence each boot, is its own group); ``invocations`` the ids
    of those invocations, in the same order.
    """

    labels: dict[str, str]
    runs: list[list[float]]
    machine: dict[str, Any] = field(default_factory=dict)
    unit: str | None = None
    invocations: list[int] = field(default_factory=list)
