"""A history series as inline SVG: samples per revision, change points drawn, y range set by the bulk.

The y axis is :func:`abstat.render.svg_axes.choose_axis` over every sample of the series, so a
far outlier no longer flattens a real +10% step into two pixels: it is drawn at the edge and
counted in the figure's note.  Tick labels are in one unit (the axis title names it once: no
``ns (ns)``, no offset).  Each change point is a red line (dashed: provisional) labelled with
its step in percent (relative to a level at or below 0: its difference in the data's unit);
segment medians are green; the median per revision is a blue line.
Revision labels on the x axis are thinned to at most ``MAX_TICKS``.  Strings from the data go
through :func:`abstat.render.escape.html`.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import Any, NamedTuple
from collections.abc import Callable, Sequence

import numpy as np

from abstat.render import escape
from abstat.render.svg_axes import choose_axis
from abstat.render.svg_plots import Figure, axis_title, text
from abstat.render.units import common_scale

WIDTH, HEIGHT = 960, 360
BOX = (84, 30, 940, 250)  # left, top, right, bottom
MAX_TICKS = 14
MAX_DOTS_PER_REV = 60


def _f(value: float) -> str:
    return f"{value:.1f}"


#: a change point: (index of the first revision after, level before, level after, provisional[, difference])
Change = tuple[int, float, float, bool] | tuple[int, float, float, bool, float]


class Samples(NamedTuple):
    """Every revision's samples, one revision after another (``flat``), and each one's number (``counts``)."""

    flat: np.ndarray
    counts: np.ndarray


def as_samples(values: Sequence[Sequence[float]] | Samples) -> Samples:
    """``values`` (a list of samples per revision) as :class:`Samples`."""
    if isinstance(values, Samples):
        return values
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    return Samples(np.fromiter(chain.from_iterable(values), dtype=float, count=int(counts.sum())), counts)


def history_figure(
    revs: Sequence[str],
    values: Sequence[Sequence[float]] | Samples,
    centres: Sequence[float],
    segments: Sequence[tuple[int, int, float]],
    changes: Sequence[Change],
    *,
    unit: str | None,
    metric: str | None,
    title: str = "",
) -> Figure:
    """``changes``: (index of the first revision after, level before, level after, provisional), and, where a
    change relative to the level before is undefined, its difference in the data's unit (the label then says
    it, not a percentage: :func:`_step_label`);
    ``values``: each revision's samples (or :class:`Samples`); ``revs`` is read at the labelled ticks
    only."""
    left, top, right, bottom = BOX
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="sans-serif">'
    ]
    if title:
        out.append(f"<title>{escape.html(title)}</title>")
    samples = as_samples(values)
    finite = np.sort(samples.flat[np.isfinite(samples.flat)], kind="stable").tolist()  # sorted()'s order
    if not finite:
        out.append(text(WIDTH / 2, HEIGHT / 2, "no finite values to plot"))
        return Figure("".join(out) + "</svg>", "")
    n = len(revs)
    y = choose_axis([finite], bottom, top)

    def x(index: float) -> float:
        return left + (index + 0.5) / n * (right - left)

    out.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#888"/>')
    out += _y_axis(y, unit, metric)
    out += _x_axis(revs, x)
    out += _samples(samples, centres, x, y, n)
    for start, end, median in segments:
        out.append(
            f'<line x1="{_f(x(start - 0.4))}" y1="{_f(y(median))}" x2="{_f(x(end - 0.6))}" '
            f'y2="{_f(y(median))}" stroke="#2ca02c" stroke-width="2.5"/>'
        )
    out += _changes(changes, x, unit, metric)
    out.append(
        text(
            left,
            HEIGHT - 8,
            "dots: samples; blue: median per revision; green: segment medians; "
            "red: change points (dashed: provisional)",
            anchor="start",
            size=11,
        )
    )
    note = y.clip_note(["samples"], unit, metric) if y.kind != "linear" else ""
    if y.kind == "clipped":
        note = note.replace("samples 0 below", "").strip()
    return Figure("".join(out) + "</svg>", note)


def _y_axis(y: Any, unit: str | None, metric: str | None) -> list[str]:
    """Grid lines, tick labels and the title of the y axis."""
    left, top, right, bottom = BOX
    out = []
    ticks = y.ticks()
    labels, shown = y.tick_labels(ticks, unit, metric)
    for tick, label in zip(ticks, labels, strict=False):
        if y.inside(tick):
            out.append(f'<line x1="{left}" y1="{_f(y(tick))}" x2="{right}" y2="{_f(y(tick))}" stroke="#eee"/>')
            out.append(text(left - 6, y(tick) + 4, label, anchor="end", size=11))
    name = axis_title(shown, unit, metric) + (" (log scale)" if y.kind == "log" else "")
    middle = (top + bottom) / 2
    out.append(text(18, middle, name, size=12, extra=f' transform="rotate(-90 18 {_f(middle)})"'))
    return out


def _x_axis(revs: Sequence[str], x: Callable[[float], float]) -> list[str]:
    """Revision ticks (at most ``MAX_TICKS`` labelled) and the x axis title."""
    left, _, right, bottom = BOX
    out = []
    n = len(revs)
    step = max(1, math.ceil(n / MAX_TICKS))
    for index in range(0, n, step):
        px = x(index)
        out.append(f'<line x1="{_f(px)}" y1="{bottom}" x2="{_f(px)}" y2="{bottom + 4}" stroke="#888"/>')
        out.append(
            text(
                px,
                bottom + 14,
                revs[index][:10],
                anchor="end",
                size=10,
                extra=f' transform="rotate(-40 {_f(px)} {bottom + 14})"',
            )
        )
    out.append(text((left + right) / 2, bottom + 84, "revision", size=12))
    return out


def _samples(
    values: Sequence[Sequence[float]] | Samples, centres: Sequence[float], x: Callable[[float], float], y: Any, n: int
) -> list[str]:
    """The samples as jittered dots (at most ``MAX_DOTS_PER_REV`` per revision) and the line of medians."""
    left, _, right, _ = BOX
    spread = min(12.0, (right - left) / n * 0.5)
    jitters = np.array([((k * 0.6180339887) % 1.0 - 0.5) * spread for k in range(MAX_DOTS_PER_REV + 1)])
    at = np.fromiter(map(x, range(n)), dtype=float, count=n)
    dots = path_text("M", *_dots(as_samples(values), jitters, at, y), "h0")
    out = [
        f'<path class="dots" d="{dots}" stroke="#8fa3b8" stroke-opacity="0.6" stroke-width="3" stroke-linecap="round"/>'
    ]
    middles = np.asarray(centres, dtype=float)
    kept = np.flatnonzero(np.isfinite(middles))
    if kept.size:
        xs, ys = at[kept], y.position_array(middles[kept])
        line = path_text("M" if kept[0] == 0 else "L", xs[:1], ys[:1], "") + path_text("L", xs[1:], ys[1:], "")
        out.append(f'<path class="data" d="{line}" fill="none" stroke="#1f77b4" stroke-width="1.2"/>')
    return out


def _dots(samples: Samples, jitters: np.ndarray, at: np.ndarray, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each finite dot's x (its revision's ``at``, plus the jitter of its place k among the revision's
    dots) and y, computed with numpy at once: the same operations on the same floats, in the same order,
    as ``x(index) + jitters[k]`` and ``y(value)`` (a revision of more than ``MAX_DOTS_PER_REV`` samples
    shows every ``ceil(len / MAX_DOTS_PER_REV)``-th of them, sorted)."""
    flat, counts = samples
    if counts.size and counts.max() > MAX_DOTS_PER_REV:
        ends = np.cumsum(counts).tolist()
        shown = [flat[a:b].tolist() for a, b in zip([0, *ends], ends, strict=False)]
        flat, counts = as_samples(
            [
                vs if len(vs) <= MAX_DOTS_PER_REV else sorted(vs)[:: math.ceil(len(vs) / MAX_DOTS_PER_REV)]
                for vs in shown
            ]
        )
    revision = np.repeat(np.arange(counts.size), counts)
    place = np.arange(flat.size) - np.repeat(np.cumsum(counts) - counts, counts)
    finite = np.isfinite(flat)
    return at[revision[finite]] + jitters[place[finite]], y.position_array(flat[finite])


def _tenths(values: np.ndarray) -> np.ndarray | None:
    """Each value's ``f"{v:.1f}"`` as an integer number of tenths (the correctly rounded one: numpy's
    rounding of ``10 v`` where no tie is near, Python's where one is); None when some value is not
    finite, is negative (or -0.0) or is 10^6 or more."""
    if values.size and not (np.isfinite(values).all() and not np.signbit(values).any() and values.max() < 1e6):
        return None
    scaled = values * 10.0
    tenths = np.rint(scaled).astype(np.int64)
    for index in np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6).tolist():
        tenths[index] = int(f"{values[index]:.1f}".replace(".", ""))
    return tenths


_POWERS = 10 ** np.arange(5, -1, -1, dtype=np.int64)  # the six digits of a number below 10^6


def _number(tenths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each number of tenths as ``DDDDDD.D`` (ASCII codes) and which of those characters it prints."""
    whole, tenth = np.divmod(tenths, 10)
    chars = np.empty((tenths.size, 8), dtype=np.uint8)
    chars[:, :6] = (whole[:, None] // _POWERS) % 10 + 48
    chars[:, 6], chars[:, 7] = ord("."), tenth + 48
    shown = np.ones((tenths.size, 8), dtype=bool)
    shown[:, :5] = whole[:, None] >= _POWERS[:5]
    return chars, shown


def path_text(prefix: str, xs: np.ndarray, ys: np.ndarray, suffix: str) -> str:
    """``"".join(f"{prefix}{x:.1f} {y:.1f}{suffix}" for x, y in zip(xs, ys))``, the numbers written with
    numpy at once (ASCII ``prefix`` and ``suffix``); by ``format`` when some value is not one
    :func:`_tenths` takes."""
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    tx, ty = _tenths(xs), _tenths(ys)
    if tx is None or ty is None:
        return "".join(map(f"{prefix}{{:.1f}} {{:.1f}}{suffix}".format, xs.tolist(), ys.tolist()))
    (cx, sx), (cy, sy) = _number(tx), _number(ty)

    def literal(text: str) -> tuple[np.ndarray, np.ndarray]:
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        return np.broadcast_to(codes, (xs.size, codes.size)), np.ones((xs.size, codes.size), dtype=bool)

    parts = [literal(prefix), (cx, sx), literal(" "), (cy, sy), literal(suffix)]
    chars = np.concatenate([c for c, _ in parts], axis=1)
    shown = np.concatenate([m for _, m in parts], axis=1)
    return chars[shown].tobytes().decode("ascii")


def _changes(changes: Sequence[Change], x: Callable[[float], float], unit: str | None, metric: str | None) -> list[str]:
    """A red line per change point (dashed: provisional), labelled with its step (:func:`_step_label`)."""
    _, top, _, bottom = BOX
    out = []
    for change in changes:
        index, provisional = change[0], change[3]
        px = x(index - 0.5)
        dash = ' stroke-dasharray="5 3"' if provisional else ""
        out.append(
            f'<line class="change" x1="{_f(px)}" y1="{top}" x2="{_f(px)}" y2="{bottom}" stroke="#d62728" '
            f'stroke-width="1.5"{dash}/>'
        )
        label = _step_label(change, unit, metric)
        if label:
            out.append(text(px + 3, top - 6, label, anchor="start", size=11, extra=' fill="#d62728"'))
    return out


def _step_label(change: Change, unit: str | None, metric: str | None) -> str:
    """``+9.9%`` relative to a level before above 0; else the difference in the data's unit, ``-1.930 ms
    (difference)`` (the change's own when given, else the levels'): a percentage of a level at or below 0 is
    undefined (and flips sign below it), as history's table says; nothing when neither is known (a level
    before given as NaN)."""
    before, after = change[1], change[2]
    difference = change[4] if len(change) > 4 else math.nan
    if not math.isfinite(difference) and math.isfinite(before) and before <= 0.0:
        difference = after - before
    if math.isfinite(difference):
        scale = common_scale([difference], unit, metric, means=True)
        number = scale.number(difference)
        shown = f" {scale.unit}" if scale.unit else ""
        return f"{'' if number[:1] in '-+' else '+'}{number}{shown} (difference)"
    if before > 0.0 and math.isfinite(after / before):
        return f"{(after / before - 1) * 100:+.1f}%"
    return ""
