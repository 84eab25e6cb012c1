"""The text ``ministat`` prints, reproduced byte for byte.

:func:`render_report` takes the data sets (values in input order) and
returns the exact output: names, the ASCII plot, the summary table and
Student's t comparisons of every data set against the first one.  The two
dialects differ in the statistics (see :mod:`abstat.stats.descriptive`) and
in the relative confidence interval (see :mod:`abstat.stats.student`).

The plot follows ministat's integer arithmetic exactly, including its
quirks: columns are ``(int)((x - x0) / dx)``, the plot's height is set by
the *last* data set drawn (taller columns of earlier sets are cut), rows
grown later are cleared, and the ``|___M___A___|`` bars are overwritten in
drawing order.  Pure Python: this module is on the fast start-up path.
"""

import math

from abstat.ministat.dataset import INT_MIN, SampleSet, c_int, sample_set
from abstat.stats.descriptive import c_div
from abstat.stats.student import CONFIDENCE_LEVELS, pooled_t

SYMBOLS = " x+*%#@O"
MAX_DATASETS = 7
DIALECTS = ("classic", "freebsd")


def format_g(value: float, spec: str = "%g", signed_nan: bool = True) -> str:
    """printf-style ``%g`` formatting.  NaN is spelled as the C library does:
    glibc writes ``-nan`` when the sign bit is set (*signed_nan*), FreeBSD's
    libc always writes ``nan``."""
    if value != value:
        text = "-nan" if signed_nan and math.copysign(1.0, value) < 0 else "nan"
        width = spec[1:].split(".")[0]
        return text.rjust(int(width)) if width else text
    return spec % value


def _vitals(symbol: str, sample: SampleSet, signed_nan: bool) -> str:
    fields = (sample.min, sample.max, sample.median, sample.mean, sample.stddev)
    return "%c %3d %s\n" % (symbol, sample.n, " ".join(format_g(value, "%13.8g", signed_nan) for value in fields))


def _relative(candidate: SampleSet, baseline: SampleSet, confidence: float, dialect: str) -> str:
    result = pooled_t(
        baseline.n,
        baseline.mean,
        baseline.stddev,
        candidate.n,
        candidate.mean,
        candidate.stddev,
        confidence,
        var1=baseline.variance,
        var2=candidate.variance,
    )
    level = "%.1f" % result.confidence
    if not result.significant:
        return f"No difference proven at {level}% confidence\n"
    relative_half = result.relative_half_width_pct_freebsd if dialect == "freebsd" else result.relative_half_width_pct
    signed = dialect != "freebsd"
    return (
        f"Difference at {level}% confidence\n"
        f"\t{format_g(result.difference, '%g', signed)} +/- {format_g(result.half_width, '%g', signed)}\n"
        f"\t{format_g(result.relative_pct, '%g', signed)}% +/- {format_g(relative_half, '%g', signed)}%\n"
        f"\t(Student's t, pooled s = {format_g(result.pooled_sd, '%g', signed)})\n"
    )


class PlotError(ValueError):
    """A plot ministat cannot draw (it crashes): width 1, overflowing data."""


_OVERFLOW = "cannot draw the plot: the values or their sums overflow a double (ministat crashes here); use -A"


def render_plot(samples: list[SampleSet], width: int, separate_bars: bool = False) -> str:
    """ministat's ASCII plot of *samples* (its SetupPlot/DimPlot/PlotSet/DumpPlot)."""
    return "".join(plot_lines(samples, width, separate_bars))


def plot_lines(samples: list[SampleSet], width: int, separate_bars: bool = False):
    """The plot as an iterator of text pieces.  Everything is computed (and
    :class:`PlotError` raised) before the iterator is returned."""
    span, dx, x0 = _scale(samples, width)
    if span == 0:
        return iter(["[no plot, span is zero width]\n"])
    if width == 1:
        raise PlotError("a plot width of 1 cannot be drawn (ministat crashes on it); use -w 2 or more, or -A")
    if width < 0:
        raise PlotError(f"plot width {width} is negative")
    if span - span != 0 or dx - dx != 0:
        raise PlotError(_OVERFLOW)
    body, bars = _plot_grid(samples, width, x0, dx, separate_bars)
    return _dump(body, bars, width)


def _plot_grid(
    samples: list[SampleSet], width: int, x0: float, dx: float, separate_bars: bool
) -> tuple[list[tuple[str, int]], list[bytearray | None]]:
    """ministat's PlotSet for every set: the grid's rows and the bars (one, or one per set)."""
    bars: list[bytearray | None] = [None] * len(samples)
    # Each run of points is an entry [column, symbol bit, top row]: rows 1..top
    # of the column hold the bit.  ministat keeps one grid of max-run + 1 rows
    # and, whenever a later data set needs more rows, clears the rows above
    # the previous height: that truncates every earlier entry.
    entries: list[list[int]] = []
    history: list[tuple[int, list[tuple[int, int]]]] = []
    outside = False
    height = 0
    for index, sample in enumerate(samples):
        val = index + 1
        bar = _bar(bars, index if separate_bars else 0, width)
        runs = sample.column_counts(x0, dx)
        history.append((val, runs))
        outside = outside or _off_the_plot(runs, width)
        rows = max([1, *(count for _, count in runs)]) + 1
        if rows > height:
            _clear_above(entries, height)
        height = rows
        entries.extend([column, val, count] for column, count in runs)
        _draw_bar(bar, sample, x0, dx, width)
    if outside:
        return _grid_rows_flat(history, width), bars
    return _grid_rows(entries, height, width), bars


def _off_the_plot(runs: list[tuple[int, int]], width: int) -> bool:
    """A column outside the plot: the grid is then drawn as C's flat array, where it spills over."""
    return any(not 0 <= column < width for column, _ in runs)


def _bar(bars: list[bytearray | None], index: int, width: int) -> bytearray:
    """The bar at *index*, made empty when it is the first drawn there."""
    bar = bars[index]
    if bar is None:
        bar = bars[index] = bytearray(width)
    return bar


def _clear_above(entries: list[list[int]], height: int) -> None:
    """The grid grows: rows from the previous *height* up are cleared, so every earlier entry is cut below it."""
    for entry in entries:
        if entry[2] >= height:
            entry[2] = height - 1


def _scale(samples: list[SampleSet], width: int) -> tuple[float, float, float]:
    """ministat's DimPlot: the span of the min, max and mean +/- stddev of every set, the width of a
    column (dx) and the left edge (x0), computed as it does, point by point."""
    lo = 999e99
    hi = -999e99
    span = 0.0
    dx = 0.0
    x0 = 0.0
    for sample in samples:
        for point in (sample.min, sample.max, sample.mean - sample.stddev, sample.mean + sample.stddev):
            if point < lo:
                lo = point
            if point > hi:
                hi = point
            span = hi - lo
            dx = c_div(span, width - 1.0)
            x0 = lo - 0.5 * dx
    return span, dx, x0


def _draw_bar(bar: bytearray, sample: SampleSet, x0: float, dx: float, width: int) -> None:
    mean = sample.mean
    sd = sample.stddev
    if sd == sd:
        _draw_spread(bar, mean, sd, x0, dx, width)
    column = c_int(c_div(sample.median - x0, dx))
    if 0 <= column < width:
        bar[column] = 77  # "M"
    column = c_int(c_div(mean - x0, dx))
    if column == INT_MIN:
        raise PlotError(_OVERFLOW)
    if 0 <= column < width:
        bar[column] = 65  # "A"


def _draw_spread(bar: bytearray, mean: float, sd: float, x0: float, dx: float, width: int) -> None:
    """``|___|`` from mean - sd to mean + sd: the ends, and ``_`` where nothing is drawn yet."""
    left = c_int(c_div((mean - sd) - x0, dx))
    right = c_int(c_div((mean + sd) - x0, dx))
    if 0 <= right < width:
        bar[right] = 124  # "|"
    if 0 <= left < width:
        bar[left] = 124
    for i in range(max(left + 1, 0), min(right, width)):
        if bar[i] == 0:
            bar[i] = 95  # "_"


def _row_text(row) -> str:
    return "|" + "".join(SYMBOLS[k] if k < 8 else "[%02x]" % k for k in row) + "|\n"


def _grid_rows(entries: list[list[int]], height: int, width: int):
    """Rows of the grid, top first, as (text, repeat) pairs: rows between two
    entry tops are identical, so a million-row plot costs a few strings."""
    ordered = sorted(entries, key=lambda entry: entry[2], reverse=True)
    row = [0] * width
    position = 0
    current = height - 1
    pieces = []
    while current >= 1:
        while position < len(ordered) and ordered[position][2] >= current:
            column, val, _top = ordered[position]
            row[column] |= val
            position += 1
        following = ordered[position][2] if position < len(ordered) else 0
        following = max(following, 0)
        pieces.append((_row_text(row), current - following))
        current = following
    return pieces


def _grid_rows_flat(history: list[tuple[int, list[tuple[int, int]]]], width: int):
    """The grid as ministat's flat byte array (used when a column falls
    outside the plot and, as in C, spills into the neighbouring row)."""
    data = bytearray()
    height = 0
    for val, runs in history:
        tallest = 1
        for _column, count in runs:
            if count > tallest:
                tallest = count
        rows = tallest + 1
        if rows > height:
            _clear_rows(data, height, rows, width)
        height = rows
        _mark_runs(data, runs, val, width)
    return [(_row_text(data[(height - i) * width : (height - i + 1) * width]), 1) for i in range(1, height)]


def _clear_rows(data: bytearray, height: int, rows: int, width: int) -> None:
    """The grid grows from ``height`` to ``rows`` rows: the array extended, and the rows from ``height`` up
    cleared."""
    needed = width * rows
    if len(data) < needed:
        data.extend(bytes(needed - len(data)))
    data[height * width : rows * width] = bytes((rows - height) * width)


def _mark_runs(data: bytearray, runs: list[tuple[int, int]], val: int, width: int) -> None:
    """A data set's bit in rows 1..count of each of its columns; a column outside the plot spills into the
    neighbouring row, as in C, and nothing is written outside the array."""
    size = len(data)
    for column, count in runs:
        for j in range(1, count + 1):
            offset = j * width + column
            if 0 <= offset < size:
                data[offset] |= val


def _dump(body, bars, width: int):
    border = "+" + "-" * width + "+\n"
    yield border
    for text, repeat in body:
        while repeat > 0:
            batch = min(repeat, max(1, (1 << 20) // len(text)))
            yield text * batch
            repeat -= batch
    for bar in bars:
        if bar is not None:
            yield "|" + bar.replace(b"\0", b" ").decode("latin-1") + "|\n"
    yield border


def render_report(
    datasets: "list[SampleSet]",
    *,
    names: "list[str]",
    confidence: float = 95.0,
    width: int = 74,
    plot: bool = True,
    stats: bool = True,
    dialect: str = "classic",
    separate_bars: bool = False,
    quiet: bool = False,
) -> str:
    """Return exactly what ``ministat`` prints for *datasets*.

    *datasets*: up to seven sequences of numbers (input order) or prepared
    :class:`SampleSet` objects; *names* label them.  ``plot=False`` is
    ministat's ``-A`` (no plot), ``stats=False`` its ``-n`` (summary table
    only: no plot, no comparison), ``separate_bars`` its ``-s``, ``quiet``
    FreeBSD's ``-q`` (no names, no table header).  *confidence* is one of
    80, 90, 95, 98, 99, 99.5.  Raises ValueError for bad arguments and
    :class:`PlotError` where ministat crashes (a plot width of 1, overflowing values).
    """
    _check_choices(dialect, confidence)
    samples = [item if isinstance(item, SampleSet) else sample_set(item, dialect) for item in datasets]
    names = list(names)
    if not samples or len(samples) > MAX_DATASETS:
        raise ValueError(f"ministat compares 1 to {MAX_DATASETS} data sets, not {len(samples)}")
    if len(names) != len(samples):
        raise ValueError("one name per data set is needed")
    return "".join(iter_report(samples, names, confidence, width, plot, stats, dialect, separate_bars, quiet))


def _check_choices(dialect: str, confidence: float) -> None:
    """A dialect and a confidence level ministat has."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown ministat dialect {dialect!r}; use classic or freebsd")
    if float(confidence) not in CONFIDENCE_LEVELS:
        raise ValueError(f"no support for confidence level {confidence}")


def iter_report(
    samples,
    names,
    confidence=95.0,
    width=74,
    plot=True,
    stats=True,
    dialect="classic",
    separate_bars=False,
    quiet=False,
):
    """:func:`render_report` as an iterator of text pieces, for streaming a
    very tall plot.  *samples* must be :class:`SampleSet` objects; errors are
    raised before the first piece."""
    lines = plot_lines(samples, width, separate_bars) if stats and plot else iter(())
    return _iter_report(samples, names, confidence, lines, stats, dialect, quiet)


def _iter_report(samples, names, confidence, lines, stats, dialect, quiet):
    out: list[str] = []
    if not quiet:
        for index, name in enumerate(names):
            out.append(f"{SYMBOLS[index + 1]} {name}\n")
    yield "".join(out)
    yield from lines
    out = []
    if not quiet:
        out.append("    N           Min           Max        Median           Avg        Stddev\n")
    signed_nan = dialect != "freebsd"
    out.append(_vitals(SYMBOLS[1], samples[0], signed_nan))
    for index in range(1, len(samples)):
        out.append(_vitals(SYMBOLS[index + 1], samples[index], signed_nan))
        if stats:
            out.append(_relative(samples[index], samples[0], confidence, dialect))
    yield "".join(out)
