"""The report's matrix: rows x columns of sample sets, compared to a baseline.

``build_report(sets, by="variant", baseline=None, rows=None, ...)`` puts each
sample set in a cell: its column is its value of the ``by`` label, its row the
combination of the other labels that vary.  Every cell with a baseline cell in
its row is compared to it with :func:`abstat.compare`; the p-values of all
comparisons in the table are adjusted together (Holm by default) and a cell is
marked significant when its adjusted p-value is below 1 - confidence.  A
geometric-mean row summarises each column (per metric).  The table it
returns (:class:`Report` and its cells) is :mod:`abstat.report.table`.
"""
from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist
from typing import Any, Sequence

from abstat.errors import AbstatError, UsageError
from abstat.report.adjust import METHODS, adjust_p_values, follow_adjusted
from abstat.report.notes import Footnotes
from abstat.report.sampleset import SampleSet, label_keys
from abstat.report.table import Cell, Report, Row, Summary
from abstat.stats.warnings import StatWarning

__all__ = ["BASELINE_NAMES", "Cell", "Report", "Row", "Summary", "build_report", "filter_sets"]


# Column values taken as the baseline when --baseline is not given (else the
# first value seen).
BASELINE_NAMES = ("before", "baseline", "base", "old", "orig", "original", "reference",
                  "ref", "unpatched", "vanilla", "master", "main")


def _higher_is_better(sample_set: SampleSet, chosen: bool | Sequence[str]) -> bool:
    from abstat.report.inputs import higher_is_better

    metric = sample_set.labels.get("metric")
    return higher_is_better(metric, sample_set.unit or metric, chosen)


def filter_sets(sets: Sequence[SampleSet], where: dict[str, set[str]] | None,
                metrics: Sequence[str] | None) -> list[SampleSet]:
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


def build_report(sets: Sequence[SampleSet], *, by: str = "variant", baseline: str | None = None,
                 rows: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                 where: dict[str, set[str]] | None = None, adjust: str = "holm",
                 confidence: float = 0.95, center: str = "auto",
                 higher_is_better: bool | Sequence[str] = False, seed: int = 0,
                 threshold: float | None = None, outliers: str = "none") -> Report:
    """Arrange ``sets`` in the matrix and compare each cell to its baseline
    (``threshold``, ``outliers``: as :func:`abstat.compare` takes them)."""
    if adjust not in METHODS:
        raise UsageError(f"--adjust {adjust!r}: choose from {', '.join(METHODS)}")
    if not 0 < confidence < 1:
        raise UsageError(f"confidence {confidence!r} must be between 0 and 1")
    if center not in ("auto", "median", "mean"):
        raise UsageError(f"center {center!r}: choose auto, median or mean")
    all_sets = list(sets)
    if metrics and not any("metric" in s.labels for s in all_sets):
        raise UsageError("--metric: the inputs carry no 'metric' label")
    chosen = filter_sets(all_sets, where, metrics)
    if not chosen:
        raise UsageError("no sample set matches --where/--metric")
    for sample_set in chosen:
        if by not in sample_set.labels:
            what = sample_set.source or _labels_text(sample_set.labels)
            raise UsageError(f"--by {by}: {what} has no label {by!r} "
                             "(name it with --pattern or --label)")
    keys = label_keys(chosen)
    values_of = {k: _ordered(s.labels.get(k, "") for s in chosen) for k in keys}
    columns = values_of[by]
    if baseline is None:
        conventional = [c for c in columns if c.lower() in BASELINE_NAMES]
        baseline = conventional[0] if conventional else columns[0]
    elif baseline not in columns:
        raise UsageError(f"--baseline {baseline!r}: no sample set has {by}={baseline} "
                         f"(values: {', '.join(columns)})")
    columns = [baseline] + [c for c in columns if c != baseline]
    varying = [k for k in keys if k != by and len(values_of[k]) > 1]
    # A label that takes one value per column (``note: before`` in a Go file
    # named old.txt) describes the column, not a row.
    column_keys = [k for k in varying if _follows_column(chosen, by, k) and k not in (rows or [])]
    if rows is not None:
        row_keys = list(rows)
        if by != "metric" and "metric" in varying and "metric" not in row_keys and "metric" not in column_keys:
            row_keys.append("metric")  # several metrics: one row each (the metric column says so)
        for key in row_keys:
            if key not in keys:
                raise UsageError(f"--rows: no sample set has a label {key!r} "
                                 f"(labels: {', '.join(keys)})")
            if key == by:
                raise UsageError(f"--rows {key}: it is already the --by key")
        stray = [k for k in varying if k not in row_keys and k not in column_keys]
        if stray:
            key = stray[0]
            raise UsageError(f"label {key!r} takes several values "
                             f"({', '.join(values_of[key][:6])}) but is not in --rows; "
                             f"add it to --rows or choose one with --where {key}=...")
    else:
        row_keys = [k for k in varying if k not in column_keys]
        row_keys = [k for k in row_keys if k != "metric"] + (["metric"] if "metric" in row_keys else [])
        if "command" in row_keys and _derived(chosen, "command", [by] + [k for k in row_keys if k != "command"]):
            row_keys.remove("command")  # a hyperfine grid's command is made of its parameters, --by among them
    column_labels = {c: {k: next(s.labels.get(k, "") for s in chosen if s.labels[by] == c)
                         for k in column_keys} for c in columns}
    common = {k: values_of[k][0] for k in keys
              if k != by and k not in varying and k not in row_keys and values_of[k][0] != ""}

    notes = Footnotes()
    grid: dict[tuple[str, ...], dict[str, SampleSet]] = {}
    for sample_set in chosen:
        row_id = tuple(sample_set.labels.get(k, "") for k in row_keys)
        column = sample_set.labels[by]
        slot = grid.setdefault(row_id, {})
        if column in slot:
            slot[column] = _merge(slot[column], sample_set)
        else:
            slot[column] = SampleSet(labels=dict(sample_set.labels),
                                     runs=[list(r) for r in sample_set.runs],
                                     source=sample_set.source, unit=sample_set.unit,
                                     machine=dict(sample_set.machine),
                                     extra=dict(sample_set.extra),
                                     notes=list(sample_set.notes),
                                     summary=sample_set.summary)

    from abstat.comparison import compare
    from abstat.report.exact import exact_comparison, is_exact

    per_source: dict[str | None, int] = {}
    for slot in grid.values():
        for sample_set in slot.values():
            per_source[sample_set.source] = per_source.get(sample_set.source, 0) + 1

    report_rows: list[Row] = []
    for row_id, slot in grid.items():
        cells: dict[str, Cell] = {}
        for column in columns:
            if column not in slot:
                continue
            sample_set = slot[column]
            summary = sample_set.summary
            cell = Cell(row=row_id, column=column, sample_set=sample_set, center=summary.mean if summary else 0.0,
                        n=sample_set.n, shared_source=per_source.get(sample_set.source, 0) > 1,
                        report_center=center)
            if summary is None:
                cell.center, cell.shown_kind, cell.n, cell.dropped = _center(sample_set.runs, center, outliers)
            for note in sample_set.notes:
                cell.notes.append(notes.add(note))
                cell.messages.append({"code": "input", "message": note, "variant": cell.name})
            if summary is not None:
                cell.notes.append(notes.add_warning(StatWarning("summary-only", "summary statistics only"),
                                                    cell.place))
                cell.messages.append({"code": "summary-only", "variant": cell.name, "message":
                                      f"summary statistics only (n={summary.n}, mean {summary.mean!r}, "
                                      f"stddev {summary.stddev!r})"})
            cells[column] = cell
        base = cells.get(baseline)
        for column, cell in cells.items():
            if column == baseline:
                continue
            if base is None:
                cell.notes.append(notes.add(f"no baseline ({by}={baseline}) to compare with",
                                            _row_text(row_keys, row_id)))
                continue
            try:
                if is_exact(base.sample_set, cell.sample_set):  # Go's "Unit ... assume=exact"
                    cell.comparison = exact_comparison(
                        base.sample_set, cell.sample_set, names=(base.name, cell.name), confidence=confidence,
                        higher_is_better=_higher_is_better(cell.sample_set, higher_is_better), seed=seed)
                else:
                    cell.comparison = compare(
                        base.sample_set.comparison_data(), cell.sample_set.comparison_data(),
                        confidence=confidence, center=center, threshold=threshold, outliers=outliers,
                        higher_is_better=_higher_is_better(cell.sample_set, higher_is_better),
                        seed=seed, names=(base.name, cell.name))
                    _agree(base, cell)
            except AbstatError as err:
                cell.notes.append(notes.add(f"not compared: {err}", cell.place))
                cell.messages.append({"code": "not-compared", "message": str(err), "variant": None})
                continue
            for warning in cell.comparison.warnings:
                # one footnote per kind of warning, listing the cells (the side
                # a warning about one variant concerns, else the row)
                side = base if warning.variant is not None and warning.variant == base.name else cell
                cell.notes.append(notes.add_warning(warning, side.place))
                cell.messages.append(warning.to_dict())
        report_rows.append(Row(labels=dict(zip(row_keys, row_id)), cells=cells,
                               metric=slot[next(iter(slot))].labels.get("metric")))

    report_rows.sort(key=_row_order(row_keys, values_of, metrics))
    compared = [c for r in report_rows for c in r.cells.values() if c.comparison is not None]
    with_p = [c for c in compared if c.comparison.p_value is not None]
    adjusted = adjust_p_values([float(c.comparison.p_value) for c in with_p], adjust)
    alpha = 1 - confidence
    for cell, p_adj in zip(with_p, adjusted):
        cell.p_adjusted = p_adj
        cell.significant = p_adj < alpha
        cell.comparison = dataclasses.replace(follow_adjusted(cell.comparison, cell.significant),
                                              p_adjusted=p_adj, adjustment=adjust)
    for cell in compared:
        if cell.comparison.p_value is None:
            cell.significant = bool(cell.comparison.significant)
            cell.notes.append(notes.add(
                f"method {cell.comparison.method} gives no p-value", cell.place,
                "its mark is not adjusted for multiple comparisons"))
    for cell in (c for r in report_rows for c in r.cells.values()):
        cell.notes = sorted(set(cell.notes))

    summaries = _summaries(report_rows, columns[1:], confidence)
    machines: dict[str, dict[str, Any]] = {}
    for sample_set in chosen:
        if sample_set.machine:
            host = sample_set.labels.get("host") or str(sample_set.machine.get("hostname", "?"))
            machines.setdefault(host, sample_set.machine)
    return Report(by=by, baseline=baseline, columns=columns, row_keys=row_keys,
                  rows=report_rows, summaries=summaries, common=common,
                  footnotes=notes.texts, adjust=adjust, confidence=confidence,
                  center=center, machines=machines,
                  column_labels={c: v for c, v in column_labels.items() if v}, outliers=outliers,
                  short_footnotes=notes.short_texts(72))


def _derived(sets: Sequence[SampleSet], key: str, others: Sequence[str]) -> bool:
    """Whether ``key``'s value is fixed by the ``others`` (with ``by`` among them) but not by
    the rows' labels alone: it then splits every row by column, and says nothing the others do not."""
    def function_of(keys: Sequence[str]) -> bool:
        seen: dict[tuple[str, ...], str] = {}
        return all(seen.setdefault(tuple(s.labels.get(k, "") for k in keys), s.labels.get(key, ""))
                   == s.labels.get(key, "") for s in sets)
    return function_of(others) and not function_of(others[1:])


def _row_order(row_keys: Sequence[str], values_of: dict[str, list], metrics: Sequence[str] | None):
    """Rows grouped by the row keys in their order (``--rows base,metric``: by base, then metric),
    each key's values in the order asked (``--metric wall,user,sys``) or first seen in the inputs."""
    rank = {k: {v: i for i, v in enumerate(values_of.get(k, []))} for k in row_keys}
    if metrics and "metric" in rank:
        rank["metric"] = {m: i for i, m in enumerate(dict.fromkeys(metrics))}

    def key(row: Row) -> tuple[int, ...]:
        return tuple(rank[k].get(row.labels.get(k, ""), len(rank[k])) for k in row_keys)
    return key


def _follows_column(sets: Sequence[SampleSet], by: str, key: str) -> bool:
    seen: dict[str, str] = {}
    for sample_set in sets:
        value = sample_set.labels.get(key, "")
        if seen.setdefault(sample_set.labels[by], value) != value:
            return False
    return True


def _ordered(values) -> list:
    """The distinct values, in the order first seen."""
    return list(dict.fromkeys(values))


def _labels_text(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


def _row_text(keys: Sequence[str], values: Sequence[str]) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, values)) or "the table"


def _merge(first: SampleSet, second: SampleSet) -> SampleSet:
    """Two sets with the same labels: one set with both sets' runs."""
    if first.summary is not None or second.summary is not None:
        raise UsageError(f"{_labels_text(first.labels)}: given twice ({first.source or 'store'} and "
                         f"{second.source or 'store'}); summary statistics cannot be pooled with "
                         "other data; add a label to tell the sets apart")
    note = (f"{_labels_text(first.labels)}: {first.source or 'store'} and "
            f"{second.source or 'store'} pooled as separate runs")
    if first.unit != second.unit:
        raise UsageError(f"{_labels_text(first.labels)}: units differ ({first.unit} vs "
                         f"{second.unit}); add a label to tell the sets apart")
    first.runs.extend(list(r) for r in second.runs)
    first.notes.extend(second.notes)
    first.notes.append(note)
    return first


def _center(runs: Sequence[Sequence[float]], center: str, outliers: str) -> tuple[float, str, int, int]:
    """(centre, its kind, n, values dropped by the outlier rule) of a cell before any comparison: the
    median of the samples kept (on the data's grid for integer data: :mod:`abstat.report.centres`),
    or with several runs or ``--center mean`` the centre its comparisons compare (``centre_of``).
    A comparison then replaces them with the centres it agreed (:func:`_agree`)."""
    from abstat.comparison.estimands import centre_of
    from abstat.report.centres import kept_runs, shown_median

    groups = [list(run) for run in runs if len(run)]
    kept = kept_runs(groups[0] if len(groups) == 1 else groups, outliers) or []
    n = sum(len(run) for run in kept)
    dropped = sum(len(run) for run in groups) - n
    if len(groups) == 1 and center != "mean" and n:
        return shown_median(kept[0]), "median", n, dropped
    value, kind = centre_of([list(map(float, run)) for run in kept] or groups, center)
    return value, kind, n, dropped


def _agree(base: Cell, cell: Cell) -> None:
    """The cell's comparison with the centres every format prints (:func:`abstat.report.centres.agree`);
    both cells then show those centres and the counts of the samples compared (after the outlier rule)."""
    from abstat.report.centres import agree

    cell.comparison = agree(cell.comparison, base.sample_set.comparison_data(), cell.sample_set.comparison_data())
    comparison = cell.comparison
    if comparison.centers and len(comparison.centers) == 2:  # beside summary statistics: both means
        for side, centre, summary in zip((base, cell), comparison.centers, comparison.summaries or [None, None]):
            side.center, side.shown_kind = float(centre), comparison.center_kind
            if summary is not None and comparison.unit == "samples":
                side.n, side.dropped = summary.n, summary.dropped


def _summaries(rows: list[Row], columns: list[str], confidence: float) -> list[Summary]:
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    metrics = _ordered(r.metric for r in rows)
    summaries = []
    for metric in metrics:
        for column in columns:
            logs: list[float] = []
            ses: list[float] | None = []
            for row in rows:
                cell = row.cells.get(column)
                if row.metric != metric or cell is None or cell.comparison is None:
                    continue
                ratio = 1 + cell.comparison.delta_pct / 100
                low, high = (1 + x / 100 for x in (cell.comparison.ci_pct or (math.nan, math.nan)))
                if ratio <= 0:
                    logs = []
                    break
                logs.append(math.log(ratio))
                if ses is not None and low > 0 and high > 0:
                    ses.append((math.log(high) - math.log(low)) / (2 * z))
                else:
                    ses = None
            if len(logs) < 2:
                continue  # a geometric mean of one cell says nothing new
            mean = sum(logs) / len(logs)
            ci = None
            if ses is not None and len(ses) == len(logs):
                se = math.sqrt(sum(s * s for s in ses)) / len(ses)
                ci = (math.exp(mean - z * se), math.exp(mean + z * se))
            summaries.append(Summary(column=column, metric=metric, ratio=math.exp(mean),
                                     ci=ci, cells=len(logs)))
    return summaries
