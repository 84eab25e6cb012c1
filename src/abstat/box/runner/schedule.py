"""The order runs happen in: interleaved blocks, sequential, or random.

Interleaved blocks are counterbalanced (schedule version 2): over the
blocks, each variant runs at each position of a block equally often, and
each variant directly follows each other one equally often (first-order
carry-over), by a Williams design (Williams 1949; for 2 variants: AB and BA
alike).  The design's rows are dealt to the blocks at random with the seed,
one whole design after another, and a last partial design takes rows that
keep every variant's count at each position within one of the others'.
Version 1 (before abstat recorded a version) shuffled each block on its own,
so one variant could run first in most blocks by chance; it is kept only to
replay a stored experiment's schedule (a lab ``--resume``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

ORDERS = ("interleaved", "sequential", "random")
SCHEDULE_VERSION = 2  # what build_schedule plans by default; 1: each block shuffled on its own
SCHEDULE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class Slot:
    """One planned execution: ``iteration`` counts per variant from 0."""

    variant: str
    iteration: int
    warmup: bool = False


def williams_design(k: int) -> list[list[int]]:
    """The rows of a Williams design for ``k`` treatments 0..k-1: each treatment once in every
    row and at every position once per square, each ordered pair (a, b), a != b, adjacent in
    exactly ``1`` row (k even: one k x k square) or ``2`` rows (k odd: the square and its mirror,
    2k rows)."""
    if k < 1:
        return []
    first = [0] + [(j + 1) // 2 if j % 2 else k - j // 2 for j in range(1, k)]
    square = [[(t + i) % k for t in first] for i in range(k)]
    return square if k % 2 == 0 or k == 1 else square + [row[::-1] for row in square]


def balanced_orders(variants: Sequence[str], blocks: int, rng: random.Random) -> list[list[str]]:
    """The order of the variants in each of ``blocks`` blocks: the rows of a Williams design (the
    variants assigned to its symbols at random), each whole design's rows in a random order, then
    as many rows as are left over, taken so that no variant's count at a position exceeds
    another's by more than one (every prefix of whole designs is exactly balanced)."""
    names = list(variants)
    rng.shuffle(names)
    k = len(names)
    design = williams_design(k)
    if not design:
        return [[] for _ in range(blocks)]
    size = len(design)
    rows: list[list[int]] = []
    for _ in range(blocks // size):
        cycle = [list(row) for row in design]
        rng.shuffle(cycle)
        rows.extend(cycle)
    left = blocks % size
    if left:
        if size == k:  # one Latin square: any distinct rows hold a position once at most
            rest = rng.sample(design, left)
        else:  # k odd: the square and its mirror; one of them first, whole
            squares = [design[:k], design[k:]]
            if rng.random() < 0.5:
                squares.reverse()
            rest = rng.sample(squares[0], left) if left <= k else squares[0] + rng.sample(squares[1], left - k)
            rest = [list(row) for row in rest]
            rng.shuffle(rest)
        rows.extend(rest)
    return [[names[t] for t in row] for row in rows]


def build_schedule(
    variants: list[str],
    runs: int,
    *,
    warmup: int = 0,
    order: str = "interleaved",
    seed: int = 0,
    version: int = SCHEDULE_VERSION,
) -> list[Slot]:
    """Plan every warm-up and measured run.

    - ``interleaved`` (default): blocks; each block runs every variant once,
      so drift, thermal throttling and cache state hit every variant alike;
      the blocks' orders are counterbalanced (see the module's text),
      reproducibly from ``random.Random(seed)``.  Warm-up blocks come first
      (counterbalanced among themselves).
    - ``sequential``: all runs of the first variant (after its warm-ups),
      then the next variant.
    - ``random``: warm-up blocks (each shuffled), then every measured run
      shuffled as a whole.

    ``version`` 1 replays the schedule abstat planned before version 2 for the
    same seed (``interleaved``: each block shuffled on its own); the other
    orders are the same in both versions.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}: choose one of {', '.join(ORDERS)}")
    if version not in SCHEDULE_VERSIONS:
        raise ValueError(f"unknown schedule version {version!r}: choose one of {SCHEDULE_VERSIONS}")
    if runs < 0 or warmup < 0:
        raise ValueError("the numbers of runs and warm-up runs cannot be negative")
    rng = random.Random(seed)
    slots: list[Slot] = []
    if order == "sequential":
        for name in variants:
            slots.extend(Slot(name, i, True) for i in range(warmup))
            slots.extend(Slot(name, i) for i in range(runs))
        return slots
    if order == "interleaved" and version >= 2:
        for is_warmup, count in ((True, warmup), (False, runs)):
            for i, names in enumerate(balanced_orders(variants, count, rng)):
                slots.extend(Slot(name, i, is_warmup) for name in names)
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
