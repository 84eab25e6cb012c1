"""One formatter for numbers and units (after golang/perf's benchunit).

* :func:`tidy` maps a unit as inputs spell it (``ns/op``, ``KiB``, ``sec``)
  to a base unit (``s/op``, ``B``, ``s``) and the factor that gets there,
  and says its class: ``time`` (SI prefixes n, µ, m), ``bytes`` (binary
  prefixes Ki, Mi, Gi) or ``count`` (no prefix, thousands grouped).
* :func:`common_scale` gives a group of values (a table column, the two
  sides of a comparison) one prefix and one number of decimals: the value
  nearest zero gets four significant digits, the others as many as the
  decimals give.  So a column never mixes ``1.32 s`` and ``886.5 ms``.
* :data:`EXACT` is the scaler for JSON and CSV: full precision, no unit.
* :func:`format_change` prints a relative change with as many decimals as
  its confidence interval supports.

Everything here returns ASCII except the ``µ`` prefix; :func:`ascii_text`
folds that (and the few other non-ASCII marks renderers use) for a stream
that cannot encode it.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from abstat.fastdataclass import dataclass
from abstat.readers.unit_table import SIZE_B, TIME_NS

# unit as spelled -> factor to its base unit (s, B): the table of abstat.readers.unit_table
_TIME = {name: ns / 1e9 for name, ns in TIME_NS.items()}
_BYTES = {name: float(size) for name, size in SIZE_B.items()}
# metrics whose values are seconds when the input names no unit
TIME_METRICS = ("wall", "user", "sys", "system", "time", "elapsed")
# counts of clock ticks: durations, so their verdicts are faster/slower
CLOCK_UNITS = ("cycles", "cycle", "tsc", "ticks", "clocks")

_PREFIXES = {
    "time": ((1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")),
    "bytes": ((1024.0**4, "Ti"), (1024.0**3, "Gi"), (1024.0**2, "Mi"), (1024.0, "Ki"), (1.0, "")),
}
SIGNIFICANT = 4
_MAX_DECIMALS = 6
_EXACT_LIMIT = 1e15  # beyond it, digits of a grouped integer are noise: use an exponent


@dataclass(frozen=True)
class Tidy:
    """A unit reduced to its base: ``value * factor`` is in ``base``."""

    base: str  # "s", "B", "s/op", "B/s", "" (a count) or the unit as given
    factor: float
    kind: str  # "time", "bytes" or "count"
    prefix_at: int  # where the prefix goes in ``base`` (0: in front; -1: no prefix)


def tidy(unit: str | None, metric: str | None = None) -> Tidy:
    """The base unit of ``unit`` (``metric`` names seconds when ``unit`` is None)."""
    text = (unit or "").strip() or _unit_of_metric(metric)
    if text in ("", "count", "counts", "1"):
        return Tidy("", 1.0, "count", -1)
    numerator, slash, rest = text.partition("/")
    tail = slash + rest
    if numerator in _TIME and tail in ("", "/op", "/call", "/iter"):
        return Tidy("s" + tail, _TIME[numerator], "time", 0)
    if numerator in _BYTES:
        return Tidy("B" + tail, _BYTES[numerator], "bytes", 0)
    return Tidy(text, 1.0, "count", -1)


def _unit_of_metric(metric: str | None) -> str:
    """The unit a metric's name gives: seconds for the built-in times, else the unit a JSON field is named for
    (loop_ns, rss_bytes, elapsed-ms); "" for none."""
    if metric in TIME_METRICS:
        return "s"
    if not metric:
        return ""
    suffix = metric.replace("-", "_").rpartition("_")[2]
    if (
        "_" in metric.replace("-", "_") and (suffix in _TIME or suffix in _BYTES) and suffix not in ("B", "s")
    ):  # ops_s may be a rate
        return suffix
    return ""


def is_counted(unit: str | None) -> bool:
    """Whether ``unit`` names whole events (context switches, cycles...): values print as integers."""
    return (unit or "").strip() in ("count", "counts", *CLOCK_UNITS)


def is_time(unit: str | None, metric: str | None = None) -> bool:
    return tidy(unit, metric).kind == "time"


@dataclass(frozen=True)
class Scaler:
    """Formats values of one group: ``value`` (in the input unit) -> text."""

    factor: float  # input unit -> displayed unit
    decimals: int
    unit: str  # displayed unit, "" for a bare count
    group: bool = True  # thousands separators

    def number(self, value: float) -> str:
        """The scaled number without its unit."""
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return _non_finite(value)
        scaled = value * self.factor
        if not math.isfinite(scaled) or abs(scaled) >= _EXACT_LIMIT or self.decimals < 0:
            return f"{scaled:.{SIGNIFICANT}g}"
        text = f"{scaled:{',' if self.group else ''}.{self.decimals}f}"
        return "0" if text.lstrip("-").strip("0.,") == "" and scaled == 0 else text

    def __call__(self, value: float) -> str:
        text = self.number(value)
        return f"{text} {self.unit}" if self.unit else text


class _Exact(Scaler):
    """JSON and CSV: every digit (``repr``), no unit, no grouping."""

    def number(self, value: float) -> str:
        return repr(float(value)) if isinstance(value, float) else str(value)

    def __call__(self, value: float) -> str:
        return self.number(value)


EXACT: Scaler = _Exact(1.0, 0, "", False)


def _non_finite(value: object) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float):
        return "inf" if value > 0 else "-inf"
    return "-" if value is None else str(value)


def _decimals_for(smallest: float) -> int:
    """Decimals that give ``smallest`` (> 0, as printed) SIGNIFICANT digits."""
    digits = SIGNIFICANT - 1 - math.floor(math.log10(smallest))
    decimals = max(0, min(_MAX_DECIMALS, digits))
    # the printed form decides: 999.96 with 1 decimal is "1000.0", which has 5 digits
    if decimals and float(f"{smallest:.{decimals}f}") >= 10 ** (SIGNIFICANT - decimals):
        decimals -= 1
    return decimals


def _magnitudes(values: Iterable[float | None], factor: float) -> list[float]:
    """The absolute values in the base unit, leaving out None, zeros and what is not finite."""
    finite = [abs(v) * factor for v in values if isinstance(v, (int, float)) and math.isfinite(v) and v != 0]
    return [v for v in finite if math.isfinite(v) and v != 0]


def common_scale(
    values: Iterable[float | None], unit: str | None = None, metric: str | None = None, *, means: bool = False
) -> Scaler:
    """One scaler for all ``values`` (in ``unit``): the prefix that puts the
    non-zero value nearest zero at 1 or more, and enough decimals for it.
    ``means``: some values are means (a change computed from them), so counts
    get decimals too: 2.4 and 2.2 context switches are not both "2" beside -8%."""
    info = tidy(unit, metric)
    finite = _magnitudes(values, info.factor)
    # rounded as it will print, so 999.96 ms is "1.000 s", not "1,000 ms"
    smallest = float(f"{min(finite):.{SIGNIFICANT}g}") if finite else 1.0
    prefix, scale = _prefix(info.kind, smallest)
    integral = all(float(v).is_integer() for v in finite)
    if info.kind == "count" and (integral or (is_counted(unit) and not means)):
        # counts are exact: 1,982 cycles, not 1,982.0; and a median between two counts (18.5 context
        # switches) prints as a count too (18), every value of the table alike
        decimals = 0
    else:
        decimals = _decimals_at(smallest / scale, bool(finite))
    shown = prefix + info.base if info.prefix_at == 0 else info.base
    return Scaler(info.factor / scale, decimals, shown, group=True)


def _prefix(kind: str, smallest: float) -> tuple[str, float]:
    """The largest prefix of ``kind`` that puts ``smallest`` at 1 or more (the last one if none does)."""
    prefix, scale = "", 1.0
    if kind in _PREFIXES:
        for scale, prefix in _PREFIXES[kind]:
            if smallest >= scale * 0.9999995:
                break
    return prefix, scale


def _decimals_at(scaled: float, any_values: bool) -> int:
    """The decimals a value printed as ``scaled`` needs; -1 (an exponent) far below the smallest prefix."""
    decimals = _decimals_for(scaled) if any_values else 0
    if scaled < 10 ** (SIGNIFICANT - 1 - _MAX_DECIMALS):
        decimals = -1  # far below the smallest prefix: an exponent, not 0.000000
    return decimals


def format_value(value: float | None, unit: str | None = None, metric: str | None = None) -> str:
    """One value on its own scale: ``0.000435`` s -> ``435.0 µs``."""
    if value is None:
        return "-"
    return common_scale([value], unit, metric)(value)


# --------------------------------------------------------------------------
# relative changes


def change_decimals(delta: float, ci: Sequence[float] | None) -> int:
    """Decimals a change supports: two significant digits of its interval's
    width (one decimal without an interval), at most 4."""
    if ci is None or len(ci) != 2 or not all(math.isfinite(x) for x in ci):
        return 1
    width = abs(ci[1] - ci[0])
    if width == 0:
        return 1
    return max(0, min(4, 1 - math.floor(math.log10(width))))


def format_pct(value: float, decimals: int) -> str:
    if not math.isfinite(value):
        return "n/a" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
    if abs(value) >= 1e6:  # a change of 10^4-fold or more: three significant digits, not 200 (attack19 L7)
        return f"{value:+.3g}"
    text = f"{value:+.{decimals}f}"
    if float(text) == 0:
        text = f"{0.0:.{decimals}f}"  # no "-0.0" nor "+0.0"
        text = "+" + text if value > 0 else ("-" + text if value < 0 else text)
    return text


def format_size_pct(value: float | None) -> str:
    """A size in percent (a spread, a detectable change), one format at every magnitude: two significant
    digits below 10 (``3.6%``, ``0.052%``), whole percents from 10 on (``52%``, ``2,205%``); ``n/a``
    for None or NaN."""
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "unbounded"
    if abs(value) < 9.95:
        return f"{value:.2g}%"
    return f"{value:,.0f}%"


def format_p(value: float | None, digits: int = 2) -> str:
    """A p-value as a reader can use it: below 1e-16 (double precision's
    resolution near 1, and far past any sampling model's accuracy) it is
    shown as ``<1e-16``; NaN (cannot judge) as ``-``."""
    if value is None or math.isnan(value):
        return "-"
    if value < 1e-16:
        return "<1e-16"
    return f"{value:.{digits}g}"


def format_bound(value: float, decimals: int) -> str:
    """An interval end as :func:`format_pct` writes it, except one that rounds to 0 without being 0: it
    gets the decimals that show its first digit (``-0.03``, ``+4e-06``), never ``-0.0`` nor ``+0.0``, nor a
    bare ``0.0`` that would hide on which side of 0 the interval ends (newcomer22's item 11)."""
    text = format_pct(value, decimals)
    if value == 0 or not math.isfinite(value) or float(text) != 0:
        return text
    first = -math.floor(math.log10(abs(value)))  # the decimal of the first significant digit
    return f"{value:+.{first}f}" if first <= 6 else f"{value:+.0e}"


OPEN_AT_ZERO = 1e-200  # an interval end closer to 0 than this is 0 excluded (abstat.stats.hodges_lehmann.OPEN)


def format_change(delta: float, ci: Sequence[float] | None) -> str:
    """``-13.6% [-14.2, -13.1]``: decimals as the interval supports; an end open at 0 is written so,
    ``+1.0% (0, +2.3]``: the accepted changes come as close to 0 as one likes, but 0 is rejected."""
    if not math.isfinite(delta):
        return "n/a"
    d = change_decimals(delta, ci)
    text = f"{format_pct(delta, d)}%"
    if ci is not None and len(ci) == 2 and not any(math.isnan(x) for x in ci):  # NaN: no interval at all
        if any(0.0 < abs(x) < OPEN_AT_ZERO for x in ci):  # an end open at 0 (the test rejects 0 itself)
            low, high = (("0" if 0.0 < abs(x) < OPEN_AT_ZERO else format_bound(x, d)) for x in ci)
            text += f" {'(' if low == '0' else '['}{low}, {high}{')' if high == '0' else ']'}"
        elif all(math.isfinite(x) for x in ci):
            text += f" [{format_bound(ci[0], d)}, {format_bound(ci[1], d)}]"
        else:
            text += f" [{format_bound(ci[0], d)}, {format_bound(ci[1], d)}] (unbounded)"
    return text


# --------------------------------------------------------------------------
# verdict words that fit the metric


def verdict_word(
    verdict: str, delta_pct: float, unit: str | None = None, metric: str | None = None, higher_is_better: bool = False
) -> str:
    """``faster``/``slower`` for times; ``lower``/``higher`` with ``(better)`` or
    ``(worse)`` for counts, sizes and throughputs; other verdicts unchanged."""
    if verdict not in ("faster", "slower") or (unit is None and metric is None):
        return verdict  # unknown unit: the statistical verdict as it is
    info = tidy(unit, metric)
    if (info.kind == "time" and "/" not in info.base or _is_clock(unit, metric)) and not higher_is_better:
        return verdict
    direction = "lower" if delta_pct < 0 else "higher"
    return f"{direction} (better)" if verdict == "faster" else f"{direction} (worse)"


def _is_clock(unit: str | None, metric: str | None) -> bool:
    """Whether the unit (or, without one, the metric) is clock cycles, which a faster run has fewer of."""
    return (unit or "").lower() in CLOCK_UNITS or (not unit and (metric or "").lower() in CLOCK_UNITS)


# --------------------------------------------------------------------------
# streams that cannot encode everything

_ASCII_FOLD = str.maketrans(
    {
        "µ": "u",
        "μ": "u",
        "→": "->",
        "−": "-",
        "±": "+-",
        "…": "...",
        "≤": "<=",
        "≥": ">=",
        "×": "x",
        "—": "--",
        "–": "-",
    }
)


def ascii_text(text: str) -> str:
    """``text`` with our own non-ASCII marks spelt in ASCII; anything else
    that remains non-ASCII becomes a ``\\x``/``\\u`` escape."""
    folded = text.translate(_ASCII_FOLD)
    return folded.encode("ascii", "backslashreplace").decode("ascii")


def fits(stream: object, text: str) -> str:
    """``text`` as ``stream`` can encode it (ASCII fallback for e.g. PYTHONIOENCODING=ascii)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return ascii_text(text)
    return text


def in_unit_of(scale: Scaler, values: Iterable[float | None]) -> Scaler:
    """``scale``'s unit and prefix, with the decimals that give the smallest non-zero of ``values``
    four significant digits (a table's stddev beside its medians: one unit, its own digits)."""
    finite = _magnitudes(values, scale.factor)
    if not finite or scale.decimals < 0:
        return scale
    return Scaler(
        scale.factor,
        max(scale.decimals, _decimals_for(float(f"{min(finite):.{SIGNIFICANT}g}"))),
        scale.unit,
        scale.group,
    )
