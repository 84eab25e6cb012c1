"""The arrays behind :meth:`abstat.store.read_columns.ColumnReader.light_sets`: a store's samples
grouped with numpy, and the sets made from the groups as they are handed out.  Imported only when a
store is read as columns: ``abstat.store`` itself imports the standard library only (box-side code
and ``abstat list`` import it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from abstat.store.read_sets import NO_RECORD, _canon, _matches
from abstat.store.records import SampleSet

CHUNK = 1 << 16  # rows turned into arrays at a time


@dataclass
class Columns:
    """The groups (one per variant, metric and invocation) of a read, as arrays in group order
    (invocation, variant, metric name): ``ends`` where each group's values end in ``values``."""

    values: np.ndarray
    ends: np.ndarray
    invocation: np.ndarray
    variant: np.ndarray
    pair: np.ndarray  # index in ``pairs``
    pairs: list[tuple[str, Any]]  # (metric, unit), one unit a metric


def _typed(column: tuple[Any, ...], *kinds: type) -> bool:
    return set(map(type, column)) <= set(kinds)


def _arrays(rows: Iterable[tuple[Any, ...]]) -> tuple[list[np.ndarray], list[tuple[str, Any]]] | None:
    """The rows as arrays (variant, invocation, value, run, (metric, unit) pair) and the pairs; None
    when some row holds what is not a number or a damaged key."""
    parts: list[list[np.ndarray]] = [[], [], [], [], []]
    codes: dict[tuple[str, Any], int] = {}
    iterator = iter(rows)
    while chunk := list(islice(iterator, CHUNK)):
        variant, metric, invocation, value, unit, run = zip(*chunk, strict=True)
        keys = _typed(variant, int) and _typed(invocation, int) and _typed(run, int) and _typed(metric, str)
        if not (keys and _typed(value, float) and _typed(unit, str, type(None))):
            return None
        for item in dict.fromkeys(zip(metric, unit, strict=True)):  # the chunk's pairs, in the order first seen
            codes.setdefault(item, len(codes))
        pair = list(map(codes.__getitem__, zip(metric, unit, strict=True)))
        for into, column in zip(parts, (variant, invocation, value, run, pair), strict=True):
            into.append(np.asarray(column, dtype=float if column is value else np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return [np.concatenate(part) if part else empty for part in parts], list(codes)


def metric_ranks(pairs: list[tuple[str, Any]]) -> np.ndarray:
    """Each pair's place in the order of metric names."""
    return np.argsort(np.argsort([metric for metric, _ in pairs], kind="stable"), kind="stable").astype(np.int64)


def grouped(rows: Iterable[tuple[Any, ...]]) -> Columns | None:
    """Rows ``(variant id, metric, invocation id, value, unit, run id)`` in a run order of the store's
    as :class:`Columns`; None when the columns do not take them (see the module docstring)."""
    read = _arrays(rows)
    if read is None:
        return None
    (variant, invocation, value, run, pair), pairs = read
    if len({metric for metric, _ in pairs}) < len(pairs):  # a metric in several units: the row path
        return None
    if np.any((run[1:] == run[:-1]) & (pair[1:] == pair[:-1])):  # a run of several samples
        return None
    order = np.lexsort((metric_ranks(pairs)[pair] if pairs else pair, variant, invocation))
    invocation, variant, pair = invocation[order], variant[order], pair[order]
    change = (np.diff(invocation) != 0) | (np.diff(variant) != 0) | (np.diff(pair) != 0)
    starts = np.concatenate(([0], np.flatnonzero(change) + 1)).astype(np.int64) if invocation.size else invocation
    ends = np.append(starts[1:], invocation.size).astype(np.int64)
    return Columns(value[order], ends, invocation[starts], variant[starts], pair[starts], pairs)


def _known(columns: Columns, names: Mapping[int, Any], hosts: Mapping[int, Any]) -> bool:
    """Every group's variant and invocation was in the tables when they were read (else rows were
    written during the read: the row path reads the tables again)."""
    return set(np.unique(columns.variant).tolist()) <= set(names) and set(
        np.unique(columns.invocation).tolist()
    ) <= set(hosts)


def _set_index(columns: Columns, hosts: Mapping[int, Any], labels: Mapping[int, Mapping[str, str]]) -> np.ndarray:
    """The set each group goes to (as :meth:`SetReader._fill_sets` keys them: the invocation's labels
    but those of the set, the variant, the metric and unit, the host), numbered in no order."""
    interned: dict[tuple, tuple] = {}
    ids: dict[Any, int] = {}
    invocations = np.unique(columns.invocation)
    canon_id = np.empty(invocations.size, dtype=np.int64)
    host_id = np.empty(invocations.size, dtype=np.int64)
    for index, invocation in enumerate(invocations.tolist()):
        own = labels.get(invocation, {})
        canon_id[index] = ids.setdefault(_canon(own, interned), len(ids))
        host_id[index] = ids.setdefault(("host", own.get("host", hosts[invocation])), len(ids))
    where = np.searchsorted(invocations, columns.invocation)
    keys = np.stack((canon_id[where], host_id[where], columns.variant, columns.pair), axis=1)
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)


def set_order(
    columns: Columns,
    names: Mapping[int, tuple[int, str, str]],
    hosts: Mapping[int, Any],
    labels: Mapping[int, Mapping[str, str]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sets of the groups: ``order`` (the sets in the row path's order: experiment, variant, metric,
    first invocation), ``first`` (each set's first group: its first invocation's), ``by_set`` (the
    groups, each set's together in invocation order) and ``bounds`` (where each set's are in it)."""
    belongs = _set_index(columns, hosts, labels)
    _, first = np.unique(belongs, return_index=True)
    variant = columns.variant[first]
    experiment = np.asarray([names[v][0] for v in variant.tolist()], dtype=np.int64)
    metric_rank = metric_ranks(columns.pairs)[columns.pair[first]]
    order = np.lexsort((columns.invocation[first], metric_rank, variant, experiment))
    by_set = np.argsort(belongs, kind="stable")
    bounds = np.searchsorted(belongs[by_set], np.arange(first.size + 1))
    return order, first, by_set, bounds


def _sets(
    columns: Columns,
    names: Mapping[int, tuple[int, str, str]],
    hosts: Mapping[int, Any],
    labels: Mapping[int, Mapping[str, str]],
    accepted: Mapping[str, set[str]],
) -> Iterator[SampleSet]:
    """The sets, in the row path's order (experiment, variant, metric, first invocation), each made
    as it is handed out; those whose labels ``accepted`` refuses left out."""
    if not columns.ends.size:
        return
    order, first, by_set, bounds = set_order(columns, names, hosts, labels)
    heads, uses = np.unique(columns.invocation[first], return_counts=True)
    left = dict(zip(heads.tolist(), uses.tolist(), strict=True))  # sets yet to make of each invocation's labels
    own = {invocation: labels[invocation] for invocation in left if invocation in labels}
    del labels  # (the caller's copy: the invocations' labels go as their last set is made)
    for invocations, pair, variant_id, runs in _groups(columns, order, by_set, bounds):
        invocation = invocations[0]
        metric, unit = columns.pairs[pair]
        _, experiment_name, variant_name = names[variant_id]
        left[invocation] -= 1
        base = own.get(invocation, NO_LABELS) if left[invocation] else own.pop(invocation, NO_LABELS)
        full = {**base, "experiment": experiment_name, "variant": variant_name, "metric": metric}
        host = hosts[invocation]
        if host is not None and "host" not in full:  # a --label host=NAME names the machine
            full["host"] = host
        if accepted and not _matches(
            full if "unit" not in accepted or "unit" in full else {**full, "unit": unit or ""}, accepted
        ):
            continue
        yield SampleSet(
            labels=full,
            runs=runs,
            machine=NO_RECORD,
            unit=unit,
            invocations=invocations,
            notes=[],
        )


NO_LABELS: Mapping[str, str] = {}  # (an invocation without labels of its own: never changed)
SETS_AT_ONCE = 4096  # sets whose groups' indexes are made Python lists at a time (bounded memory)


def _groups(
    columns: Columns, order: np.ndarray, by_set: np.ndarray, bounds: np.ndarray
) -> Iterator[tuple[list[int], int, int, list[list[float]]]]:
    """Each set in ``order``: its groups' invocations, its (metric, unit) pair and variant (its first
    group's), and its runs (each group's values).  The indexes are read as Python lists a block of
    sets at a time: a list item is read faster than a numpy scalar (10^5 revisions: 5 x 10^5 sets)."""
    starts = np.concatenate(([0], columns.ends[:-1]))
    values = columns.values
    for block in range(0, order.size, SETS_AT_ONCE):
        chosen = order[block : block + SETS_AT_ONCE]
        low, sizes = bounds[chosen], bounds[chosen + 1] - bounds[chosen]
        counts = sizes.tolist()
        groups = by_set[_ranges(low, sizes)]
        invocation = columns.invocation[groups].tolist()
        pair, variant = columns.pair[groups].tolist(), columns.variant[groups].tolist()
        lengths = columns.ends[groups] - starts[groups]  # the block's values as one Python list, group by group
        numbers = values[_ranges(starts[groups], lengths)].tolist()
        edges = np.concatenate(([0], np.cumsum(lengths))).tolist()
        at = 0
        for count in counts:
            yield (
                invocation[at : at + count],
                pair[at],
                variant[at],
                [numbers[edges[g] : edges[g + 1]] for g in range(at, at + count)],
            )
            at += count


def _ranges(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes ``first[i], ..., first[i] + lengths[i] - 1`` of every ``i``, in order."""
    return np.repeat(first - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
