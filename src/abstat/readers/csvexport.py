"""The CSV ``abstat export --format csv`` writes (one row per stored sample: ``experiment, variant, metric, value,
unit, run, iteration, index, invocation, ...``), read back as the store's sample sets: labels ``experiment``,
``variant``, ``metric``, ``host`` and the invocation's ``labels`` (``k=v k=v``), the unit from the ``unit``
column, run groups as the store makes them (:mod:`abstat.readers.run_units`), so that ``report`` of the export
gives the cells ``report --store`` gives: the sets in the store's order, variants by ``variant_order`` (their
place as declared; the rows come in the order the runs ran, shuffled round by round, so the first variant met
is no baseline).  The bookkeeping columns (run, iteration, index, invocation, boot_id, started_at, command,
notes, variant_order) are no metrics."""

from __future__ import annotations

import re
from collections.abc import Callable

from abstat.errors import InputError
from abstat.readers.run_units import replicates
from abstat.readers.sampleset import SampleSet
from abstat.readers.values import is_number, shown

# The columns of abstat export's CSV that tell it (render/rows_export.py COLUMNS begins with these)
EXPORT_COLUMNS = ("experiment", "variant", "metric", "value", "unit", "run", "iteration", "index", "invocation")
_LABEL_ITEM = re.compile(r"([^\s=]+)=(.*?)(?= [^\s=]+=|\Z)")  # k=v k=v (a value may hold spaces)


def is_export(header: list[str]) -> bool:
    """Whether a CSV header is abstat export's."""
    return set(EXPORT_COLUMNS) <= set(header)


class _Entry:
    """One set's values as they come: per invocation, the values and each run's count."""

    def __init__(self, labels: dict[str, str], unit: str | None) -> None:
        self.labels, self.unit = labels, unit
        self.groups: dict[int, list[float]] = {}
        self.sizes: dict[int, list[int]] = {}
        self.last_run: str | None = None


def read_export(path: str, header: list[str], body: list[tuple[int, list[str]]]) -> list[SampleSet]:
    """The sets of abstat export's rows ``body`` (line number, fields)."""
    at = {name: i for i, name in enumerate(header)}
    entries: dict[tuple[tuple[str, str], ...], _Entry] = {}
    places: dict[tuple[str, str], int] = {}
    for lineno, row in body:
        labels, unit = _labels(row, at), row[at["unit"]].strip() or None
        place = row[at["variant_order"]].strip() if "variant_order" in at else ""
        if place.isdigit():
            places.setdefault((labels["experiment"], labels["variant"]), int(place))
        value, run, invocation = row[at["value"]].strip(), row[at["run"]].strip(), row[at["invocation"]].strip()
        if not is_number(value):
            raise InputError(f"column 'value': not a finite number: {shown(value)}", path=path, line=lineno)
        if not invocation.isdigit():
            raise InputError(
                f"column 'invocation': not an invocation number: {shown(invocation)}", path=path, line=lineno
            )
        key = (*sorted(labels.items()), ("", unit or ""))
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = _Entry(labels, unit)
        _add(entry, int(invocation), run, float(value))
    found = list(entries.values())
    _units_apart(found)
    sets = [_set(path, entry) for entry in sorted(found, key=_order(found, places))]
    if "variant_order" not in at and len({(s.labels["experiment"], s.labels["variant"]) for s in sets}) > 1:
        note = (
            f"{path}: no column 'variant_order' (an older abstat export): variants in the order their rows come, "
            "which is the order the runs ran; name the baseline with --baseline"
        )
        for sample_set in sets:
            sample_set.notes.append(note)
    return sets


def _order(entries: list[_Entry], places: dict[tuple[str, str], int]) -> Callable[[_Entry], tuple[int, int, int, str]]:
    """The store's order of sets: by experiment (as first seen: the export writes them in the store's order),
    variant (by its place as declared; as first seen without one), then metric."""
    experiments: dict[str, int] = {}
    variants: dict[tuple[str, str], int] = {}
    for entry in entries:
        experiments.setdefault(entry.labels["experiment"], len(experiments))
        variants.setdefault((entry.labels["experiment"], entry.labels["variant"]), len(variants))

    def key(entry: _Entry) -> tuple[int, int, int, str]:
        variant = entry.labels["experiment"], entry.labels["variant"]
        place = places.get(variant, len(variants) + 1)  # placed ones first, in their order
        return experiments[variant[0]], place, variants[variant], entry.labels["metric"]

    return key


def _labels(row: list[str], at: dict[str, int]) -> dict[str, str]:
    """A row's set labels: the invocation's ``labels``, then experiment, variant, metric and host."""
    labels = dict(_LABEL_ITEM.findall(row[at["labels"]].strip())) if "labels" in at else {}
    labels.update({key: row[at[key]].strip() for key in ("experiment", "variant", "metric")})
    host = row[at["host"]].strip() if "host" in at else ""
    if host:
        labels.setdefault("host", host)  # a --label host=NAME names the machine (as the store reads it)
    return labels


def _add(entry: _Entry, invocation: int, run: str, value: float) -> None:
    values = entry.groups.setdefault(invocation, [])
    sizes = entry.sizes.setdefault(invocation, [])
    if run == entry.last_run and sizes:
        sizes[-1] += 1  # the same run's next sample
    else:
        sizes.append(1)
    entry.last_run = run
    values.append(value)


def _units_apart(entries: list[_Entry]) -> None:
    """Sets of one labels in several units told apart by a ``unit`` label (as the store does when the units
    do not convert)."""
    counts: dict[tuple[tuple[str, str], ...], int] = {}
    for entry in entries:
        key = tuple(sorted(entry.labels.items()))
        counts[key] = counts.get(key, 0) + 1
    for entry in entries:
        if counts[tuple(sorted(entry.labels.items()))] > 1:
            entry.labels["unit"] = entry.unit or ""


def _set(path: str, entry: _Entry) -> SampleSet:
    runs, invocations = replicates(entry.groups, entry.sizes, list(entry.groups))
    return SampleSet(labels=entry.labels, runs=runs, source=path, unit=entry.unit, invocations=invocations)
