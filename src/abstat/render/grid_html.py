"""A parameter scan's section of ``abstat report``'s HTML page: figures and the analysis in words.

Per metric: the metric against each parameter (:func:`abstat.render.svg_grid.metric_figure`: a
series per variant, and per combination of the other parameters), and for a grid of one
parameter each candidate's change against it (:func:`abstat.render.svg_grid.change_figure`);
then the lines of :func:`abstat.render.grid.analysis_lines`.  Strings from the data are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from abstat.comparison.grid import GridAnalysis
from abstat.render import escape
from abstat.render.svg_plots import Figure
from abstat.render.svg_grid import change_figure, metric_figure

Grid = Sequence[tuple[Mapping[str, str], Mapping[str, Sequence[float]]]]


def _values(grid: Grid, parameter: str) -> list[str]:
    return list(dict.fromkeys(point[parameter] for point, _ in grid))


def _series(grid: Grid, parameter: str, variants: Sequence[str]) -> dict[str, list[list[float]]]:
    """name -> samples at each value of ``parameter``: a series per variant and combination of the others."""
    values = _values(grid, parameter)
    series: dict[str, list[list[float]]] = {}
    for point, samples in grid:
        others = " ".join(f"{k}={v}" for k, v in point.items() if k != parameter)
        for variant in variants:
            if variant in samples:
                name = f"{variant} {others}".strip()
                series.setdefault(name, [[] for _ in values])[values.index(point[parameter])].extend(samples[variant])
    return series


def _figure(drawn: Figure) -> str:
    note = f'<p class="caption axis-note">{escape.html(drawn.note)}</p>' if drawn.note else ""
    return f'<div class="plot">{drawn.svg}</div>' + note


def grid_section(
    analysis: GridAnalysis, grids: Mapping[str, Grid], units: Mapping[str, str | None], lines: Sequence[str]
) -> str:
    variants = [analysis.baseline] + [t.candidate for items in analysis.interactions.values() for t in items]
    variants = list(dict.fromkeys(variants))
    parts = ['<section class="grid">', "<h2>Parameter scan</h2>"]
    for metric, grid in grids.items():
        for parameter in analysis.parameters:
            values = _values(grid, parameter)
            parts.append(f"<h3>{escape.html(metric)} against {escape.html(parameter)}</h3>")
            parts.append(
                _figure(
                    metric_figure(
                        parameter,
                        values,
                        _series(grid, parameter, variants),
                        unit=units.get(metric),
                        metric=metric or None,
                    )
                )
            )
            tests = [t for t in analysis.interactions.get(metric, []) if t.points]
            if len(analysis.parameters) == 1 and tests:
                parts.append(_figure(change_figure(parameter, values, tests)))
    parts += [f"<p>{escape.html(line.strip())}</p>" for line in lines]
    return "\n".join([*parts, "</section>"]) + "\n"
