"""Inline SVG plots for the HTML report, written directly from the data.

One figure per compared cell, two panels side by side:

* the empirical CDFs of both sets (step lines), which show shifts, spread
  and modes at once;
* a box plot (quartiles, median, whiskers at 1.5 IQR) over a strip of the
  samples themselves (deterministic jitter), which shows outliers and
  quantisation.

No plotting library: a figure is a few kilobytes of text made in well under
a millisecond for the usual sizes (long series are thinned to at most
``MAX_POINTS`` ECDF vertices and ``MAX_DOTS`` dots, keeping the extremes).
Every string from the data goes through :func:`abstat.render.escape.html`;
numbers are positions computed here, so nothing else reaches the markup.
Extreme but finite data (near 1e308) are placed without overflow.
"""
from __future__ import annotations

import math
from typing import Sequence

from abstat.render import escape
from abstat.render.units import common_scale

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
DASHES = ("", "6 3", "2 2", "8 2 2 2")
MAX_POINTS = 1000
MAX_DOTS = 400
WIDTH, HEIGHT = 960, 300
ECDF_BOX = (64, 28, 470, 250)     # left, top, right, bottom
STRIP_BOX = (560, 28, 940, 250)
NAME_CHARS = 40


def _thin(ordered: Sequence[float], limit: int) -> list[float]:
    n = len(ordered)
    if n <= limit:
        return list(ordered)
    return [ordered[round(i * (n - 1) / (limit - 1))] for i in range(limit)]


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction if fraction else ordered[low]


class _Axis:
    """Maps data values to pixels without overflowing on extreme data."""

    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        if not high > low:
            pad = abs(low) * 0.05 or 1.0
            low, high = low - pad, high + pad
            if not high > low:          # pad lost to rounding (|low| near the float limit)
                low, high = low * (1 - 1e-9 * math.copysign(1, low)), high * (1 + 1e-9 * math.copysign(1, high))
        pad = (high / 2 - low / 2) * 0.06     # 3% of the span on each side
        if math.isfinite(low - pad) and math.isfinite(high + pad):
            low, high = low - pad, high + pad
        self.low, self.high = low, high
        self.half_span = high / 2 - low / 2
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        return self.start + (value / 2 - self.low / 2) / self.half_span * (self.end - self.start)

    def ticks(self, count: int = 5) -> list[float]:
        raw = self.half_span * 2 / count if math.isfinite(self.half_span * 2) else self.half_span / count * 2
        if not math.isfinite(raw) or raw <= 0:
            return [self.low, self.high]
        power = 10.0 ** math.floor(math.log10(raw))
        step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
        first = math.ceil(self.low / step)
        last = math.floor(self.high / step)
        if not (math.isfinite(first) and math.isfinite(last)) or last - first > 4 * count:
            return [self.low, self.high]
        return [k * step for k in range(int(first), int(last) + 1)]


def _f(value: float) -> str:
    return f"{value:.1f}"


def _text(x: float, y: float, text: str, *, anchor: str = "middle", size: int = 12,
          extra: str = "") -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}"{extra}>'
            f"{escape.html(text)}</text>")


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else "…" + name[1 - NAME_CHARS:]   # the end tells files apart


def comparison_svg(series: Sequence[tuple[str, Sequence[float]]], *, unit: str | None = None,
                   metric: str | None = None, title: str = "") -> str:
    """An ``<svg>`` element: ECDFs and box/strip plots of each (name, values) series."""
    data = [(name, sorted(v for v in values if math.isfinite(v))) for name, values in series]
    data = [(name, values) for name, values in data if values]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'role="img" font-family="sans-serif">']
    if title:
        out.append(f"<title>{escape.html(title)}</title>")
    if not data:
        out.append(_text(WIDTH / 2, HEIGHT / 2, "no finite values to plot"))
        return "".join(out) + "</svg>"
    low = min(values[0] for _, values in data)
    high = max(values[-1] for _, values in data)
    left, top, right, bottom = ECDF_BOX
    ecdf_x = _Axis(low, high, left, right)
    strip_x = _Axis(low, high, STRIP_BOX[0], STRIP_BOX[2])
    ticks = ecdf_x.ticks()
    scale = common_scale(ticks, unit, metric)
    label = scale.unit or (unit or metric or "value")
    # axes, grid and tick labels of both panels
    for axis, (x0, y0, x1, y1) in ((ecdf_x, ECDF_BOX), (strip_x, STRIP_BOX)):
        out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#888"/>')
        for tick in ticks:
            x = axis(tick)
            if x0 - 0.5 <= x <= x1 + 0.5:
                out.append(f'<line x1="{_f(x)}" y1="{y0}" x2="{_f(x)}" y2="{y1}" stroke="#ddd"/>')
                out.append(_text(x, y1 + 16, scale.number(tick), size=11))
        out.append(_text((x0 + x1) / 2, y1 + 36, label, size=12))
    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = bottom - fraction * (bottom - top)
        out.append(f'<line x1="{left}" y1="{_f(y)}" x2="{right}" y2="{_f(y)}" stroke="#eee"/>')
        out.append(_text(left - 6, y + 4, f"{fraction:g}", anchor="end", size=11))
    out.append(_text(16, (top + bottom) / 2, "fraction of samples ≤ x", size=12,
                     extra=f' transform="rotate(-90 16 {_f((top + bottom) / 2)})"'))
    out.append(_text((left + right) / 2, 16, "empirical CDF", size=12))
    out.append(_text((STRIP_BOX[0] + STRIP_BOX[2]) / 2, 16, "box plot over the samples", size=12))
    longest = max(len(f"{_short(name)} (n={len(values)})") for name, values in data)
    out.append(f'<rect x="{left + 4}" y="{top + 4}" width="{min(right - left - 8, 40 + 6.6 * longest):.0f}" '
               f'height="{16 * len(data) + 6}" fill="#fff" fill-opacity="0.85" stroke="#ccc"/>')
    band = (STRIP_BOX[3] - STRIP_BOX[1]) / len(data)
    for index, (name, values) in enumerate(data):
        color, dash = COLORS[index % len(COLORS)], DASHES[index % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        # ECDF as a step path
        n = len(values)
        points = _thin(values, MAX_POINTS)
        m = len(points)
        path = [f"M{_f(ecdf_x(points[0]))},{_f(bottom)}"]
        for i, value in enumerate(points):
            y = bottom - (i + 1) / m * (bottom - top)
            path.append(f"H{_f(ecdf_x(value))}V{_f(y)}")
        out.append(f'<path d="{"".join(path)}" fill="none" stroke="{color}" stroke-width="1.6"{dash_attr}/>')
        legend_y = top + 16 + 16 * index
        out.append(f'<line x1="{left + 8}" y1="{legend_y - 4}" x2="{left + 30}" y2="{legend_y - 4}" '
                   f'stroke="{color}" stroke-width="2"{dash_attr}/>')
        out.append(_text(left + 36, legend_y, f"{_short(name)} (n={n})", anchor="start", size=11))
        # strip of samples and a box plot on top
        centre = STRIP_BOX[1] + band * (index + 0.5)
        dots = _thin(values, MAX_DOTS)
        spread = band * 0.35
        for i, value in enumerate(dots):
            jitter = ((i * 0.6180339887) % 1.0 - 0.5) * 2 * spread
            out.append(f'<circle cx="{_f(strip_x(value))}" cy="{_f(centre + jitter)}" r="2" '
                       f'fill="{color}" fill-opacity="0.35"/>')
        q1, median, q3 = (_quantile(values, q) for q in (0.25, 0.5, 0.75))
        iqr = q3 / 2 - q1 / 2     # half, against overflow
        low_fence, high_fence = q1 - 3 * iqr, q3 + 3 * iqr
        whisker_low = next((v for v in values if v >= low_fence), values[0])
        whisker_high = next((v for v in reversed(values) if v <= high_fence), values[-1])
        half = band * 0.22
        out.append(f'<line x1="{_f(strip_x(whisker_low))}" y1="{_f(centre)}" x2="{_f(strip_x(whisker_high))}" '
                   f'y2="{_f(centre)}" stroke="#333"/>')
        for whisker in (whisker_low, whisker_high):
            out.append(f'<line x1="{_f(strip_x(whisker))}" y1="{_f(centre - half / 2)}" '
                       f'x2="{_f(strip_x(whisker))}" y2="{_f(centre + half / 2)}" stroke="#333"/>')
        out.append(f'<rect x="{_f(strip_x(q1))}" y="{_f(centre - half)}" '
                   f'width="{_f(max(strip_x(q3) - strip_x(q1), 1.0))}" height="{_f(2 * half)}" '
                   f'fill="{color}" fill-opacity="0.15" stroke="#333"/>')
        out.append(f'<line x1="{_f(strip_x(median))}" y1="{_f(centre - half)}" x2="{_f(strip_x(median))}" '
                   f'y2="{_f(centre + half)}" stroke="#000" stroke-width="2.5"/>')
        out.append(_text(STRIP_BOX[0] + 4, centre - band * 0.38, _short(name), anchor="start", size=11,
                         extra=f' fill="{color}"'))
    return "".join(out) + "</svg>"
