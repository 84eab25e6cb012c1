"""What the engine reports while it runs an experiment: events, as plain data.

The engine never prints.  It calls the ``on_event`` callback it was given
with one of these, in order, from the thread that called
:meth:`abstat.engine.Engine.run`; :mod:`abstat.cli.progress.display` draws them
(progress bars, host lines, notes) and a script may collect or ignore them.
Every event has ``kind`` (its name in snake case) and ``host`` (None for a
local run).

Local run:  experiment_started, note*, (run_started, run_done)*, experiment_done.
Lab:        experiment_started, (host_state | boot_started | run_done | boot_done
            | boot_refused | host_lost | host_done | note | tick)*, experiment_done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    host: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class ExperimentStarted(Event):
    """Before the first run: the experiment's name, its specification as run (seed drawn), the store.

    ``notes`` are what the preflight found (perf, what a killed run left,
    the doctor's warnings: ``doctor_warnings``); ``todo`` maps a host to
    (boots to make, boots already stored) on a lab run."""

    kind: ClassVar[str] = "experiment_started"
    experiment: str
    spec: Any
    store: str
    notes: tuple[str, ...] = ()
    doctor_warnings: tuple[str, ...] = ()
    perf_in_times: bool = False
    todo: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Note(Event):
    """A line for the user that is not a failure (the store went away and runs are spooled...)."""

    kind: ClassVar[str] = "note"
    text: str


@dataclass(frozen=True)
class RunStarted(Event):
    """A run (or warm-up run) is about to start: ``position`` of ``total`` slots of the schedule."""

    kind: ClassVar[str] = "run_started"
    variant: str
    iteration: int
    warmup: bool
    position: int
    total: int


@dataclass(frozen=True)
class RunDone(Event):
    """A measured run completed and is stored (failed ones too: ``status`` failed or timeout)."""

    kind: ClassVar[str] = "run_done"
    variant: str
    iteration: int
    position: int
    status: str
    wall: float
    exit_code: int | None = None
    started_at: float = 0.0
    values: dict[str, list[float]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    boot: int | None = None
    point: dict[str, str] = field(default_factory=dict)  # a parameter scan's grid point (name -> value)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class HostState(Event):
    """A host's state changed: connecting, booting, checking, running, reconnecting."""

    kind: ClassVar[str] = "host_state"
    state: str
    boot: int
    variant: str | None = None


@dataclass(frozen=True)
class BootStarted(Event):
    """A host answered in the boot its block runs in (index ``boot`` of its schedule)."""

    kind: ClassVar[str] = "boot_started"
    boot: int
    variant: str | None
    runs: int
    boot_id: str | None = None


@dataclass(frozen=True)
class BootRefused(Event):
    """``--check`` refused a boot: nothing from it is recorded; it is booted again (or the host stops)."""

    kind: ClassVar[str] = "boot_refused"
    boot: int
    variant: str
    reason: str
    attempt: int


@dataclass(frozen=True)
class BootDone(Event):
    """A boot's block ended: ``status`` complete, interrupted or failed."""

    kind: ClassVar[str] = "boot_done"
    boot: int
    status: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostLost(Event):
    """A host stopped for good (did not come back, boot loop, runner error): one line, why."""

    kind: ClassVar[str] = "host_lost"
    message: str


@dataclass(frozen=True)
class HostDone(Event):
    """A host has run every boot it had to (or stopped on an interrupt)."""

    kind: ClassVar[str] = "host_done"
    interrupted: bool = False


@dataclass(frozen=True)
class ExperimentDone(Event):
    """The end: how many runs, how many failed, and why it stopped early if it did.

    ``notes`` are the run's own (background loads that ignored SIGTERM...)."""

    kind: ClassVar[str] = "experiment_done"
    experiment: str
    status: str
    runs: int
    total: int
    failed_runs: int
    error: str | None = None
    notes: tuple[str, ...] = ()
    report: bool = True  # False: Ctrl-C cut a wait on the store's server, which is not read back


@dataclass(frozen=True)
class Tick(Event):
    """Nothing happened for a quarter of a second (a lab run): a display may update its clocks."""

    kind: ClassVar[str] = "tick"


EventSink = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The sink that drops every event (the default)."""
