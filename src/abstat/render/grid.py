"""A parameter scan's report (``abstat run -L``): a comparison per grid point, then the grid's analysis.

:func:`grid_report` is what ``abstat run`` ends with for a grid: like a
lab's report per host (:mod:`abstat.render.lab_report`), one comparison per
point (its invocations are labelled with the point's values), then whether
each candidate's change depends on the point and each variant's scaling
exponent (:mod:`abstat.comparison.grid`).  :func:`with_grid` adds the same
analysis under ``abstat report``'s table when its rows are a stored grid's
parameters.  Text, Markdown and JSON carry the analysis (and ``report``'s
HTML its figures, :mod:`abstat.render.grid_html`); CSV has the per-point
rows only.  Everything printed from data is escaped.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from abstat.render import escape

if TYPE_CHECKING:  # comparison.grid imports scipy.stats: only when a grid is analysed
    from abstat.comparison.grid import GridAnalysis

MAX_SHOWN_POINTS = 8


def stored_parameters(store: Any, experiment: str) -> dict[str, list[str]]:
    """The parameters (name -> values) of ``experiment``'s latest grid invocation; {} if none.  The
    settings are untrusted: anything but names and lists of strings is ignored."""
    for settings in store.settings_newest_first(experiment):  # not every invocation's machine record
        found = settings.get("parameters") if isinstance(settings, dict) else None
        if isinstance(found, dict) and found and all(_values_list(v) for v in found.values()):
            return {str(k): list(v) for k, v in found.items()}
    return {}


def _values_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, str) for x in value)


def _point_text(point: Mapping[str, str]) -> str:
    return ",".join(f"{name}={value}" for name, value in point.items())


def _values(groups: Mapping[str, Mapping[str, list[list[float]]]]) -> dict[str, dict[str, list[float]]]:
    return {
        metric: {variant: [x for group in runs for x in group] for variant, runs in by_variant.items()}
        for metric, by_variant in groups.items()
    }


def grid_report(store: Any, experiment: str, *, labels: dict[str, str], fmt: str = "text", **options: Any) -> str:
    """Every grid point's comparison, then the grid's analysis (``options``: ``comparison_report``'s)."""
    from abstat.comparison.grid import analyse
    from abstat.render.run_report import comparison_report

    parameters = stored_parameters(store, experiment)
    points = [dict(zip(parameters, values, strict=True)) for values in itertools.product(*parameters.values())]
    reports = [comparison_report(store, experiment, fmt=fmt, labels={**labels, **point}, **options) for point in points]
    grids = _stored_grids(store, experiment, labels, points)
    variants = [
        v for v in store.variant_names(experiment) if any(v in samples for g in grids.values() for _, samples in g)
    ]
    baseline = options.get("baseline") or (variants[0] if variants else None)
    analysis = (
        None
        if baseline is None or fmt == "csv"
        else analyse(grids, list(parameters), variants, baseline, options.get("confidence", 95.0) / 100)
    )
    return _render(fmt, experiment, list(parameters), points, reports, analysis)


def _render(
    fmt: str,
    experiment: str,
    parameters: list[str],
    points: list[dict[str, str]],
    reports: list[str],
    analysis: GridAnalysis | None,
) -> str:
    if fmt == "json":
        documents = [
            {"labels": point, "report": json.loads(report) if report.strip() else None}
            for point, report in zip(points, reports, strict=True)
        ]
        document = {
            "experiment": experiment,
            "points": documents,
            "grid": analysis.to_dict() if analysis is not None else None,
        }
        return escape.json_text(document)
    if fmt == "csv":
        return _csv(parameters, points, reports)
    clean = escape.markdown if fmt == "markdown" else escape.terminal
    out = [
        (f"# {clean(_point_text(point))}" if fmt == "markdown" else f"== {clean(_point_text(point))} ==")
        + "\n"
        + report
        for point, report in zip(points, reports, strict=True)
    ]
    if analysis is not None:
        out.append("\n" + "".join(line + "\n" for line in analysis_lines(analysis, fmt)))
    return "".join(out)


def _stored_grids(
    store: Any, experiment: str, labels: dict[str, str], points: list[dict[str, str]]
) -> dict[str, list[tuple[dict[str, str], dict[str, list[float]]]]]:
    """metric -> (point, variant -> values) of the latest invocations of each point (as the comparisons)."""
    from abstat.render.run_report import recent_invocations

    grids: dict[str, list[tuple[dict[str, str], dict[str, list[float]]]]] = {}
    for point in points:
        ids = recent_invocations(store, store.invocation_ids(experiment, {**labels, **point}))
        for metric, by_variant in _values(store.groups_by_metric(experiment, invocations=ids or [-1])).items():
            grids.setdefault(metric, []).append((point, by_variant))
    return dict(sorted(grids.items(), key=lambda item: (item[0] != "wall", item[0])))  # wall first


def _csv(parameters: list[str], points: list[dict[str, str]], reports: list[str]) -> str:
    """One table: the point's values first, then each point's comparison rows."""
    out: list[str] = []
    for point, report in zip(points, reports, strict=True):
        lines = report.splitlines()
        if lines and not out:
            out.append(",".join(_csv_field(name) for name in parameters) + "," + lines[0] + "\n")
        prefix = ",".join(_csv_field(value) for value in point.values())
        out.extend(f"{prefix},{line}\n" for line in lines[1:])
    return "".join(out)


def _csv_field(text: str) -> str:
    text = str(escape.csv_cell(text))
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


def _shown(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def analysis_lines(analysis: GridAnalysis, fmt: str = "text") -> list[str]:
    """The analysis as lines (text or Markdown), escaped: the interaction tests, then the exponents."""
    markdown = fmt == "markdown"
    clean = escape.markdown if markdown else escape.terminal
    gap, heading, bullet = ([""], "## ", "- ") if markdown else ([], "", "  ")
    tests = sum(1 for items in analysis.interactions.values() for i in items if i.p_value is not None)
    sections = []
    found = _interaction_lines(analysis)
    if found:
        sections.append(
            [
                heading
                + clean(
                    f"grid: does the change depend on {', '.join(analysis.parameters)}? Welch's test of the log "
                    f"ratio of geometric means across the points, Holm-adjusted over {tests} test(s), at "
                    f"{1 - analysis.confidence:.3g}"
                ),
                *gap,
                *(bullet + clean(line) for line in found),
            ]
        )
    found = _scaling_lines(analysis)
    if found:
        sections.append(
            [
                heading
                + clean(
                    f"scaling exponent: slope of log(metric) on log(parameter), {analysis.confidence * 100:.3g}% "
                    "interval (HC3)"
                ),
                *gap,
                *(bullet + clean(line) for line in found),
            ]
        )
    return [line for index, section in enumerate(sections) for line in (gap if index else []) + section]


def _scaling_lines(analysis: GridAnalysis) -> list[str]:
    lines = []
    for metric, items in analysis.scalings.items():
        for s in items:
            interval = f"[{s.interval[0]:.3f}, {s.interval[1]:.3f}]" if s.interval else "(no interval)"
            notes = f" ({'; '.join(s.notes)})" if s.notes else ""
            lines.append(f"{metric} in {s.parameter}: {s.variant} {s.exponent:.3f} {interval}{notes}")
    return lines


def _interaction_lines(analysis: GridAnalysis) -> list[str]:
    level = 1 - analysis.confidence
    lines = []
    for metric, items in analysis.interactions.items():
        for test in (t for t in items if t.points):  # none: no point with values of both, nothing to say
            shown = " ".join(
                f"{r:.3f} ({_point_text(p)})" for p, r in zip(test.points[:MAX_SHOWN_POINTS], test.ratios, strict=False)
            )
            if len(test.points) > MAX_SHOWN_POINTS:
                shown += f" ... ({len(test.points)} points)"
            if test.p_value is None or test.df is None:
                verdict = f"not tested: {test.note}"
            else:
                adjusted = analysis.adjusted.get((metric, test.candidate), test.p_value)
                call = "depends on the grid point" if adjusted < level else "no evidence that it depends on the point"
                verdict = (
                    f"F={test.statistic:.3g} ({test.df[0]:g}, {test.df[1]:.1f} df), p={_shown(test.p_value)}"
                    f" (adjusted {_shown(adjusted)}): {call}"
                )
            lines.append(f"{metric}: {test.candidate}/{test.baseline} {shown}: {verdict}")
    return lines


def with_grid(text: str, report: Any, store_path: str | None, fmt: str) -> str:
    """``abstat report``'s output with the grid's analysis added, when its rows are a stored grid's
    parameters (every row key but ``metric``); ``text`` unchanged otherwise (and in other formats)."""
    keys = [k for k in report.row_keys if k != "metric"]
    if fmt not in ("table", "text", "markdown", "json", "html") or not keys:
        return text
    parameters = _report_parameters(report, store_path)
    if not all(k in parameters for k in keys):
        return text
    from abstat.comparison.grid import analyse

    grids = _report_grids(report, keys, parameters)
    analysis = analyse(grids, keys, report.columns, report.baseline, report.confidence)
    if fmt == "html":
        from abstat.render.grid_html import grid_section

        units = {row.metric or "": cell.sample_set.unit for row in report.rows for cell in row.cells.values()}
        return text.replace("</body>", grid_section(analysis, grids, units, analysis_lines(analysis)) + "</body>", 1)
    if fmt == "json":
        document = json.loads(text)
        document["grid"] = analysis.to_dict()
        return escape.json_text(document)
    return text.rstrip("\n") + "\n\n" + "".join(line + "\n" for line in analysis_lines(analysis, fmt))


def _report_grids(
    report: Any, keys: list[str], parameters: dict[str, list[str]]
) -> dict[str, list[tuple[dict[str, str], dict[str, list[float]]]]]:
    """metric -> (point, column -> values) of the report's rows."""
    grids: dict[str, list[tuple[dict[str, str], dict[str, list[float]]]]] = {}
    for row in report.rows:
        point = {k: row.labels[k] for k in keys}
        samples = {column: [x for run in cell.sample_set.runs for x in run] for column, cell in row.cells.items()}
        grids.setdefault(row.metric or "", []).append((point, samples))
    for grid in grids.values():  # numeric parameters in increasing order, as the table may not be
        grid.sort(key=lambda item: tuple(_order(parameters[k], item[0][k]) for k in keys))
    return grids


def _report_parameters(report: Any, store_path: str | None) -> dict[str, list[str]]:
    """The stored parameters of the experiments the report's cells come from."""
    from abstat.store import open_store, resolve_store_path

    experiments = {c.sample_set.labels.get("experiment") for row in report.rows for c in row.cells.values()}
    parameters: dict[str, list[str]] = {}
    with open_store(resolve_store_path(store_path), create=False) as store:
        for experiment in sorted(e for e in experiments if e):
            parameters.update(stored_parameters(store, experiment))
    return parameters


def _order(values: Sequence[str], value: str) -> float:
    from abstat.comparison.grid import numeric

    numbers = numeric([value])
    return numbers[0] if numbers else float(values.index(value) if value in values else len(values))
