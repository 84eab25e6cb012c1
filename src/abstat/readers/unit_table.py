"""The fixed table of units that convert: time (ns, µs, ms, s) and sizes (B, KiB, MiB..., kB, MB...).

Each unit is an exact whole number of the finest unit of its kind (nanoseconds, bytes), so a
conversion to the finer of two units multiplies by a whole number.  A unit with a tail (``ns/op``,
``MiB/s``) converts only to a unit with the same tail.  Anything else (cycles, counts, ops, a unit
not listed) never converts: a metric stored in two such units stays two.
"""

from __future__ import annotations

from collections.abc import Iterable

# unit as spelled -> nanoseconds
TIME_NS = {
    "s": 10**9,
    "sec": 10**9,
    "secs": 10**9,
    "second": 10**9,
    "seconds": 10**9,
    "ms": 10**6,
    "msec": 10**6,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "usec": 10**3,
    "ns": 1,
    "nsec": 1,
}
# unit as spelled -> bytes
SIZE_B = {
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}
_TAILS = {"time": ("", "/op", "/call", "/iter"), "bytes": ("", "/s", "/op")}


def unit_size(unit: str | None) -> tuple[str, int] | None:
    """(what the unit measures, e.g. ``time/op``; its size in ns or B), or None: it never converts."""
    numerator, slash, rest = (unit or "").strip().partition("/")
    tail = slash + rest
    for kind, table in (("time", TIME_NS), ("bytes", SIZE_B)):
        if numerator in table and tail in _TAILS[kind]:
            return kind + tail, table[numerator]
    return None


def factor(unit: str | None, to: str | None) -> float | None:
    """What takes a value in ``unit`` to ``to`` (exact when ``to`` is the finer), None when they do not convert."""
    source, target = unit_size(unit), unit_size(to)
    if source is None or target is None or source[0] != target[0]:
        return None
    return source[1] / target[1]  # whole numbers: Python divides them correctly rounded


def convertible_groups(units: Iterable[str | None]) -> list[tuple[str, list[str]]]:
    """The units (distinct) that convert to one another, two or more of one kind: (the finest of
    them, where the others go; all of them, in the order given) per kind."""
    kinds: dict[str, list[str]] = {}
    for unit in dict.fromkeys(units):
        size = unit_size(unit)
        if size is not None and unit is not None:
            kinds.setdefault(size[0], []).append(unit)
    return [(min(members, key=lambda u: (_size(u), u)), members) for members in kinds.values() if len(members) > 1]


def converted(values: list[float], unit: str, target: str) -> list[float]:
    """``values`` in ``unit`` as ``target`` (the list itself when the units are one; ValueError when they do
    not convert)."""
    scale = factor(unit, target)
    if scale is None:
        raise ValueError(f"{unit} does not convert to {target}")
    return values if scale == 1.0 else [value * scale for value in values]


def conversion_note(metric: str, units: Iterable[str], target: str) -> str:
    """The note a metric converted to one unit carries (every output that shows it says so)."""
    listed = ", ".join(sorted(units, key=lambda u: (_size(u), u)))
    return (
        f"{metric}: stored in {listed}; all shown in {target} (converted; the store keeps each sample in its own unit)"
    )


def _size(unit: str) -> int:
    size = unit_size(unit)
    return size[1] if size else 0
