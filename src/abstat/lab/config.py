"""What the lab needs of an experiment, and its schedules.

Nothing here runs anything.  The host workers (:mod:`abstat.lab.host`) run
the engine's :class:`~abstat.box.runner.plan.ExperimentPlan` of a
specification (the one a local run runs; its JSON form is what the runner on
a box gets) and read the specification's lab (:class:`LabSpec`: hosts, boot
and check commands, boots, boot timeout) as it is: no copy of either.
:func:`boot_schedule` and :func:`boot_slots` are the seeded schedules (which
boot comes when on each host, which run when in a boot), from
:func:`boot_order` and :func:`block_slots`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from abstat.box.runner.plan import ExperimentPlan
from abstat.box.runner.schedule import SCHEDULE_VERSION


class HostSpec(Protocol):
    """A test box (:class:`abstat.engine.spec.Host`): ``label`` is the value of the host label,
    ``destination`` what ssh is given (read-only: the spec's hosts are frozen)."""

    @property
    def label(self) -> str: ...

    @property
    def destination(self) -> str: ...


class LabSpec(Protocol):
    """A specification's lab (:class:`abstat.engine.spec.Lab`, read-only): its hosts, ``boot`` and
    ``check`` (variant -> command), ``boots`` of each variant per host, ``boot_timeout`` in seconds."""

    @property
    def hosts(self) -> Sequence[HostSpec]: ...

    @property
    def boot(self) -> Mapping[str, str]: ...

    @property
    def check(self) -> Mapping[str, str]: ...

    @property
    def boots(self) -> int: ...

    @property
    def boot_timeout(self) -> float: ...

    @property
    def reboots(self) -> bool: ...


class Decider(Protocol):
    """``--until-decided`` on a host: told every measured run the host sends (a decoded result), asked at each
    look of its runner whether to stop (the reason, a note of the boot) or go on (None)."""

    def add(self, result: dict[str, Any]) -> None: ...

    def decide(self) -> str | None: ...


def boot_schedule(plan: ExperimentPlan, lab: LabSpec, host: str, version: int = SCHEDULE_VERSION) -> list[str]:
    """Variant of each boot on ``host`` (one entry, ``""``, without boot commands)."""
    if not lab.reboots:
        return [""]
    return boot_order(plan.names, lab.boots, plan.seed, host, version)


def boot_slots(
    plan: ExperimentPlan, lab: LabSpec, host: str, boot_index: int, version: int = SCHEDULE_VERSION
) -> list[list[Any]]:
    """The runs of one boot: all variants interleaved, or the booted variant's."""
    variant = boot_schedule(plan, lab, host, version)[boot_index]
    names = [variant] if variant else plan.names
    return block_slots(names, plan.runs, plan.warmup, plan.order, f"{plan.seed}:{host}:{boot_index}", version)


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
