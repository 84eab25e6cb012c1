"""The public API behind ``abstat report`` (the CLI is a thin layer over it).

sets = load(["milan-hcall-pv64-before", ...], pattern="{host}-hcall-{mode}-{variant}")
report = build(sets, by="variant", baseline="before")
text = render(report, "email")
"""

from __future__ import annotations

from typing import Sequence

from abstat.errors import UsageError
from abstat.readers.pattern import compile_pattern
from abstat.report.inputs import default_by, load_files, load_store, parse_label_args, parse_where_args
from abstat.report.matrix import Report, build_report, filter_sets
from abstat.readers.sampleset import SampleSet

RENDER_FORMATS = (
    "table",
    "text",
    "markdown",
    "email",
    "json",
    "csv",
    "html",
    "github",
    "gitlab",
)  # = registry.REPORT_FORMATS


def load(
    inputs: Sequence[str],
    *,
    pattern: str | None = None,
    labels: Sequence[str] | dict[str, str] | None = None,
    store: str | None = None,
    where: Sequence[str] | dict[str, set[str]] | None = None,
    input_format: str = "auto",
    column: int = 1,
    delimiters: str | None = None,
    csv_values: list[str] | None = None,
    csv_labels: list[str] | None = None,
    exit_codes: bool = False,
    machines: bool = True,
) -> list[SampleSet]:
    """Sample sets from files (``inputs``, which may also be summary statistics
    ``NAME=n:mean:stddev``) or, when there are none, the store (``exit_codes``:
    with the stored runs' exit codes, for ``render_sets``; ``machines`` False: without their
    machine records, :func:`add_machines` then reads those a report shows)."""
    extra = labels if isinstance(labels, dict) else parse_label_args(labels or [], "label")
    if inputs:
        if store:
            raise UsageError("give either INPUT files or {store}, not both", fields=["store"])
        compiled = compile_pattern(pattern) if pattern else None
        return load_files(
            list(inputs),
            pattern=compiled,
            labels=extra,
            input_format=input_format,
            column=column,
            delimiters=delimiters,
            csv_values=csv_values,
            csv_labels=csv_labels,
        )
    if pattern:
        raise UsageError("{pattern} names labels from file names; give INPUT files", fields=["pattern"])
    from abstat.store import resolve_store_path

    return load_store(resolve_store_path(store), _where(where), extra, exit_codes=exit_codes, machines=machines)


def add_machines(
    sets: Sequence[SampleSet],
    store: str | None = None,
    *,
    where: Sequence[str] | dict[str, set[str]] | None = None,
    metrics: Sequence[str] | None = None,
) -> None:
    """Sets loaded from ``store`` with ``machines=False`` given the machine records that
    ``build(sets, where=where, metrics=metrics)`` shows (:func:`abstat.report.stored_runs.add_machines`)."""
    from abstat.report.stored_runs import add_machines as add
    from abstat.store import resolve_store_path

    add(resolve_store_path(store), sets, _where(where), metrics)


def _where(where: Sequence[str] | dict[str, set[str]] | None) -> dict[str, set[str]]:
    if isinstance(where, dict):
        return {k: set(v) if not isinstance(v, str) else {v} for k, v in where.items()}
    return parse_where_args(where or [])


def build(
    sets: Sequence[SampleSet],
    *,
    by: str | None = None,
    baseline: str | None = None,
    rows: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    where: Sequence[str] | dict[str, set[str]] | None = None,
    adjust: str = "holm",
    confidence: float = 0.95,
    center: str = "auto",
    higher_is_better: bool | Sequence[str] = False,
    seed: int = 0,
    threshold: float | None = None,
    outliers: str = "none",
    lower_is_better: Sequence[str] = (),
) -> Report:
    """The matrix report (see :func:`abstat.report.matrix.build_report`);
    ``by`` defaults to :func:`abstat.report.inputs.default_by`."""
    return build_report(
        sets,
        by=by or default_by(sets),
        baseline=baseline,
        rows=rows,
        metrics=metrics,
        where=_where(where),
        adjust=adjust,
        confidence=confidence,
        center=center,
        higher_is_better=higher_is_better,
        seed=seed,
        threshold=threshold,
        outliers=outliers,
        lower_is_better=lower_is_better,
    )


def render(
    report: Report,
    fmt: str = "text",
    *,
    color: bool = False,
    width: int = 100,
    ascii_only: bool = False,
    plots: str = "auto",
    ministat: bool = False,
) -> str:
    """``report`` in one of RENDER_FORMATS, as a string (``ascii_only``: box lines in ASCII;
    ``plots``: html's figures, auto, all, significant or none; ``ministat``: the e-mail's
    ``ministat -A`` blocks, on the table's samples)."""
    from abstat.render.registry import render_report

    if fmt == "html":
        return render_report(report, fmt, plots=plots)
    if fmt == "email":
        return render_report(report, fmt, ministat=ministat)
    return render_report(report, fmt, color=color, width=width, ascii_only=ascii_only)


def render_sets(
    sets: Sequence[SampleSet],
    fmt: str = "hyperfine",
    *,
    where: Sequence[str] | dict[str, set[str]] | None = None,
    metrics: Sequence[str] | None = None,
) -> str:
    """Export the (filtered) sample sets themselves; only ``hyperfine`` so far."""
    from abstat.report.export import render_hyperfine

    if fmt != "hyperfine":
        raise UsageError(f"unknown export format {fmt!r}")
    chosen = filter_sets(list(sets), _where(where), metrics)
    if not chosen:
        raise UsageError("no sample set matches {where}/{metrics}", fields=["where", "metrics"])
    return render_hyperfine(chosen)
