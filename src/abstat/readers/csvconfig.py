"""A CSV's configuration columns: numbers that name a configuration, not a measurement.

A sweep's CSV (``threads,variant,time``; ``iodepth``, ``numjobs``, ``bs``, ``cpus``) holds its
configuration in a column of numbers.  Read as a metric, its rows of every configuration were pooled
into one sample set a variant (a +5% change at every thread count read as +5% [-87, +731]).  A column
is taken for a configuration when its cells are integers, few and repeated alike: within each group of
rows (the text columns' values) every value appears equally often, at least twice, the same values in
every group, laid out in blocks (1 1 2 2 4 4) or in turn (1 2 4 1 2 4) as a sweep writes them.
A measured column of integers (a coarse timer's ticks, counts) is not balanced and ordered so but by
chance, and never taken when it would leave no measurement."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

_INTEGER = re.compile(r"[+-]?\d+")


def configuration_columns(
    header: Sequence[str], body: Sequence[tuple[int, Sequence[str]]], labels: Sequence[str], numeric: Sequence[str]
) -> list[str]:
    """The columns of ``numeric`` that hold a configuration, grouping the rows by the ``labels`` columns;
    none when every numeric column would be one (something must be measured)."""
    integers = [
        name for name in numeric if all(_INTEGER.fullmatch(row[header.index(name)].strip()) for _, row in body)
    ]  # a column of measured values fails at its first cell with a decimal point
    if not integers:
        return []
    label_index = [header.index(h) for h in labels]
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, (_, row) in enumerate(body):
        groups.setdefault(tuple(row[i].strip() for i in label_index), []).append(position)
    found = [name for name in integers if _configuration([int(row[header.index(name)]) for _, row in body], groups)]
    return found if len(found) < len(numeric) else []


def _configuration(cells: list[int], groups: dict[tuple[str, ...], list[int]]) -> bool:
    values: set[int] | None = None
    for positions in groups.values():
        sequence = [cells[p] for p in positions]
        counts = Counter(sequence)
        if values is None:
            values = set(counts)
        if set(counts) != values or len(counts) < 2 or len(set(counts.values())) != 1:
            return False
        if min(counts.values()) < 2 or not _laid_out(sequence, len(counts)):
            return False
    return values is not None


def _laid_out(sequence: list[int], distinct: int) -> bool:
    """In blocks of one value each, or each value in turn."""
    changes = sum(a != b for a, b in zip(sequence, sequence[1:], strict=False))
    return changes == distinct - 1 or all(sequence[i] == sequence[i - distinct] for i in range(distinct, len(sequence)))
