"""A CSV's configuration columns: numbers that name a configuration, not a measurement.

A sweep's CSV (``threads,variant,time``; ``iodepth``, ``numjobs``, ``bs``, ``cpus``) holds its
configuration in a column of numbers.  Read as a metric, its rows of every configuration were pooled
into one sample set a variant (a +5% change at every thread count read as +5% [-87, +731]).

A column of integers is a candidate when, within each group of rows (the text columns' values: each
variant), it holds the same few values, each at least twice.  A sweep writes each value about as often
(one failed repetition costs a row), in blocks (1 1 2 2), in turn (1 2 1 2) or in a random order; a
measurement of a few integer values (a coarse timer's ticks, cycles on a grid, counts) comes that evenly
only by chance.  The chance is computed for the most even measurement there is, its values equally
likely (:func:`balance_chance`: no measurement spreads its counts more evenly), times, when every group
is laid out in blocks or in turn, the chance of that order among the orders of the same counts.  Below
:data:`SURE` the column is a configuration (a label, with a note naming ``--csv-value``); below
:data:`DOUBT` it stays a measurement, with a note naming ``--csv-labels``; never all numeric columns
(something must be measured).  Each cell is read once: linear in the size of the table."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

_INTEGER = re.compile(r"[+-]?\d+")
SURE = 1e-3  # chance below which a column is a configuration
DOUBT = 1e-2  # below which a measurement gets a note naming --csv-labels
MOST_VALUES = 32  # a configuration's values are few


@dataclass
class Configurations:
    """The configuration columns (labels) and the doubtful ones (measurements with a note)."""

    found: list[str] = field(default_factory=list)
    doubtful: list[str] = field(default_factory=list)

    def add(self, name: str, chance: float | None) -> None:
        """File column ``name`` by its :func:`column_chance`."""
        if chance is not None and chance <= SURE:
            self.found.append(name)
        elif chance is not None and chance <= DOUBT:
            self.doubtful.append(name)

    def notes(self, path: str, values: Sequence[str]) -> list[str]:
        """What the sets of ``path`` say of the columns (none of a doubtful one chosen among the ``values``)."""
        return [
            f"{path}: column {name!r} read as a label, a configuration (few integers, about as often in every "
            f"variant); --csv-value {name} compares it as a measurement"
            for name in self.found
        ] + [
            f"{path}: column {name!r} compared as a measurement, though its few integers come about as often in "
            f"every variant: if it names a configuration, --csv-labels {name}"
            for name in self.doubtful
            if name not in values
        ]


def configuration_columns(
    header: Sequence[str], body: Sequence[tuple[int, Sequence[str]]], labels: Sequence[str], numeric: Sequence[str]
) -> Configurations:
    """The columns of ``numeric`` that hold a configuration, grouping the rows by the ``labels`` columns;
    none when every numeric column would be one (something must be measured: then all are doubtful)."""
    at = {name: i for i, name in enumerate(header)}
    rows = [row for _, row in body]
    groups = _groups(rows, [at[h] for h in labels])
    result = Configurations()
    for name in numeric:
        cells = _integers([row[at[name]] for row in rows])
        result.add(name, None if cells is None else column_chance([[cells[p] for p in g] for g in groups]))
    if len(result.found) == len(numeric):
        return Configurations(doubtful=result.found)
    return result


def _groups(rows: list[Sequence[str]], labels: list[int]) -> list[list[int]]:
    """The positions of the rows of each combination of the label columns' values."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, row in enumerate(rows):
        groups.setdefault(tuple(row[i].strip() for i in labels), []).append(position)
    return list(groups.values())


def _integers(cells: list[str]) -> list[int] | None:
    """The column's integers; None at its first other cell (a decimal point: a measured value)."""
    if not all(_INTEGER.fullmatch(cell.strip()) for cell in cells):
        return None
    return [int(cell) for cell in cells]


def column_chance(sequences: list[list[int]]) -> float | None:
    """The chance that a measurement (its values equally likely, in a random order) would come as evenly, and
    as laid out, as the groups' ``sequences`` do; None when they are no candidate (not the same values in every
    group, one value, too many, or one seen once)."""
    counts = [Counter(sequence) for sequence in sequences]
    values = set(counts[0])
    if not _candidate(values, counts):
        return None
    spread = max(max(c.values()) - min(c.values()) for c in counts)
    chance = math.prod(balance_chance(len(sequence), len(values), spread) for sequence in sequences)
    if all(_laid_out(sequence, c) for sequence, c in zip(sequences, counts, strict=True)):
        chance *= math.prod(_order_chance(c) for c in counts)
    return chance


def _candidate(values: set[int], counts: list[Counter[int]]) -> bool:
    """Few values, the same in every group, each at least twice."""
    return 2 <= len(values) <= MOST_VALUES and all(set(c) == values and min(c.values()) >= 2 for c in counts)


@lru_cache(maxsize=4096)
def balance_chance(n: int, k: int, spread: int) -> float:
    """P(most - fewest <= ``spread``) for the counts of ``n`` draws over ``k`` equally likely values (a
    multinomial: as independent Poisson counts of mean n/k, given their sum); 1 where chance alone spreads
    no more (``spread`` beyond twice a count's standard deviation)."""
    mean = n / k
    if spread >= 2 * math.sqrt(mean) + 1:
        return 1.0
    total = 0.0
    for low in range(max(0, -(-n // k) - spread), n // k + 1):  # k * low <= n <= k * (low + spread)
        total += _within(n, k, low, low + spread) - _within(n, k, low + 1, low + spread)
    return min(1.0, max(0.0, total))


def _within(n: int, k: int, low: int, high: int) -> float:
    """P(every count in [low, high]) for ``n`` draws over ``k`` equally likely values."""
    if high < low or k * low > n or k * high < n:
        return 0.0
    mean = n / k
    counts = np.arange(low, high + 1)
    pmf = np.exp(counts * math.log(mean) - mean - np.array([math.lgamma(c + 1) for c in range(low, high + 1)]))
    total = pmf
    for _ in range(k - 1):
        total = np.convolve(total, pmf)
    return float(total[n - k * low]) / math.exp(n * math.log(n) - n - math.lgamma(n + 1))


def _laid_out(sequence: list[int], counts: Counter[int]) -> bool:
    """In blocks of one value each, or each value in turn (a row left out now and then: a failed
    repetition)."""
    changes = sum(a != b for a, b in zip(sequence, sequence[1:], strict=False))
    return changes == len(counts) - 1 or _in_turn(sequence, counts)


def _in_turn(sequence: list[int], counts: Counter[int]) -> bool:
    """The values in one cycle, over and over, with at most the rows missing from a full sweep left out (the
    cycle: the order the values first come in, last come in, or by their mean place; one left out in the
    first round changes only the first)."""
    missing = len(counts) * max(counts.values()) - len(sequence)
    places: dict[int, list[int]] = {}
    for i, value in enumerate(sequence):
        places.setdefault(value, []).append(i)
    cycles = (
        list(places),
        list(dict.fromkeys(reversed(sequence)))[::-1],
        sorted(places, key=lambda v: sum(places[v]) / len(places[v])),
    )
    return any(_skipped(sequence, cycle) <= missing for cycle in cycles)


def _skipped(sequence: list[int], cycle: list[int]) -> int:
    """How many places of ``cycle``, repeated, ``sequence`` leaves out (those before its first value too)."""
    place = {value: i for i, value in enumerate(cycle)}
    at = skipped = 0
    for value in sequence:
        step = (place[value] - at) % len(cycle)
        skipped += step
        at = (at + step + 1) % len(cycle)
    return skipped


def _order_chance(counts: Counter[int]) -> float:
    """The chance that a random order of these counts is laid out: k! orders in blocks and at most
    k! * (1 + C(k m, missing)) in turn, among the n! / prod(c!) orders."""
    k, n, most = len(counts), sum(counts.values()), max(counts.values())
    log_orders = math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in counts.values())
    log_laid_out = math.lgamma(k + 1) + math.log(2 + math.comb(k * most, k * most - n))
    return min(1.0, math.exp(log_laid_out - log_orders))
