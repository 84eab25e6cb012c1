"""The lab's view of an experiment, and its schedules.

Nothing here runs anything: a :class:`LabPlan` is what the host workers
(:mod:`abstat.lab.host`) need of a specification (the engine builds it:
:func:`abstat.engine.hosts.lab_plan`); :func:`boot_order` and
:func:`block_slots` are the seeded schedules (which boot comes when on each
host, which run when in a boot).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from abstat.box.runner.schedule import SCHEDULE_VERSION

DEFAULT_BOOT_TIMEOUT_S = 600.0


class HostSpec(Protocol):
    """A test box (:class:`abstat.engine.spec.Host`): ``label`` is the value of the host label,
    ``destination`` what ssh is given (read-only: the spec's hosts are frozen)."""

    @property
    def label(self) -> str: ...

    @property
    def destination(self) -> str: ...


class Decider(Protocol):
    """``--until-decided`` on a host: told every measured run the host sends (a decoded result), asked at each
    look of its runner whether to stop (the reason, a note of the boot) or go on (None)."""

    def add(self, result: dict[str, Any]) -> None: ...

    def decide(self) -> str | None: ...


@dataclass
class LabPlan:
    """Everything a host worker needs to run (and resume) its part of one experiment.

    ``remote`` is the request the shipped runner gets besides the variants and
    slots (shell, timeout, hooks, background, metric sources, failure policy)."""

    experiment: str
    hosts: Sequence[HostSpec]
    variants: dict[str, str]  # name -> measured command
    runs: int
    warmup: int
    order: str
    seed: int
    boot: dict[str, str] = field(default_factory=dict)  # variant -> boot command
    check: dict[str, str] = field(default_factory=dict)  # variant -> check command
    boots: int = 1
    boot_timeout: float = DEFAULT_BOOT_TIMEOUT_S
    labels: dict[str, str] = field(default_factory=dict)
    remote: dict[str, Any] = field(default_factory=dict)  # the runner's settings (shell, hooks, metrics...)
    schedule: int = SCHEDULE_VERSION  # the schedule version (box.runner.schedule); 1 resumes an older one

    @property
    def reboots(self) -> bool:
        return bool(self.boot)

    def boot_schedule(self, host: str) -> list[str]:
        """Variant of each boot on ``host`` (one entry, ``""``, without --boot)."""
        if not self.reboots:
            return [""]
        return boot_order(list(self.variants), self.boots, self.seed, host, self.schedule)

    def slots(self, host: str, boot_index: int) -> list[list[Any]]:
        """The runs of one boot: all variants interleaved, or the booted variant's."""
        variant = self.boot_schedule(host)[boot_index]
        names = [variant] if variant else list(self.variants)
        return block_slots(names, self.runs, self.warmup, self.order, f"{self.seed}:{host}:{boot_index}", self.schedule)


def boot_order(variants: Sequence[str], boots: int, seed: int, host: str, version: int = SCHEDULE_VERSION) -> list[str]:
    """Balanced, seeded, randomized: ``boots`` rounds, each boots every variant
    once (so not all "before" first, and every prefix of the schedule is
    within one boot of balanced); the rounds' orders are counterbalanced like
    interleaved blocks (:func:`abstat.box.runner.schedule.balanced_orders`: each
    variant boots first in as many rounds as another, within one).  Version 1:
    each round shuffled on its own (what an experiment stored before recorded)."""
    from abstat.box.runner.schedule import balanced_orders

    rng = random.Random(f"boot-order:{seed}:{host}")
    if version >= 2:
        return [name for round_ in balanced_orders(variants, boots, rng) for name in round_]
    order: list[str] = []
    for _ in range(boots):
        round_ = list(variants)
        rng.shuffle(round_)
        order.extend(round_)
    return order


def block_slots(
    names: Sequence[str], runs: int, warmup: int, order: str, seed: str, version: int = SCHEDULE_VERSION
) -> list[list[Any]]:
    """``[variant, iteration, warmup, position]`` for every run of one block."""
    from abstat.box.runner.schedule import build_schedule

    number = random.Random(f"block:{seed}").randrange(2**31)
    slots = build_schedule(list(names), runs, warmup=warmup, order=order, seed=number, version=version)
    return [[slot.variant, slot.iteration, slot.warmup, position] for position, slot in enumerate(slots)]
