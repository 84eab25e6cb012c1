"""The first two steps of a report (:func:`abstat.report.matrix.build_report`): where each sample set goes.

1. :func:`lay_out`: the sets chosen (``--where``, ``--metric``), the columns (the ``by`` label's values,
   the baseline first), the row keys (every other label that varies, or ``--rows``), the labels that
   describe a column and those common to the whole table;
2. :func:`fill_grid`: each set in its cell (row id -> column -> set), sets with the same labels pooled
   as separate runs.

The cells are then compared (:mod:`abstat.report.analysis`), adjusted as one family and put in the table
(:mod:`abstat.report.table`).
"""

from __future__ import annotations

import math

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat

from abstat.errors import UsageError
from abstat.fastdataclass import dataclass
from abstat.readers.sampleset import SampleSet, label_keys
from abstat.report.table import Row

# Column values taken as the baseline when --baseline is not given (else the
# first value seen).
BASELINE_NAMES = (
    "before",
    "baseline",
    "base",
    "old",
    "orig",
    "original",
    "reference",
    "ref",
    "unpatched",
    "vanilla",
    "master",
    "main",
)

Grid = dict[tuple[str, ...], dict[str, SampleSet]]


@dataclass
class Layout:
    """Where the chosen sets go: columns (baseline first), row keys, and the labels that are not rows."""

    by: str
    baseline: str
    chosen: list[SampleSet]
    values_of: dict[str, list[str]]  # every label key -> its values, in the order first seen
    columns: list[str]
    row_keys: list[str]
    column_labels: dict[str, dict[str, str]]
    common: dict[str, str]


def filter_sets(
    sets: Sequence[SampleSet], where: dict[str, set[str]] | None, metrics: Sequence[str] | None
) -> list[SampleSet]:
    """The sets whose labels satisfy every ``where`` key and ``metrics``."""
    chosen = []
    for sample_set in sets:
        labels = sample_set.labels
        if where and any(labels.get(k) not in v for k, v in where.items()):
            continue
        if metrics and labels.get("metric") not in metrics:
            continue
        chosen.append(sample_set)
    return chosen


def lay_out(
    sets: Sequence[SampleSet],
    *,
    by: str,
    baseline: str | None,
    rows: Sequence[str] | None,
    metrics: Sequence[str] | None,
    where: dict[str, set[str]] | None,
) -> Layout:
    """The layout of ``sets`` (the arguments of :func:`abstat.report.matrix.build_report`); a UsageError
    naming the flag when they cannot be laid out."""
    chosen = _chosen(list(sets), by, metrics, where)
    keys = label_keys(chosen)
    every = [s.labels for s in chosen]
    get = dict.get if set(map(type, every)) <= {dict} else _get  # (a caller's sets may hold other mappings)
    values_of = {k: _ordered(map(get, every, repeat(k), repeat(""))) for k in keys}  # "" when it has none
    del every
    columns = _columns(values_of[by], by, baseline)
    varying = [k for k in keys if k != by and len(values_of[k]) > 1]
    # A label that takes one value per column (``note: before`` in a Go file
    # named old.txt) describes the column, not a row.
    column_keys = [k for k in varying if _follows_column(chosen, by, k) and k not in (rows or [])]
    row_keys = (
        _default_rows(chosen, by, varying, column_keys)
        if rows is None
        else _asked_rows(rows, by, keys, varying, column_keys, values_of)
    )
    placed = {by, *varying, *row_keys}
    common = {k: values_of[k][0] for k in keys if k not in placed and values_of[k][0] != ""}
    return Layout(
        by=by,
        baseline=columns[0],
        chosen=chosen,
        values_of=values_of,
        columns=columns,
        row_keys=row_keys,
        column_labels=_column_labels(chosen, by, columns, column_keys),
        common=common,
    )


def _column_labels(
    chosen: list[SampleSet], by: str, columns: list[str], column_keys: list[str]
) -> dict[str, dict[str, str]]:
    """The labels that describe each column (one value per column), for the columns that have some."""
    labels = {
        c: {k: next(s.labels.get(k, "") for s in chosen if s.labels[by] == c) for k in column_keys} for c in columns
    }
    return {c: v for c, v in labels.items() if v}


def fill_grid(layout: Layout) -> Grid:
    """Each chosen set in its cell; two sets with the same labels pooled as separate runs, in a copy
    (the inputs are never changed).  A set alone in its cell is the input itself, not a copy: a
    history report has 10^5 revisions x metrics cells, and nothing changes a cell's set."""
    grid: Grid = {}
    pooled: set[int] = set()  # the copies made to pool into
    keys, blanks, by = layout.row_keys, [""] * len(layout.row_keys), layout.by
    for sample_set in layout.chosen:
        row_id = tuple(map(sample_set.labels.get, keys, blanks))  # each key's value, "" without it
        column = sample_set.labels[by]
        slot = grid.setdefault(row_id, {})
        if column in slot:
            first = slot[column]
            if id(first) not in pooled:
                first = _copy(first)
                pooled.add(id(first))
            slot[column] = _merge(first, sample_set)
        else:
            slot[column] = sample_set
    return grid


def _copy(sample_set: SampleSet) -> SampleSet:
    """A copy of ``sample_set`` that pooling may change (the machine record shared: nothing changes it)."""
    return SampleSet(
        labels=dict(sample_set.labels),
        runs=[list(r) for r in sample_set.runs],
        source=sample_set.source,
        unit=sample_set.unit,
        machine=sample_set.machine,
        extra=dict(sample_set.extra),
        notes=list(sample_set.notes),
        summary=sample_set.summary,
    )


def row_order(layout: Layout, metrics: Sequence[str] | None) -> Callable[[Row], tuple[int, ...]]:
    """Rows grouped by the row keys in their order (``--rows base,metric``: by base, then metric),
    each key's values in the order asked (``--metric wall,user,sys``), in numeric order when every value is a
    number (a sweep's ``threads`` 1, 2, 4, 8 whatever order its rows came in), else first seen in the inputs."""
    row_keys = layout.row_keys
    rank = {k: {v: i for i, v in enumerate(_numeric_order(layout.values_of.get(k, [])))} for k in row_keys}
    if metrics and "metric" in rank:
        rank["metric"] = {m: i for i, m in enumerate(dict.fromkeys(metrics))}

    ranks = [rank[k] for k in row_keys]
    unknown, blanks = [len(r) for r in ranks], [""] * len(row_keys)

    def key(row: Row) -> tuple[int, ...]:  # each key's rank of the row's value (after the known ones if unknown)
        return tuple(map(dict.get, ranks, map(row.labels.get, row_keys, blanks), unknown))

    return key


def row_text(keys: Sequence[str], values: Sequence[str]) -> str:
    """A row's labels in words (``host=milan mode=pv``), the table's when it has none."""
    return " ".join(f"{k}={v}" for k, v in zip(keys, values, strict=False)) or "the table"


def _chosen(
    sets: list[SampleSet], by: str, metrics: Sequence[str] | None, where: dict[str, set[str]] | None
) -> list[SampleSet]:
    if metrics and not any("metric" in s.labels for s in sets):
        raise UsageError("{metrics}: the inputs carry no 'metric' label", fields=["metrics"])
    chosen = filter_sets(sets, where, metrics)
    if not chosen:
        raise UsageError("no sample set matches {where}/{metrics}", fields=["where", "metrics"])
    for sample_set in chosen:
        if by not in sample_set.labels:
            what = sample_set.source or _labels_text(sample_set.labels)
            raise UsageError(
                f"{{by}} {by}: {what} has no label {by!r} (name it with {{pattern}} or {{label}})",
                fields=["by", "pattern", "label"],
            )
    return chosen


def _columns(values: list[str], by: str, baseline: str | None) -> list[str]:
    """The columns, the baseline first: ``--baseline``, else a conventional name, else the first seen."""
    if baseline is None:
        conventional = [c for c in values if c.lower() in BASELINE_NAMES]
        baseline = conventional[0] if conventional else values[0]
    elif baseline not in values:
        raise UsageError(
            f"{{baseline}} {baseline!r}: no sample set has {by}={baseline} (values: {', '.join(values)})",
            fields=["baseline"],
        )
    return [baseline] + [c for c in values if c != baseline]


def _asked_rows(
    rows: Sequence[str],
    by: str,
    keys: list[str],
    varying: list[str],
    column_keys: list[str],
    values_of: dict[str, list[str]],
) -> list[str]:
    """``--rows``, with ``metric`` added when several metrics vary; every label that varies placed."""
    row_keys = list(rows)
    if by != "metric" and "metric" in varying and "metric" not in row_keys and "metric" not in column_keys:
        row_keys.append("metric")  # several metrics: one row each (the metric column says so)
    for key in row_keys:
        if key not in keys:
            raise UsageError(
                f"{{rows}}: no sample set has a label {key!r} (labels: {', '.join(keys)})", fields=["rows"]
            )
        if key == by:
            raise UsageError(f"{{rows}} {key}: it is already the {{by}} key", fields=["rows", "by"])
    stray = [k for k in varying if k not in row_keys and k not in column_keys]
    if stray:
        key = stray[0]
        raise UsageError(
            f"label {key!r} takes several values "
            f"({', '.join(values_of[key][:6])}) but is not in {{rows}}; "
            f"add it to {{rows}} or choose one with {{where}} {key}=...",
            fields=["rows", "where"],
        )
    return row_keys


def _default_rows(chosen: list[SampleSet], by: str, varying: list[str], column_keys: list[str]) -> list[str]:
    """Every label that varies and does not describe a column, ``metric`` last."""
    row_keys = [k for k in varying if k not in column_keys]
    row_keys = [k for k in row_keys if k != "metric"] + (["metric"] if "metric" in row_keys else [])
    if "command" in row_keys and _derived(chosen, "command", [by] + [k for k in row_keys if k != "command"]):
        row_keys.remove("command")  # a hyperfine grid's command is made of its parameters, --by among them
    return row_keys


def _derived(sets: Sequence[SampleSet], key: str, others: Sequence[str]) -> bool:
    """Whether ``key``'s value is fixed by the ``others`` (with ``by`` among them) but not by
    the rows' labels alone: it then splits every row by column, and says nothing the others do not."""

    def function_of(keys: Sequence[str]) -> bool:
        seen: dict[tuple[str, ...], str] = {}
        return all(
            seen.setdefault(tuple(s.labels.get(k, "") for k in keys), s.labels.get(key, "")) == s.labels.get(key, "")
            for s in sets
        )

    return function_of(others) and not function_of(others[1:])


def _follows_column(sets: Sequence[SampleSet], by: str, key: str) -> bool:
    seen: dict[str, str] = {}
    for sample_set in sets:
        value = sample_set.labels.get(key, "")
        if seen.setdefault(sample_set.labels[by], value) != value:
            return False
    return True


def _get(labels: Mapping[str, str], key: str, default: str) -> str:
    return labels.get(key, default)


def _numeric_order(values: list[str]) -> list[str]:
    """``values`` sorted as numbers when each is a finite number, else as they are."""
    numbers = []
    for value in values:
        try:
            number = float(value)
        except ValueError:
            return values
        if not math.isfinite(number):
            return values
        numbers.append(number)
    return [value for _, value in sorted(zip(numbers, values, strict=True), key=lambda pair: pair[0])]


def _ordered(values: Iterable[str]) -> list[str]:
    """The distinct values, in the order first seen."""
    return list(dict.fromkeys(values))


def _labels_text(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


def _merge(first: SampleSet, second: SampleSet) -> SampleSet:
    """Two sets with the same labels: one set with both sets' runs."""
    if first.summary is not None or second.summary is not None:
        raise UsageError(
            f"{_labels_text(first.labels)}: given twice ({first.source or 'store'} and "
            f"{second.source or 'store'}); summary statistics cannot be pooled with "
            "other data; add a label to tell the sets apart"
        )
    note = (
        f"{_labels_text(first.labels)}: {first.source or 'store'} and "
        f"{second.source or 'store'} pooled as separate runs"
    )
    if first.unit != second.unit:
        raise UsageError(
            f"{_labels_text(first.labels)}: units differ ({first.unit} vs "
            f"{second.unit}); add a label to tell the sets apart"
        )
    first.runs.extend(list(r) for r in second.runs)
    first.notes.extend(second.notes)
    first.notes.append(note)
    return first
