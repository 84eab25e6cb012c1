"""What a run report (:mod:`abstat.render.run_report`) reads of the store: the experiment's run groups, one
row per metric and unit, its variants and baseline, which rows the report compares, and the variants measured under
another machine record than the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from abstat.errors import UsageError
from abstat.render.run_notes import run_notes


def machine_differences(
    store: Any, experiment: str, variants: list[str], baseline: str, invocations: Sequence[int] | None = None
) -> dict[str, str]:
    """Variant -> warning text, for variants measured under another machine record than the baseline
    (only the records of ``invocations`` when given).  Linear in the invocations: each record is
    read once, and each field compared through its distinct values (not every pair of records)."""
    from abstat.box.machine import differing_fields_between

    records = store.machine_records_by_variant(experiment, invocations=invocations)
    base_records = records.get(baseline, [])
    warnings: dict[str, str] = {}
    for name in variants:
        if name == baseline:
            continue
        fields = differing_fields_between(base_records, records.get(name, []))
        if fields:
            warnings[name] = f"{baseline} and {name} were measured under different machine records: {', '.join(fields)}"
    return warnings


@dataclass
class Stored:
    """What one report reads of the store: the run groups by row, the variants, the baseline."""

    store: Any
    experiment: str
    invocations: Sequence[int] | None
    rows: dict[str, tuple[str, str | None, dict[str, list[list[float]]]]]  # name -> (metric, unit, runs)
    variants: list[str]
    baseline: str
    unit_notes: list[str]  # the metrics converted to one unit (Store.unit_groups)

    def groups(self) -> dict[str, dict[str, list[list[float]]]]:
        """Row name -> variant -> run groups (as ``Store.groups_by_metric``)."""
        return {name: runs for name, (_, _, runs) in self.rows.items()}

    def unit(self, name: str) -> str | None:
        return self.rows[name][1] if name in self.rows else self.store.unit(self.experiment, name)

    def notes(self) -> list[dict[str, Any]]:
        return [{"note": note, "runs": 0} for note in self.unit_notes] + run_notes(
            self.store, self.experiment, self.invocations
        )


def read_rows(store: Any, experiment: str, invocations: Sequence[int] | None, baseline: str | None) -> Stored | None:
    """The experiment's run groups, one row per (metric, unit): a metric whose unit changed between
    runs is one row in the finest when the units convert (ns and µs, said in a note), else one row per
    unit, named ``METRIC [UNIT]`` (no row mixes units); None without runs."""
    unit_notes: list[str] = []
    found = store.unit_groups(experiment, invocations=invocations, notes=unit_notes)  # (metric, unit) -> ...
    rows = _named_rows(found)
    variants = [v for v in store.variant_names(experiment) if any(v in runs for _, _, runs in rows.values())]
    if not variants:
        return None
    return Stored(store, experiment, invocations, rows, variants, _baseline(baseline, variants, experiment), unit_notes)


def _named_rows(found: dict[tuple[str, str | None], Any]) -> dict[str, tuple[str, str | None, Any]]:
    """Row name -> (metric, unit, runs): the metric's name, or ``METRIC [UNIT]`` where it has several units."""
    count: dict[str, int] = {}
    for metric, _ in found:
        count[metric] = count.get(metric, 0) + 1
    return {
        metric if count[metric] == 1 else f"{metric} [{unit or 'no unit'}]": (metric, unit, runs)
        for (metric, unit), runs in found.items()
    }


def _baseline(baseline: str | None, variants: list[str], experiment: str) -> str:
    """``--baseline`` (UsageError when it has no runs), by default the first variant."""
    if baseline is None:
        return variants[0]
    if baseline not in variants:
        raise UsageError(
            f"{{baseline}} {baseline!r}: experiment {experiment!r} has no successful runs of it "
            f"(variants: {', '.join(variants)})",
            fields=["baseline"],
        )
    return baseline


def row_names(stored: Stored, metrics: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """(the rows of the table, the ``--monitor`` rows): those of ``metrics`` when given (a metric
    with several units: each of its rows), else every stored metric's, built-in ones first."""
    from abstat.render import monitors
    from abstat.store.read import ordered_metrics

    by_metric: dict[str, list[str]] = {}
    for name, (metric, _, _) in stored.rows.items():
        by_metric.setdefault(metric, []).append(name)
    if metrics:
        return [name for m in metrics for name in by_metric.get(m, [m])], []
    names = [name for m in ordered_metrics(by_metric) for name in by_metric[m]]
    return monitors.split_monitors(names)


def compared_rows(stored: Stored, names: Sequence[str]) -> list[tuple[str, str | None, dict[str, Any], str]]:
    """(row name, unit, variant -> data, metric) of each row with the baseline and a candidate."""
    sections = []
    for name in names:
        metric, unit, by_variant = stored.rows.get(name, (name, None, {}))
        data = {v: runs[0] if len(runs) == 1 else runs for v in stored.variants if (runs := by_variant.get(v))}
        if stored.baseline in data and len(data) >= 2:
            sections.append((name, unit, data, metric))
    return sections
