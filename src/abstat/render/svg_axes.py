"""Axes for the SVG figures: the range the bulk of the data sets, and ticks in one unit.

:func:`choose_axis` looks at every series to be drawn on one axis and picks

* ``linear`` over the whole range when nothing is far from the bulk;
* ``clipped`` (linear over the bulk: each series' whiskers at 1.5 IQR, widened to its 10th and
  90th percentiles) when samples far outside it would squeeze the bulk into a sliver; the samples
  beyond are drawn at the edges and counted (:meth:`Axis.clip_note` says so in words);
* ``log`` when the data are positive and the bulk itself spans more than a factor of four
  (right-skewed timings spanning decades).

Tick labels go through :mod:`abstat.render.units` (one prefix per axis, the unit written once in
the axis title) with as few decimals as tell the ticks apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from abstat.render.units import Scaler, common_scale, format_value

_LOG10_MAX = 308.25  # log10 of a finite float: 10**308.25 < sys.float_info.max

LOG_BULK_FACTOR = 4.0  # bulk spanning more than this factor (and data > 0): log axis
CLIP_GAIN = 1.5  # clip when the whole range is this many times the bulk's


def quantile(ordered: Sequence[float], q: float) -> float:
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction if fraction else ordered[low]


def whiskers(ordered: Sequence[float]) -> tuple[float, float]:
    """The most extreme samples within 1.5 IQR of the quartiles (Tukey's whiskers)."""
    q1, q3 = quantile(ordered, 0.25), quantile(ordered, 0.75)
    iqr = q3 / 2 - q1 / 2  # half, against overflow
    low_fence, high_fence = q1 - 3 * iqr, q3 + 3 * iqr
    low = next((v for v in ordered if v >= low_fence), ordered[0])
    high = next((v for v in reversed(ordered) if v <= high_fence), ordered[-1])
    return low, high


def bulk(ordered: Sequence[float]) -> tuple[float, float]:
    """Where a series' bulk lies: its whiskers, widened to its 10th and 90th percentiles (heavily
    tied data have a zero IQR; up to a tenth of far outliers still leave the bulk alone)."""
    low, high = whiskers(ordered)
    return min(low, quantile(ordered, 0.1)), max(high, quantile(ordered, 0.9))


@dataclass
class Axis:
    """Maps data values to pixels (clamped to the axis) without overflowing on extreme data."""

    kind: str  # linear, clipped or log
    low: float
    high: float
    start: float
    end: float
    data_low: float = 0.0
    data_high: float = 0.0
    beyond: list[tuple[int, int]] = field(default_factory=list)  # per series: (below, above)
    extremes: list[tuple[float, float]] = field(default_factory=list)  # per series: (min, max)
    bulk: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        low, high = self.low, self.high
        if self.kind == "log":
            low, high = math.log10(low), math.log10(high)
        if not high > low:
            pad = abs(low) * 0.05 or 1.0
            low, high = low - pad, high + pad
            if not high > low:  # pad lost to rounding (|low| near the float limit)
                low, high = low * (1 - 1e-9 * math.copysign(1, low)), high * (1 + 1e-9 * math.copysign(1, high))
        pad = (high / 2 - low / 2) * 0.06  # 3% of the span on each side
        if math.isfinite(low - pad) and math.isfinite(high + pad):
            low, high = low - pad, high + pad
        self._low, self._high = low, high
        self._half_span = high / 2 - low / 2
        if self.kind == "log":  # the padded ends of data near the float limit stay finite (attack19 L7: 1e300)
            self.low, self.high = 10 ** min(low, _LOG10_MAX), 10 ** min(high, _LOG10_MAX)
        else:
            self.low, self.high = low, high

    def inside(self, value: float) -> bool:
        return self.low <= value <= self.high

    def __call__(self, value: float) -> float:
        if self.kind == "log":
            value = math.log10(value) if value > 0 else self._low
        value = min(max(value, self._low), self._high)
        return self.start + (value / 2 - self._low / 2) / self._half_span * (self.end - self.start)

    def positions(self, values: Sequence[float]) -> list[float]:
        """``[self(v) for v in values]`` of finite values, at once: numpy's elementwise arithmetic, in
        the same order, is Python's float arithmetic (the same floats); a log axis value by value
        (numpy's log10 may differ from math's in the last place)."""
        if self.kind == "log" or not values:
            return [self(v) for v in values]
        return self.position_array(values).tolist()

    def position_array(self, values: Any) -> Any:
        """:meth:`positions` of finite values (a sequence or an array) as a numpy array."""
        import numpy

        if self.kind == "log":
            return numpy.array([self(v) for v in numpy.asarray(values, dtype=float).tolist()], dtype=float)
        clamped = numpy.minimum(numpy.maximum(numpy.asarray(values, dtype=float), self._low), self._high)
        return self.start + (clamped / 2 - self._low / 2) / self._half_span * (self.end - self.start)

    def ticks(self, count: int = 5) -> list[float]:
        if self.kind == "log":
            return _log_ticks(self.low, self.high)
        step = _tick_step(self._half_span, count)
        if step is None:
            return [self.low, self.high]
        first = math.ceil(self.low / step)
        last = math.floor(self.high / step)
        if not (math.isfinite(first) and math.isfinite(last)) or last - first > 4 * count:
            return [self.low, self.high]
        return [k * step for k in range(int(first), int(last) + 1)]

    def tick_labels(self, ticks: Sequence[float], unit: str | None, metric: str | None) -> tuple[list[str], str]:
        """The ticks' numbers in one unit, and that unit (for the axis title)."""
        scale = tick_scale(ticks, unit, metric)
        if self.kind == "log":
            return [_fewest(scale, [t])[0] for t in ticks], scale.unit
        return _fewest(scale, ticks), scale.unit

    def clip_note(self, names: Sequence[str], unit: str | None, metric: str | None) -> str:
        """What the axis leaves out, in words ('' when nothing)."""

        def say(value: float) -> str:
            return format_value(value, unit, metric)

        if self.kind == "log":
            return (
                f"logarithmic axis: the samples span {say(self.data_low)} to {say(self.data_high)}, "
                "their bulk more than a factor of four"
            )
        if self.kind != "clipped":
            return ""
        parts = _beyond_parts(names, self.beyond, self.extremes, say)
        return (
            f"the axis shows the bulk of the samples ({say(self.bulk[0])} to {say(self.bulk[1])}); "
            "the samples beyond it are drawn at its edges and counted: " + "; ".join(parts)
        )


def _tick_step(half_span: float, count: int) -> float | None:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``count`` ticks over the span; None for a
    span of no finite positive width."""
    raw = half_span * 2 / count if math.isfinite(half_span * 2) else half_span / count * 2
    if not math.isfinite(raw) or raw <= 0:
        return None
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _beyond_parts(
    names: Sequence[str],
    beyond: Sequence[tuple[int, int]],
    extremes: Sequence[tuple[float, float]],
    say: Callable[[float], str],
) -> list[str]:
    """Per series with samples beyond a clipped axis: how many below and above, down and up to where."""
    parts = []
    for name, (below, above), (lowest, highest) in zip(names, beyond, extremes):
        said = [
            f"{below} below (down to {say(lowest)})" if below else "",
            f"{above} above (up to {say(highest)})" if above else "",
        ]
        if below or above:
            parts.append(f"{name} {' and '.join(s for s in said if s)}")
    return parts


def choose_axis(series: Sequence[Sequence[float]], start: float, end: float) -> Axis:
    """The axis for ``series`` (each sorted, finite, non-empty) drawn from ``start`` to ``end`` px."""
    data_low = min(s[0] for s in series)
    data_high = max(s[-1] for s in series)
    kind, low, high = _kind_and_range(series, data_low, data_high)
    axis = Axis(kind, low, high, start, end, data_low, data_high, bulk=(low, high))
    axis.extremes = [(s[0], s[-1]) for s in series]
    if kind == "clipped":
        axis.beyond = [(sum(1 for v in s if v < axis.low), sum(1 for v in s if v > axis.high)) for s in series]
    return axis


def _kind_and_range(series: Sequence[Sequence[float]], data_low: float, data_high: float) -> tuple[str, float, float]:
    """Log when the bulk spans more than ``LOG_BULK_FACTOR``; clipped to the bulk when the whole data
    would squeeze it by more than ``CLIP_GAIN``; else linear over all the data."""
    bulks = [bulk(s) for s in series]
    low, high = min(b[0] for b in bulks), max(b[1] for b in bulks)
    span_full, span_bulk = data_high / 2 - data_low / 2, high / 2 - low / 2
    if data_low > 0 and high / low > LOG_BULK_FACTOR and math.isfinite(data_high / data_low):
        return "log", data_low, data_high
    if span_bulk > 0 and span_full > CLIP_GAIN * span_bulk:
        return "clipped", low, high
    return "linear", data_low, data_high


def tick_scale(ticks: Sequence[float], unit: str | None, metric: str | None) -> Scaler:
    """One prefix for an axis: the one the largest tick reads best in."""
    largest = max((abs(t) for t in ticks if math.isfinite(t)), default=1.0)
    return common_scale([largest], unit, metric)


def _fewest(scale: Scaler, ticks: Sequence[float]) -> list[str]:
    """The ticks with the fewest decimals that print each exactly (to 1e-9 of the step)."""
    scaled = [t * scale.factor for t in ticks]
    if not all(math.isfinite(v) for v in scaled):
        return [scale.number(t) for t in ticks]
    decimals = _exact_decimals(scaled)
    if abs(max(scaled, key=abs)) >= 1e15:
        return [scale.number(t) for t in ticks]
    return [Scaler(scale.factor, decimals, scale.unit, scale.group).number(t) for t in ticks]


def _exact_decimals(scaled: Sequence[float]) -> int:
    """The fewest decimals (at most 6) that print every value exactly, to 1e-6 of the smallest step."""
    step = min((abs(b - a) for a, b in zip(scaled, scaled[1:]) if b != a), default=abs(scaled[0]) or 1.0)
    for decimals in range(0, 6):
        if all(abs(round(v, decimals) - v) <= step * 1e-6 for v in scaled):
            return decimals
    return 6


def _log_ticks(low: float, high: float) -> list[float]:
    first, last = math.floor(math.log10(low)), min(math.ceil(math.log10(high)), 308)  # 10.0**309 overflows
    for mantissas in ((1,), (1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [m * 10.0**k for k in range(first, last + 1) for m in mantissas]
        ticks = [t for t in ticks if low <= t <= high]
        if len(ticks) >= 3:
            return ticks if len(ticks) <= 12 else ticks[:: math.ceil(len(ticks) / 12)]
    return [low, high]
