"""The order runs happen in: interleaved blocks, sequential, or random."""
from __future__ import annotations

import random
from dataclasses import dataclass

ORDERS = ("interleaved", "sequential", "random")


@dataclass(frozen=True)
class Slot:
    """One planned execution: ``iteration`` counts per variant from 0."""

    variant: str
    iteration: int
    warmup: bool = False


def build_schedule(
    variants: list[str], runs: int, *, warmup: int = 0, order: str = "interleaved", seed: int = 0
) -> list[Slot]:
    """Plan every warm-up and measured run.

    - ``interleaved`` (default): blocks; each block runs every variant once
      in an order shuffled with ``random.Random(seed)``, so drift, thermal
      throttling and cache state hit every variant alike.  Warm-up blocks
      come first.
    - ``sequential``: all runs of the first variant (after its warm-ups),
      then the next variant.
    - ``random``: warm-up blocks, then every measured run shuffled as a whole.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}: choose one of {', '.join(ORDERS)}")
    if runs < 0 or warmup < 0:
        raise ValueError("the numbers of runs and warm-up runs cannot be negative")
    rng = random.Random(seed)
    slots: list[Slot] = []
    if order == "sequential":
        for name in variants:
            slots.extend(Slot(name, i, True) for i in range(warmup))
            slots.extend(Slot(name, i) for i in range(runs))
        return slots

    def block(index: int, is_warmup: bool) -> list[Slot]:
        names = list(variants)
        rng.shuffle(names)
        return [Slot(name, index, is_warmup) for name in names]

    for i in range(warmup):
        slots.extend(block(i, True))
    if order == "interleaved":
        for i in range(runs):
            slots.extend(block(i, False))
        return slots
    pool = [name for name in variants for _ in range(runs)]
    rng.shuffle(pool)
    counters = dict.fromkeys(variants, 0)
    for name in pool:
        slots.append(Slot(name, counters[name]))
        counters[name] += 1
    return slots
