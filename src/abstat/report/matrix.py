"""The report's matrix: rows x columns of sample sets, compared to a baseline.

``build_report(sets, by="variant", baseline=None, rows=None, ...)`` puts each
sample set in a cell: its column is its value of the ``by`` label, its row the
combination of the other labels that vary.  Every cell with a baseline cell in
its row is compared to it with :func:`abstat.compare`; the p-values of all
comparisons in the table are adjusted together (Holm by default) and a cell is
marked significant when its adjusted p-value is below 1 - confidence.  A
geometric-mean row summarises each column (per metric).  The table it
returns (:class:`Report` and its cells) is :mod:`abstat.report.table`.

The steps, each a function (benchstat's shape): lay out (:func:`abstat.report.layout.lay_out`) ->
grid (:func:`abstat.report.layout.fill_grid`) -> compare the cells (:func:`compare_cells`, through
:func:`abstat.report.analysis.compare_pair`) -> adjust (:func:`adjust_cells`) -> table.
``abstat compare A B`` is the one-row table of the same steps.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from abstat.errors import AbstatError, UsageError
from abstat.fastdataclass import dataclass
from abstat.readers.bulk import gc_paused
from abstat.report.adjust import METHODS, adjust_family, adjust_p_values
from abstat.report.centres import settle, start_centre
from abstat.report.layout import BASELINE_NAMES, Grid, Layout, fill_grid, filter_sets, lay_out, row_order, row_text
from abstat.report.notes import Footnotes
from abstat.readers.sampleset import SampleSet
from abstat.report.table import Cell, Report, Row, Summary
from abstat.stats.warnings import StatWarning

__all__ = [
    "BASELINE_NAMES",
    "Cell",
    "Options",
    "Report",
    "Row",
    "Summary",
    "adjust_cells",
    "build_report",
    "compare_cells",
    "filter_sets",
]


@dataclass(frozen=True)
class Options:
    """How every cell is compared (as :func:`abstat.compare` takes them)."""

    confidence: float = 0.95
    center: str = "auto"
    threshold: float | None = None
    outliers: str = "none"
    higher_is_better: bool | Sequence[str] = False
    lower_is_better: Sequence[str] = ()
    seed: int = 0


def build_report(
    sets: Sequence[SampleSet],
    *,
    by: str = "variant",
    baseline: str | None = None,
    rows: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    where: dict[str, set[str]] | None = None,
    adjust: str = "holm",
    confidence: float = 0.95,
    center: str = "auto",
    higher_is_better: bool | Sequence[str] = False,
    seed: int = 0,
    threshold: float | None = None,
    outliers: str = "none",
    strict: bool = False,
    lower_is_better: Sequence[str] = (),
) -> Report:
    """Arrange ``sets`` in the matrix and compare each cell to its baseline
    (``threshold``, ``outliers``: as :func:`abstat.compare` takes them; ``lower_is_better``: metrics better
    lower whatever their unit).  ``strict``: a pair that cannot be compared raises its error (``abstat
    compare``) instead of becoming the cell's note."""
    _check(adjust, confidence, center)
    options = Options(
        confidence=confidence,
        center=center,
        threshold=threshold,
        outliers=outliers,
        higher_is_better=higher_is_better,
        lower_is_better=lower_is_better,
        seed=seed,
    )
    layout = lay_out(sets, by=by, baseline=baseline, rows=rows, metrics=metrics, where=where)
    notes = Footnotes()
    with gc_paused():  # a cell and a row per set, none in a cycle: the collector's passes would find nothing
        report_rows = compare_cells(fill_grid(layout), layout, options, notes, strict=strict)
    report_rows.sort(key=row_order(layout, metrics))
    adjust_cells(report_rows, adjust, confidence, notes)
    return _table(layout, report_rows, notes, adjust, options)


def _check(adjust: str, confidence: float, center: str) -> None:
    if adjust not in METHODS:
        raise UsageError(f"{{adjust}} {adjust!r}: choose from {', '.join(METHODS)}", fields=["adjust"])
    if not 0 < confidence < 1:
        raise UsageError(f"confidence {confidence!r} must be between 0 and 1")
    if center not in ("auto", "median", "mean"):
        raise UsageError(f"center {center!r}: choose auto, median or mean")


def compare_cells(grid: Grid, layout: Layout, options: Options, notes: Footnotes, *, strict: bool = False) -> list[Row]:
    """The grid's rows: a cell per set, each off the baseline column compared with its row's baseline; the
    grid consumed (each slot let go once its row is made: not 10^5 revisions x metrics slots held)."""
    per_source = Counter(s.source for slot in grid.values() for s in slot.values())
    report_rows: list[Row] = []
    for row_id in list(grid):
        slot = grid.pop(row_id)
        cells = {
            column: _cell(row_id, column, slot[column], per_source[slot[column].source] > 1, options, notes)
            for column in layout.columns
            if column in slot
        }
        base = cells.get(layout.baseline)
        others = [cell for column, cell in cells.items() if column != layout.baseline]
        if base is not None:
            _compare_row(base, others, options, notes, strict)
        for cell in cells.values():
            settle(cell, options.center, options.outliers)
        for cell in others if base is None else ():
            missing = f"no baseline ({layout.by}={layout.baseline}) to compare with"
            cell.add_note(notes.add(missing, row_text(layout.row_keys, row_id)))
        report_rows.append(
            Row(
                labels=dict(zip(layout.row_keys, row_id, strict=True)),
                cells=cells,
                metric=slot[next(iter(slot))].labels.get("metric"),
            )
        )
    return report_rows


def _cell(
    row_id: tuple[str, ...], column: str, sample_set: SampleSet, shared: bool, options: Options, notes: Footnotes
) -> Cell:
    """A sample set's cell before any comparison: its centre and n (after the outlier rule), its notes."""
    summary = sample_set.summary
    cell = Cell(
        row=row_id,
        column=column,
        sample_set=sample_set,
        center=summary.mean if summary else 0.0,
        n=summary.n if summary else 0,
        shared_source=shared,
        report_center=options.center,
        notes=(),  # (lists made with a first note: cell.add_note)
        messages=(),
    )
    if summary is None:  # (its centre computed when no comparison replaces it: centres.settle)
        start_centre(cell, options.center, options.outliers)
    for note in sample_set.notes:
        cell.add_note(notes.add(note), {"code": "input", "message": note, "variant": cell.name})
    if summary is not None:
        cell.add_note(
            notes.add_warning(StatWarning("summary-only", "summary statistics only"), cell.place),
            {
                "code": "summary-only",
                "variant": cell.name,
                "message": f"summary statistics only (n={summary.n}, mean {summary.mean!r}, stddev {summary.stddev!r})",
            },
        )
    return cell


def _compare_row(base: Cell, cells: list[Cell], options: Options, notes: Footnotes, strict: bool) -> None:
    """The row's cells compared with its baseline, whose ties every comparison reads one way
    (:func:`abstat.stats.tie_cells.shown_together`: its centre is one number in all of them)."""
    from abstat.stats.tie_cells import shown_together

    def attempt(cell: Cell) -> Any:  # the comparison, or the error that kept it from being made
        try:
            return _comparison(base, cell, options)
        except AbstatError as err:
            if strict:
                raise
            return err

    for cell, result in zip(cells, shown_together(lambda: [attempt(each) for each in cells]), strict=True):
        _note_comparison(cell, base, result, notes)


def _note_comparison(cell: Cell, base: Cell, result: Any, notes: Footnotes) -> None:
    """The cell's comparison and its warnings as footnotes (or what kept it from being compared)."""
    if isinstance(result, AbstatError):
        cell.add_note(
            notes.add(f"not compared: {result}", cell.place),
            {"code": "not-compared", "message": str(result), "variant": None},
        )
        return
    cell.comparison = result
    for warning in result.warnings:
        # one footnote per kind of warning, listing the cells (the side
        # a warning about one variant concerns, else the row)
        side = base if warning.variant is not None and warning.variant == base.name else cell
        cell.add_note(notes.add_warning(warning, side.place), warning.to_dict())


def _comparison(base: Cell, cell: Cell, options: Options) -> Any:
    """The comparison of the pair (:func:`abstat.report.analysis.compare_pair`, or exact for Go's
    "Unit ... assume=exact"); both cells then show its centres and the counts of the samples compared."""
    from abstat.report.analysis import common_unit_data, compare_pair, higher_is_better, is_exact

    metric = cell.sample_set.labels.get("metric")  # the direction by the baseline's unit (attack22 A13)
    higher = higher_is_better(metric, base.sample_set.unit or metric, options.higher_is_better, options.lower_is_better)
    names = (base.name, cell.name)
    if is_exact(base.sample_set, cell.sample_set):
        from abstat.report.exact import exact_comparison

        return exact_comparison(
            base.sample_set,
            cell.sample_set,
            names=names,
            confidence=options.confidence,
            higher_is_better=higher,
            seed=options.seed,
        )
    data, mismatch = common_unit_data(base.sample_set, cell.sample_set, names)
    comparison = compare_pair(
        *data,
        names=names,
        confidence=options.confidence,
        center=options.center,
        threshold=options.threshold,
        outliers=options.outliers,
        higher_is_better=higher,
        seed=options.seed,
    )
    comparison.warnings.extend(mismatch)
    if comparison.centers and len(comparison.centers) == 2:  # beside summary statistics: both means
        for side, centre, summary in zip(
            (base, cell), comparison.centers, comparison.summaries or [None, None], strict=True
        ):
            whole = summary is not None and comparison.unit == "samples"  # (then all the cell's own centre says)
            settle(side, options.center, options.outliers, replaced=whole)
            side.center, side.shown_kind = float(centre), comparison.center_kind
            if whole:
                side.n, side.dropped = summary.n, summary.dropped
    return comparison


def adjust_cells(report_rows: list[Row], adjust: str, confidence: float, notes: Footnotes) -> None:
    """Every comparison of the table judged as one family (:func:`abstat.report.adjust.adjust_family`):
    each cell's adjusted p-value and mark; a method without a p-value is noted, its mark unadjusted."""
    compared = [c for r in report_rows for c in r.cells.values() if c.comparison is not None]
    judged = adjust_family([c.comparison for c in compared], adjust)
    alpha = 1 - confidence
    for cell, comparison in zip(compared, judged, strict=True):
        cell.comparison = comparison
        if comparison.p_value is None:
            cell.significant = bool(comparison.significant)
            cell.add_note(
                notes.add(
                    f"method {comparison.method} gives no p-value",
                    cell.place,
                    "its mark is not adjusted for multiple comparisons",
                )
            )
            continue
        # a family of one (or --adjust none): the p-value itself (a comparison that cannot judge: 1)
        cell.p_adjusted = (
            comparison.p_adjusted
            if comparison.p_adjusted is not None
            else adjust_p_values([float(comparison.p_value)], adjust)[0]
        )
        cell.significant = cell.p_adjusted < alpha
    for cell in (c for r in report_rows for c in r.cells.values()):
        if len(cell.notes) > 1:  # (most cells have none: no new list each)
            cell.notes = sorted(set(cell.notes))


def _table(layout: Layout, report_rows: list[Row], notes: Footnotes, adjust: str, options: Options) -> Report:
    """The report: the rows, their geometric-mean summaries, the machines and the footnotes."""
    machines: dict[str, dict[str, Any]] = {}
    for sample_set in layout.chosen:
        if sample_set.machine:
            host = sample_set.labels.get("host") or str(sample_set.machine.get("hostname", "?"))
            machines.setdefault(host, sample_set.machine)
    return Report(
        by=layout.by,
        baseline=layout.baseline,
        columns=layout.columns,
        row_keys=layout.row_keys,
        rows=report_rows,
        summaries=_summaries(report_rows, layout.columns[1:], options.confidence),
        common=layout.common,
        footnotes=notes.texts,
        adjust=adjust,
        confidence=options.confidence,
        center=options.center,
        machines=machines,
        column_labels=layout.column_labels,
        outliers=options.outliers,
        short_footnotes=notes.short_texts(72),
        findings=notes.findings,
    )


def _summaries(rows: list[Row], columns: list[str], confidence: float) -> list[Summary]:
    """Per metric and candidate column, the geometric mean of the cells' ratios (:func:`geomean`)."""
    summaries = []
    for metric in dict.fromkeys(r.metric for r in rows):
        for column in columns:
            cells = [
                row.cells[column]
                for row in rows
                if row.metric == metric and column in row.cells and row.cells[column].comparison is not None
            ]
            summary = geomean([c.comparison for c in cells], confidence)
            if summary is not None:
                summaries.append(dataclasses.replace(summary, column=column, metric=metric))
    return summaries


def geomean(comparisons: Sequence[Any], confidence: float) -> Summary | None:
    """The geometric mean of the comparisons' ratios (1 + change) over those that judged a change (a
    comparison that cannot judge has no ratio to average), with a ``confidence`` interval that reads each
    comparison's interval as a normal one on the log scale (its standard error: the interval's log width
    / 2z) and takes the comparisons as independent: mean of the logs +- z sqrt(sum se^2) / k.  Like the
    cells' intervals it is not adjusted for multiple comparisons; it is no comparison of the family (no
    p-value, no mark).  None when fewer than two ratios (a geometric mean of one says nothing new)."""
    judged = [c for c in comparisons if c.verdict != "cannot judge" and math.isfinite(c.delta_pct)]
    ratios = [1 + c.delta_pct / 100 for c in judged]
    if len(ratios) < 2 or min(ratios) <= 0:
        return None
    from statistics import NormalDist  # here: statistics imports random, fractions, decimal (start-up)

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    logs = [math.log(r) for r in ratios]
    mean = math.fsum(logs) / len(logs)
    return Summary(
        column="",
        metric=None,
        ratio=math.exp(mean),
        ci=_log_interval(judged, mean, z),
        cells=len(logs),
        rows=len(comparisons),
        confidence=confidence,
    )


def _log_interval(judged: Sequence[Any], mean: float, z: float) -> tuple[float, float] | None:
    """The geometric mean's interval (see :func:`geomean`); None unless every comparison has a finite,
    positive interval of ratios."""
    bounds = [[1 + x / 100 for x in c.ci_pct] if c.ci_pct is not None else [math.nan] for c in judged]
    if not all(len(b) == 2 and min(b) > 0 and all(map(math.isfinite, b)) for b in bounds):
        return None
    se = math.sqrt(math.fsum(((math.log(high) - math.log(low)) / (2 * z)) ** 2 for low, high in bounds)) / len(judged)
    return math.exp(mean - z * se), math.exp(mean + z * se)


def one_row_report(
    variants: Any,
    *,
    baseline: str | None = None,
    adjust: str = "holm",
    warnings: Sequence[StatWarning] = (),
    **options: Any,
) -> Report:
    """``abstat compare``'s table: the variants (name -> :class:`abstat.readers.specs.VariantData`, in their
    order) as the columns of one row, each compared with ``baseline`` (the first by default) by the
    report's steps; a pair that cannot be compared raises.  The readers' warnings about a variant's data
    go on the comparisons it is in, ``warnings`` (about a candidate: units) on its comparison."""
    names = list(variants)
    if len(names) < 2:
        raise UsageError("need at least two variants to compare")
    base = names[0] if baseline is None else baseline
    if base not in variants:
        raise UsageError(f"no variant named {base!r} (have: {', '.join(names)})")
    sets = [
        SampleSet(
            labels={"variant": name},
            runs=[run if hasattr(run, "dtype") else list(run) for run in variant.runs or []],  # arrays stay
            summary=variant.summary,
            invocations=list(getattr(variant, "invocations", None) or []),
        )
        for name, variant in variants.items()
    ]
    report = build_report(sets, by="variant", baseline=base, adjust=adjust, strict=True, **options)
    for cell in report.comparisons:
        comparison = cell.comparison
        for name in dict.fromkeys((comparison.baseline, comparison.candidate)):
            comparison.warnings.extend(variants[name].warnings if name in variants else [])
        comparison.warnings.extend(w for w in warnings if w.variant == comparison.candidate)
    return report
