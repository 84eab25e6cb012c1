"""A parameter scan's figures for the HTML report: the metric against the parameter, and the change.

:func:`metric_figure` draws every variant's samples at each value of the
parameter (dots, thinned to ``MAX_DOTS`` per point) and a line through the
geometric means; :func:`change_figure` draws each candidate's ratio to the
baseline at each value with its interval (:class:`abstat.comparison.grid.Interaction`),
around a line at 1.  The x axis is logarithmic when the values are positive
numbers spanning more than a factor of two, else the values in order, evenly
spaced; the y axis is :func:`abstat.render.svg_axes.choose_axis`'s.  Every
string from the data goes through :func:`abstat.render.escape.html`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from abstat.comparison.grid import Interaction, numeric
from abstat.render import escape
from abstat.render.svg_axes import Axis, choose_axis
from abstat.render.svg_plots import COLORS, Figure, axis_title, text

WIDTH, HEIGHT = 960, 340
BOX = (84, 28, 900, 250)  # left, top, right, bottom
MAX_DOTS = 60
MAX_SERIES = len(COLORS) * 2
MAX_X_LABELS = 16


def _f(value: float) -> str:
    return f"{value:.1f}"


def _x_positions(values: Sequence[str]) -> tuple[Callable[[int], float], bool]:
    """index -> x pixel, and whether the axis is logarithmic."""
    left, _, right, _ = BOX
    numbers = numeric(values)
    if numbers and max(numbers) > 2 * min(numbers):
        axis = Axis("log", min(numbers), max(numbers), left, right, min(numbers), max(numbers))
        return (lambda index: axis(numbers[index])), True
    return (lambda index: left + (index + 0.5) / len(values) * (right - left)), False


def _frame(
    out: list[str],
    parameter: str,
    values: Sequence[str],
    y: Axis,
    unit: str | None,
    metric: str | None,
    y_title: str | None = None,
) -> Callable[[int], float]:
    left, top, right, bottom = BOX
    x, log_x = _x_positions(values)
    out.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#888"/>')
    ticks = y.ticks()
    labels, shown = y.tick_labels(ticks, unit, metric)
    for tick, label in zip(ticks, labels, strict=True):
        if y.inside(tick):
            out.append(f'<line x1="{left}" y1="{_f(y(tick))}" x2="{right}" y2="{_f(y(tick))}" stroke="#eee"/>')
            out.append(text(left - 6, y(tick) + 4, label, anchor="end", size=11))
    title = (y_title or axis_title(shown, unit, metric)) + (" (log scale)" if y.kind == "log" else "")
    out.append(text(18, (top + bottom) / 2, title, extra=f' transform="rotate(-90 18 {_f((top + bottom) / 2)})"'))
    step = max(1, math.ceil(len(values) / MAX_X_LABELS))
    for index in range(0, len(values), step):
        out.append(f'<line x1="{_f(x(index))}" y1="{bottom}" x2="{_f(x(index))}" y2="{bottom + 4}" stroke="#888"/>')
        out.append(text(x(index), bottom + 16, values[index][:12], size=10))
    out.append(text((left + right) / 2, bottom + 36, parameter + (" (log scale)" if log_x else ""), size=12))
    return x


def _legend(out: list[str], names: Sequence[str], what: str) -> None:
    left = BOX[0]
    for k, name in enumerate(names[:MAX_SERIES]):
        px = left + k * 150
        color = COLORS[k % len(COLORS)]
        out.append(
            f'<line x1="{px}" y1="{HEIGHT - 12}" x2="{px + 18}" y2="{HEIGHT - 12}" stroke="{color}" stroke-width="2"/>'
        )
        out.append(text(px + 22, HEIGHT - 8, name[:20], anchor="start", size=11))
    out.append(text(BOX[2], HEIGHT - 8, what, anchor="end", size=11))


def _svg(title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'font-family="sans-serif"><title>{escape.html(title)}</title>'
    ]


def metric_figure(
    parameter: str,
    values: Sequence[str],
    series: Mapping[str, Sequence[Sequence[float]]],
    *,
    unit: str | None,
    metric: str | None,
) -> Figure:
    """``series``: name -> the samples at each of ``values`` (in order)."""
    out = _svg(f"{metric or 'value'} against {parameter}")
    names = list(series)[:MAX_SERIES]
    finite = sorted(v for name in names for samples in series[name] for v in samples if math.isfinite(v))
    if not finite:
        out.append(text(WIDTH / 2, HEIGHT / 2, "no finite values to plot"))
        return Figure("".join(out) + "</svg>", "")
    y = choose_axis([finite], BOX[3], BOX[1])
    x = _frame(out, parameter, values, y, unit, metric)
    for k, name in enumerate(names):
        out += _series_paths(series[name], x, y, COLORS[k % len(COLORS)], (k - (len(names) - 1) / 2) * 6)
    _legend(out, names, "dots: samples; lines: geometric means")
    return Figure("".join(out) + "</svg>", y.clip_note(["samples"], unit, metric) if y.kind != "linear" else "")


def _series_paths(
    samples_at: Sequence[Sequence[float]], x: Callable[[int], float], y: Axis, color: str, offset: float
) -> list[str]:
    """One series' dots (thinned to ``MAX_DOTS`` per value) and the line through its geometric means."""
    dots: list[str] = []
    line: list[str] = []
    for index, samples in enumerate(samples_at):
        shown = [v for v in samples if math.isfinite(v)]
        shown = shown if len(shown) <= MAX_DOTS else sorted(shown)[:: math.ceil(len(shown) / MAX_DOTS)]
        dots += [f"M{_f(x(index) + offset)} {_f(y(v))}h0" for v in shown]
        positive = [v for v in shown if v > 0]
        if positive:
            centre = math.exp(sum(math.log(v) for v in positive) / len(positive))
            line.append(f"{'L' if line else 'M'}{_f(x(index))} {_f(y(centre))}")
    return [
        f'<path class="dots" d="{"".join(dots)}" stroke="{color}" stroke-opacity="0.45" stroke-width="3" '
        'stroke-linecap="round"/>',
        f'<path class="data" d="{"".join(line)}" fill="none" stroke="{color}" stroke-width="1.5"/>',
    ]


def change_figure(parameter: str, values: Sequence[str], tests: Sequence[Interaction]) -> Figure:
    """Each candidate's ratio to the baseline at each value (``tests``' points, of this one parameter)."""
    out = _svg(f"change against {parameter}")
    bounds = sorted({1.0, *(b for t in tests for i in t.intervals for b in i if math.isfinite(b) and b > 0)})
    y = choose_axis([bounds], BOX[3], BOX[1])
    x = _frame(out, parameter, values, y, None, None, y_title="candidate / baseline")
    out.append(
        f'<line x1="{BOX[0]}" y1="{_f(y(1.0))}" x2="{BOX[2]}" y2="{_f(y(1.0))}" stroke="#888" stroke-dasharray="4 3"/>'
    )
    for k, test in enumerate(tests[:MAX_SERIES]):
        color = COLORS[k % len(COLORS)]
        offset = (k - (len(tests) - 1) / 2) * 8
        line: list[str] = []
        for point, ratio, (low, high) in zip(test.points, test.ratios, test.intervals, strict=True):
            index = values.index(point[parameter]) if point.get(parameter) in values else None
            if index is None:
                continue
            px = x(index) + offset
            out.append(f'<line x1="{_f(px)}" y1="{_f(y(low))}" x2="{_f(px)}" y2="{_f(y(high))}" stroke="{color}"/>')
            line.append(f"{'L' if line else 'M'}{_f(px)} {_f(y(ratio))}")
        out.append(
            f'<path class="data" d="{"".join(line)}" fill="none" stroke="{color}" stroke-width="1.5" '
            'marker-mid="none"/>'
        )
    _legend(out, [f"{t.candidate}/{t.baseline}" for t in tests], "bars: intervals of the ratio")
    return Figure("".join(out) + "</svg>", "")
