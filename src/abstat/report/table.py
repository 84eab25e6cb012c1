"""The report's table as data: cells, rows, the geometric-mean summaries, and the report.

:func:`abstat.report.matrix.build_report` fills it; the renderers
(:mod:`abstat.render.matrix`, ``html``, ``email``) and the JSON contract
(:meth:`Report.to_dict`) read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.fastdataclass import dataclass, field
from abstat.report.adjust import DESCRIPTIONS, unreachable
from abstat.readers.sampleset import SampleSet


OUTLIER_RULES = {"tukey": "Tukey's fences (1.5 IQR)", "mad": "|modified z| > 3.5 (MAD)"}  # --outliers, in words


@dataclass(slots=True)
class Cell:
    """One sample set in the table and, off the baseline column, its comparison."""

    row: tuple[str, ...]
    column: str
    sample_set: SampleSet
    center: float
    n: int
    comparison: Any = None  # abstat.comparison.Comparison or None
    p_adjusted: float | None = None
    significant: bool | None = None
    notes: Sequence[int] = field(default_factory=list)  # footnote numbers (:meth:`add_note` adds)
    messages: Sequence[dict[str, Any]] = field(default_factory=list)  # the notes in full (JSON, HTML)
    shared_source: bool = False  # the source file holds other cells too
    report_center: str = "auto"  # the report's --center (auto, median or mean)
    shown_kind: str | None = None  # what ``center`` is, when the report chose it (report/centres.py)
    dropped: int = 0  # values the outlier rule dropped; n, centre and change use the rest

    def add_note(self, number: int, message: dict[str, Any] | None = None) -> None:
        """A footnote number (and its message in full) for the cell; its lists are made with its first
        note (a report builds its cells with none: 10^5 revisions x metrics cells, mostly note-less)."""
        self.notes = [*self.notes, number]
        if message is not None:
            self.messages = [*self.messages, message]

    @property
    def center_kind(self) -> str:
        """What ``center`` is: the centre the cell's comparisons compare (``median``, ``mean``,
        ``pseudo-median``, ``geometric mean``; with several runs ``geometric mean of run medians``...;
        always the mean for a summary)."""
        if self.sample_set.summary is not None:
            return "mean"
        if self.shown_kind:
            return self.shown_kind
        from abstat.comparison.estimands import centre_of

        return centre_of(self.sample_set.runs, self.report_center)[1]

    @property
    def name(self) -> str:
        """A display name: the source file (with the row's labels when the file
        holds several cells), else the labels joined by '-'."""
        source = self.sample_set.source
        if source and source != "-" and self.sample_set.summary is None:
            if self.shared_source:
                # both sides of a comparison may come from one file: name the column too
                return f"{source}[{' '.join(v for v in (*self.row, self.column) if v)}]"
            return source
        return "-".join(v for v in (*self.row, self.column) if v)

    @property
    def place(self) -> tuple[str, str]:
        """Where the cell sits in the table: (``milan/pv64``, ``after``), the footnotes' subject."""
        return "/".join(v for v in self.row if v), self.column


@dataclass(slots=True)
class Row:
    labels: dict[str, str]  # the row keys' values
    cells: dict[str, Cell]  # column value -> cell
    metric: str | None = None


@dataclass
class Summary:
    """Geometric mean of candidate/baseline ratios of one column, one metric
    (:func:`abstat.report.matrix.geomean`): over ``cells`` of the ``rows`` compared (those that judged
    a change), its ``confidence`` interval unadjusted, and no mark."""

    column: str
    metric: str | None
    ratio: float
    ci: tuple[float, float] | None
    cells: int
    rows: int = 0
    confidence: float = 0.95


@dataclass
class Report:
    by: str
    baseline: str
    columns: list[str]
    row_keys: list[str]
    rows: list[Row]
    summaries: list[Summary]
    common: dict[str, str]
    footnotes: list[str]
    adjust: str
    confidence: float
    center: str
    machines: dict[str, dict[str, Any]]
    column_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    outliers: str = "none"  # the outlier rule every number of every cell was computed after
    short_footnotes: list[str] = field(default_factory=list)  # one line each, <= 72 columns (e-mail)
    columns_label: str | None = None  # text and e-mail: this row label's values across the top (render/pivot.py)
    findings: list[str] = field(default_factory=list)  # the footnotes without their advice (text formats)

    def short_footer(self) -> list[str]:
        """The footer in a few lines for a cover letter: what the cells and changes are, the family's
        rule, the outlier rule (the long explanations are in the text format, HTML and docs)."""
        level = _pct_text(self.confidence * 100)
        kinds = list(dict.fromkeys(c.center_kind for row in self.rows for c in row.cells.values()))
        labels = sorted({c.comparison.estimand_label.split(" (")[0] for c in self.comparisons})
        change = " or ".join(labels) if labels else f"change of the {self.center}"
        lines = [
            f"Cells: {' or '.join(kinds) or self.center}; change: the {change}, {level}% interval.",
            f"* = significant at {_pct_text(100 - self.confidence * 100)}%"
            + (
                " after "
                + {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no adjustment"}.get(self.adjust, self.adjust)
                + f" over the {len(self.comparisons)} comparisons."
                if self.family_adjusted()
                else "."
            ),
        ]
        lines += self.threshold_lines()
        if self.outlier_line():
            lines.append(self.outlier_line())
        if self.summary_cells:
            lines.append("Summary-statistics cells show the mean; their changes compare means.")
        if self.summaries:
            lines.append(self.geomean_line(short=True))
        return lines

    def geomean_line(self, short: bool = False) -> str:
        """What the geomean row is, as :func:`abstat.report.matrix.geomean` computes it: over the rows
        that judged a change (how many, when some could not), its interval unadjusted and unmarked."""
        level = _pct_text(self.confidence * 100)
        partial = [
            f"{s.metric + ' ' if s.metric and 'metric' in self.row_keys else ''}{s.column} {s.cells} of {s.rows}"
            for s in self.summaries
            if s.cells < s.rows
        ]
        if short:
            return (
                f"geomean: geometric mean of the rows' ratios{' (' + ', '.join(partial) + ')' if partial else ''}; "
                f"its {level}% interval is not adjusted, and it has no mark."
            )
        over = f" (rows that cannot judge have no ratio: {', '.join(partial)})" if partial else ""
        return (
            f"geomean = geometric mean of candidate/baseline ratios over the rows{over}; its {level}% interval "
            "reads each cell's interval as a normal one on the log scale, assuming independent cells; like "
            "the cells' intervals it is not adjusted, and it has no mark (it is not one of the "
            f"{len(self.comparisons)} comparisons)."
        )

    def outlier_line(self) -> str:
        """The rule and what it dropped per cell, for every format (empty without a rule)."""
        if self.outliers == "none":
            return ""
        rule = OUTLIER_RULES.get(self.outliers, self.outliers)
        cells = [c for row in self.rows for c in row.cells.values() if c.sample_set.summary is None]
        dropped = [f"{'/'.join(v for v in (*c.row, c.column) if v)} {c.dropped}" for c in cells if c.dropped]
        counts = ", ".join(dropped[:12]) + (f" and {len(dropped) - 12} more" if len(dropped) > 12 else "")
        return (
            f"Outliers: {rule} dropped "
            + (counts if dropped else "nothing")
            + "; n, centres and changes use the values kept."
        )

    @property
    def summary_cells(self) -> list[Cell]:
        """The cells made from summary statistics instead of samples."""
        return [c for row in self.rows for c in row.cells.values() if c.sample_set.summary is not None]

    def pairs(self) -> list[tuple[Cell, Cell]]:
        """(baseline cell, candidate cell) of each row, in table order."""
        return [
            (row.cells[self.baseline], row.cells[column])
            for row in self.rows
            if self.baseline in row.cells
            for column in self.columns[1:]
            if column in row.cells
        ]

    @property
    def comparisons(self) -> list[Cell]:
        return [c for row in self.rows for c in row.cells.values() if c.comparison is not None]

    def footer(self) -> list[str]:
        """The lines every format prints under the table."""
        level = _pct_text(self.confidence * 100)
        alpha = 1 - self.confidence
        cells = [c for row in self.rows for c in row.cells.values()]
        # a table made only of summary statistics shows and compares means
        center = "mean" if cells and len(self.summary_cells) == len(cells) else self.center
        what = self._changes_are(center)
        kinds = list(dict.fromkeys(c.center_kind for c in cells))
        cells_are = f"{' or '.join(kinds) if kinds else center} of each sample set"
        if not self.comparisons:  # one variant, or no row holding the baseline and another: no change, no test
            lines = [
                f"Cells: {cells_are}; no change is computed: no row has both the baseline "
                f"{self.by}={self.baseline} and another {self.by}."
            ]
            return lines + self._notes()
        lines = [
            f"Cells: {cells_are}; change = {what} "
            f"from the baseline {self.by}={self.baseline} in percent, with its "
            f"{level}% confidence interval (abstat compare; its method per cell is in the "
            "JSON and HTML).",
            f"* = significant at {_pct_text(alpha * 100)}% after "
            f"{DESCRIPTIONS[self.adjust]} over the table's {len(self.comparisons)} comparisons; "
            "intervals are not adjusted."
            if self.family_adjusted()
            else f"* = significant at {_pct_text(alpha * 100)}% (one comparison: nothing to adjust for).",
        ]
        floor = unreachable([c.comparison for c in self.comparisons], self.adjust, alpha)
        return lines + self.threshold_lines() + ([floor] if floor else []) + self._notes()

    def family_adjusted(self) -> bool:
        """Whether the footer names the family's rule: a family of one (one comparison with a p-value) is
        not adjusted (:func:`abstat.report.adjust.adjust_family`), so no rule is named for it."""
        return sum(c.comparison.p_value is not None for c in self.comparisons) > 1

    def threshold_lines(self) -> list[str]:
        """What ``~`` marks, when the comparisons had a threshold (``--threshold``): equivalent cells."""
        limits = sorted({c.comparison.threshold for c in self.comparisons if c.comparison.threshold is not None})
        if not limits:
            return []
        limit = " or ".join(f"±{t:g}%" for t in limits)
        return [
            f"With the threshold {limit}: * only where the change is beyond it; ~ = equivalent, the interval "
            "lies within it."
        ]

    def _notes(self) -> list[str]:
        """The footer's lines after the method's: outlier rule, summary cells, column labels, geomeans."""
        lines = []
        if self.outlier_line():
            lines.append(self.outlier_line())
        if self.summary_cells:
            lines.append(
                "Cells given as summary statistics (NAME=n:mean:stddev) show the mean; changes "
                "involving them compare means (Welch's t, Fieller interval), since medians and "
                "distributions need the raw samples."
            )
        for column, described in self.column_labels.items():
            lines.append(f"{self.by}={column}: " + ", ".join(f"{k}={v}" for k, v in described.items()))
        if self.summaries:
            lines.append(self.geomean_line())
        return lines

    def _changes_are(self, center: str) -> str:
        """What the changes estimate: the one estimand, or each with the cells that compute it."""
        labels = sorted({getattr(c.comparison, "estimand_label", None) or "" for c in self.comparisons} - {""})
        if len(labels) == 1:
            return f"the {labels[0]}"
        if not labels:
            return f"the change of the {center}"
        where: dict[str, list[str]] = {}  # e.g. runs as the unit in some cells, samples in others: say which
        for cell in self.comparisons:
            label = getattr(cell.comparison, "estimand_label", None) or ""
            place = "/".join(v for v in cell.row if v) or cell.column
            if label and place not in where.setdefault(label, []):
                where[label].append(place)
        return "; ".join(
            f"the {label} ({', '.join(where[label][:6])}"
            + (f" and {len(where[label]) - 6} more" if len(where[label]) > 6 else "")
            + ")"
            for label in labels
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``abstat report --format json``."""
        rows = []
        for row in self.rows:
            cells = {}
            for column, cell in row.cells.items():
                summary = cell.sample_set.summary
                entry: dict[str, Any] = {
                    "n": cell.n,
                    "dropped": cell.dropped,
                    "center": cell.center,
                    "center_kind": cell.center_kind,
                    "summary": summary.to_dict() if summary is not None else None,
                    "source": cell.sample_set.source,
                    "unit": cell.sample_set.unit,
                    "labels": dict(cell.sample_set.labels),
                    "notes": list(cell.notes),
                    "messages": list(cell.messages),
                }
                if cell.comparison is not None:
                    cmp = cell.comparison
                    entry["comparison"] = {
                        "delta_pct": cmp.delta_pct,
                        "ci_pct": list(cmp.ci_pct) if cmp.ci_pct is not None else None,
                        "p_value": cmp.p_value,
                        "p_adjusted": cell.p_adjusted,
                        "significant": cell.significant,
                        "verdict": cmp.verdict,
                        "method": cmp.method,
                        "detail": cmp.to_dict(),
                    }
                cells[column] = entry
            rows.append({"labels": dict(row.labels), "cells": cells})
        return {
            "schema": "abstat.report/1",
            "by": self.by,
            "baseline": self.baseline,
            "columns": list(self.columns),
            "row_keys": list(self.row_keys),
            "common_labels": dict(self.common),
            "column_labels": {c: dict(v) for c, v in self.column_labels.items()},
            "confidence": self.confidence,
            "center": self.center,
            "adjust": self.adjust,
            "outliers": self.outliers,
            "rows": rows,
            "geomean": [
                {
                    "column": s.column,
                    "metric": s.metric,
                    "ratio": s.ratio,
                    "ci": list(s.ci) if s.ci else None,
                    "cells": s.cells,
                    "rows": s.rows,
                    "confidence": s.confidence,
                    "adjustment": None,
                }
                for s in self.summaries
            ],
            "footnotes": list(self.footnotes),
            "footer": self.footer(),
            "machines": self.machines,
        }


def _pct_text(value: float) -> str:
    return f"{value:.10g}"
