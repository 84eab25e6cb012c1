"""Inline SVG plots for the HTML report, written directly from the data.

One figure per compared cell, two panels side by side on one x axis
(:func:`abstat.render.svg_axes.choose_axis`: linear, clipped to the bulk with
the far samples drawn at the edges and counted, or logarithmic):

* the empirical CDFs of both sets (step lines), which show shifts, spread
  and modes at once;
* a box plot (quartiles, median, whiskers at 1.5 IQR) over a strip of the
  samples themselves (deterministic jitter), which shows outliers and
  quantisation.

The legend sits under the panels, outside the data.  No plotting library: a
figure is a few kilobytes (the samples of a set are one ``<path>`` of dots;
long series are thinned to at most ``MAX_POINTS`` ECDF vertices and
``MAX_DOTS`` dots, keeping the extremes).  Every string from the data goes
through :func:`abstat.render.escape.html`; numbers are positions computed
here.  Extreme but finite data (near 1e308) are placed without overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from abstat.render import escape
from abstat.render.svg_axes import Axis, choose_axis, quantile, whiskers

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
DASHES = ("", "6 3", "2 2", "8 2 2 2")
MAX_POINTS = 1000
MAX_DOTS = 400
WIDTH, HEIGHT = 960, 326
ECDF_BOX = (64, 28, 450, 250)  # left, top, right, bottom
STRIP_BOX = (540, 28, 900, 250)
LEGEND_Y = 314
NAME_CHARS = 40


@dataclass(frozen=True)
class Figure:
    svg: str
    note: str  # what the axis leaves out or how it is scaled ('' when linear over everything)


def _thin(ordered: Sequence[float], limit: int) -> list[float]:
    n = len(ordered)
    if n <= limit:
        return list(ordered)
    return [ordered[round(i * (n - 1) / (limit - 1))] for i in range(limit)]


def _f(value: float) -> str:
    return f"{value:.1f}"


def text(x: float, y: float, content: str, *, anchor: str = "middle", size: int = 12, extra: str = "") -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}"{extra}>{escape.html(content)}</text>'
    )


def short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else "…" + name[1 - NAME_CHARS :]  # the end tells files apart


def axis_title(unit_shown: str, unit: str | None, metric: str | None) -> str:
    """``wall (ms)``, ``cycles``: the metric once, the unit once."""
    unit_text = unit_shown or unit or ""
    if metric and unit_text and metric != unit_text:
        return f"{metric} ({unit_text})"
    return metric or unit_text or "value"


def x_axis(
    out: list[str], axis: Axis, box: tuple[int, int, int, int], ticks: list[float], labels: list[str], title: str
) -> None:
    x0, y0, x1, y1 = box
    out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#888"/>')
    for tick, label in zip(ticks, labels):
        x = axis(tick)
        if axis.inside(tick):
            out.append(f'<line x1="{_f(x)}" y1="{y0}" x2="{_f(x)}" y2="{y1}" stroke="#ddd"/>')
            out.append(text(x, y1 + 16, label, size=11))
    out.append(text((x0 + x1) / 2, y1 + 36, title, size=12))


def comparison_figure(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    unit: str | None = None,
    metric: str | None = None,
    title: str = "",
) -> Figure:
    """ECDFs and box/strip plots of each (name, values) series, and what the axis clips."""
    data = _finite_series(series)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="sans-serif">'
    ]
    if title:
        out.append(f"<title>{escape.html(title)}</title>")
    if not data:
        out.append(text(WIDTH / 2, HEIGHT / 2, "no finite values to plot"))
        return Figure("".join(out) + "</svg>", "")
    ecdf_x = choose_axis([v for _, v in data], ECDF_BOX[0], ECDF_BOX[2])
    strip_x = choose_axis([v for _, v in data], STRIP_BOX[0], STRIP_BOX[2])
    _frame(out, ecdf_x, strip_x, unit, metric)
    band = (STRIP_BOX[3] - STRIP_BOX[1]) / len(data)
    legend_x = float(ECDF_BOX[0])
    for index, (name_, values) in enumerate(data):
        color, dash = COLORS[index % len(COLORS)], DASHES[index % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        _ecdf(out, ecdf_x, values, color, dash_attr)
        legend_x = _legend_entry(out, legend_x, f"{short(name_)} (n={len(values)})", color, dash_attr)
        _strip(out, strip_x, values, index, STRIP_BOX[1] + band * (index + 0.5), band, color, name_)
    note = ecdf_x.clip_note([n for n, _ in data], unit, metric)
    return Figure("".join(out) + "</svg>", note)


def _finite_series(series: Sequence[tuple[str, Sequence[float]]]) -> list[tuple[str, list[float]]]:
    """Each series' finite values, sorted; the series left without any left out."""
    data = [(name, sorted(v for v in values if math.isfinite(v))) for name, values in series]
    return [(name, values) for name, values in data if values]


def _frame(out: list[str], ecdf_x: Axis, strip_x: Axis, unit: str | None, metric: str | None) -> None:
    """Both panels' x axes (one set of ticks), the ECDF's fractions, and the panels' titles."""
    left, top, right, bottom = ECDF_BOX
    ticks = ecdf_x.ticks()
    labels, shown = ecdf_x.tick_labels(ticks, unit, metric)
    name = axis_title(shown, unit, metric) + (" (log scale)" if ecdf_x.kind == "log" else "")
    for axis, box in ((ecdf_x, ECDF_BOX), (strip_x, STRIP_BOX)):
        x_axis(out, axis, box, ticks, labels, name)
    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = bottom - fraction * (bottom - top)
        out.append(f'<line x1="{left}" y1="{_f(y)}" x2="{right}" y2="{_f(y)}" stroke="#eee"/>')
        out.append(text(left - 6, y + 4, f"{fraction:g}", anchor="end", size=11))
    out.append(
        text(
            16,
            (top + bottom) / 2,
            "fraction of samples ≤ x",
            size=12,
            extra=f' transform="rotate(-90 16 {_f((top + bottom) / 2)})"',
        )
    )
    out.append(text((left + right) / 2, 16, "empirical CDF", size=12))
    out.append(text((STRIP_BOX[0] + STRIP_BOX[2]) / 2, 16, "box plot over the samples", size=12))


def _ecdf(out: list[str], axis: Axis, values: list[float], color: str, dash_attr: str) -> None:
    """One series' empirical CDF as a step line (thinned to ``MAX_POINTS`` vertices)."""
    _, top, _, bottom = ECDF_BOX
    points = _thin(values, MAX_POINTS)
    m = len(points)
    path = [f"M{_f(axis(points[0]))},{_f(bottom)}"]
    for i, value in enumerate(points):
        path.append(f"H{_f(axis(value))}V{_f(bottom - (i + 1) / m * (bottom - top))}")
    out.append(f'<path class="data" d="{"".join(path)}" fill="none" stroke="{color}" stroke-width="1.6"{dash_attr}/>')


def _legend_entry(out: list[str], x: float, label: str, color: str, dash_attr: str) -> float:
    """One series' entry in the legend under the panels, at ``x``; where the next one starts."""
    out.append(
        f'<g class="legend"><line x1="{_f(x)}" y1="{LEGEND_Y - 4}" x2="{_f(x + 22)}" '
        f'y2="{LEGEND_Y - 4}" stroke="{color}" stroke-width="2"{dash_attr}/>'
        + text(x + 28, LEGEND_Y, label, anchor="start", size=11)
        + "</g>"
    )
    return x + 48 + 6.6 * len(label)


def _strip(
    out: list[str], axis: Axis, values: list[float], index: int, centre: float, band: float, color: str, name: str
) -> None:
    """One series' dots (one path), box and whiskers, and the count of samples beyond the axis."""
    spread = band * 0.35
    dots = []
    for i, value in enumerate(_thin(values, MAX_DOTS)):
        if axis.inside(value):
            jitter = ((i * 0.6180339887) % 1.0 - 0.5) * 2 * spread
            dots.append(f"M{_f(axis(value))} {_f(centre + jitter)}h0")
    if dots:
        out.append(
            f'<path class="dots" d="{"".join(dots)}" stroke="{color}" stroke-opacity="0.4" '
            'stroke-width="4" stroke-linecap="round"/>'
        )
    q1, median, q3 = (quantile(values, q) for q in (0.25, 0.5, 0.75))
    whisker_low, whisker_high = whiskers(values)
    half = band * 0.22
    out.append(
        f'<path d="M{_f(axis(whisker_low))} {_f(centre)}H{_f(axis(whisker_high))}'
        f"M{_f(axis(whisker_low))} {_f(centre - half / 2)}V{_f(centre + half / 2)}"
        f'M{_f(axis(whisker_high))} {_f(centre - half / 2)}V{_f(centre + half / 2)}" stroke="#333"/>'
    )
    out.append(
        f'<rect x="{_f(axis(q1))}" y="{_f(centre - half)}" '
        f'width="{_f(max(axis(q3) - axis(q1), 1.0))}" height="{_f(2 * half)}" '
        f'fill="{color}" fill-opacity="0.15" stroke="#333"/>'
    )
    out.append(
        f'<line x1="{_f(axis(median))}" y1="{_f(centre - half)}" x2="{_f(axis(median))}" '
        f'y2="{_f(centre + half)}" stroke="#000" stroke-width="2.5"/>'
    )
    out.append(
        text(STRIP_BOX[0] + 4, centre - band * 0.38, short(name), anchor="start", size=11, extra=f' fill="{color}"')
    )
    _beyond(out, axis, values, centre, color)


def _beyond(out: list[str], axis: Axis, values: list[float], centre: float, color: str) -> None:
    """Arrows at the strip's edges counting one series' samples beyond a clipped axis."""
    below = sum(1 for v in values if v < axis.low)
    above = sum(1 for v in values if v > axis.high)
    if above:
        x = STRIP_BOX[2] + 3
        out.append(f'<path class="beyond" d="M{_f(x)} {_f(centre - 5)}l8 5l-8 5z" fill="{color}"/>')
        out.append(text(x + 11, centre + 4, f"{above}", anchor="start", size=11, extra=f' fill="{color}"'))
    if below:
        x = STRIP_BOX[0] - 3
        out.append(f'<path class="beyond" d="M{_f(x)} {_f(centre - 5)}l-8 5l8 5z" fill="{color}"/>')
        out.append(text(x - 11, centre + 4, f"{below}", anchor="end", size=11, extra=f' fill="{color}"'))


def comparison_svg(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    unit: str | None = None,
    metric: str | None = None,
    title: str = "",
) -> str:
    """The figure's ``<svg>`` element alone."""
    return comparison_figure(series, unit=unit, metric=metric, title=title).svg
