"""Units before a comparison: every command compares values in one unit.

- Values whose units are known (a stored metric's, a peer tool's, ``--unit``)
  are converted to the baseline's unit when the units measure the same
  thing (ns and µs; KiB and MB): ``12,000 ns`` against ``12.5 µs`` is a
  +4.2% change, not -99.9%.
- Units that do not convert (seconds and bytes; ns and a count) are refused
  in one line naming both inputs.
- Plain files carry no unit: when their centres are 100 times or more
  apart, the comparison gets a ``scales-differ`` warning (different units,
  or a different benchmark?) and ``--unit`` names the unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from abstat.errors import UsageError
from abstat.fastdataclass import dataclass
from abstat.render.units import tidy
from abstat.stats.warnings import StatWarning

SCALE_WARNING = 100.0


@dataclass
class Side:
    """One input: its name, its runs of values (converted in place) and its unit (None: not known)."""

    name: str
    runs: list[list[float]] | None
    unit: str | None


def conversion(unit: str | None, to: str | None, metric: str | None = None) -> float | None:
    """The factor that takes a value in ``unit`` to ``to`` (1.0 when equal), or None when they do not
    convert (different kinds or bases)."""
    if (unit or "") == (to or ""):
        return 1.0
    source, target = tidy(unit, metric), tidy(to, metric)
    if source.base != target.base:
        return None
    return source.factor / target.factor


def align(sides: Sequence[Side], metric: str | None = None) -> tuple[str | None, list[StatWarning]]:
    """Convert every side whose unit is known to the first known unit (the baseline's when it has one);
    refuse units that do not convert (UsageError, one line); warn when sides of unknown unit lie 100x
    or more apart from the baseline.  Returns the unit the values are shown in, the baseline's (``sides[0]``;
    None when it has none: a candidate's unit is not printed beside a unitless baseline's values, attack23
    #10b; :func:`unshown_units` says so), and the warnings."""
    known = [side for side in sides if side.unit]
    for side in known[1:]:
        _convert(side, known[0], metric)
    found = _scale_warnings(sides) if not known or len(known) < len(sides) else []
    return (sides[0].unit if sides else None), found


def unshown_units(sides: Sequence[Side]) -> list[StatWarning]:
    """A note for each side with a unit beside a baseline (``sides[0]``) without one: compare shows the values
    without a unit (:func:`align`)."""
    if not sides or sides[0].unit:
        return []
    return [
        StatWarning(
            "unit-unshown",
            f"{side.name}: has a unit, the baseline {sides[0].name} none: the values are compared as they are "
            "and shown without a unit",
            side.name,
        )
        for side in sides[1:]
        if side.unit
    ]


def _convert(side: Side, to: Side, metric: str | None) -> None:
    """``side``'s values and unit in ``to``'s unit (UsageError when they do not convert)."""
    factor = conversion(side.unit, to.unit, metric)
    if factor is None:
        raise UsageError(
            f"{side.name} is in {side.unit}, {to.name} in {to.unit}: units that do not convert cannot be compared"
        )
    if factor != 1.0 and side.runs is not None:
        side.runs[:] = [[value * factor for value in run] for run in side.runs]
    side.unit = to.unit


def _centre(side: Side) -> float | None:
    """The median of the side's absolute values (None: none, 0 or not finite), by numpy's selection: a
    sort of 10^6 Python floats a side took as long as the comparison itself."""
    import numpy as np

    runs = [run for run in side.runs or [] if len(run)]
    if not runs:
        return None
    values = np.abs(np.concatenate([np.asarray(run, dtype=float) for run in runs]))
    half = values.size // 2  # np.median's value by partition: np.median imports numpy.ma (7 ms of start-up)
    if values.size % 2:
        centre = float(np.partition(values, half)[half])
    else:
        part = np.partition(values, [half - 1, half])
        with np.errstate(all="ignore"):  # two middle values near the float maximum: an infinite centre, no warning
            centre = float((part[half - 1] + part[half]) / 2)
    return centre if centre > 0 and math.isfinite(centre) else None


def _scale_warnings(sides: Sequence[Side]) -> list[StatWarning]:
    base = _centre(sides[0]) if sides else None
    found: list[StatWarning] = []
    for side in sides[1:]:
        centre = _centre(side)
        if base is None or centre is None:
            continue
        ratio = centre / base
        if ratio >= SCALE_WARNING or ratio <= 1.0 / SCALE_WARNING:
            found.append(
                StatWarning(
                    "scales-differ",
                    f"{side.name}: its values are {ratio:.3g}x {sides[0].name}'s: different units? "
                    "({unit} names a plain file's unit)",
                    side.name,
                    fields=["unit"],
                )
            )
    return found


def variant_sides(variants: dict[str, Any], unit_args: Sequence[str], store_arg: str | None, metric: str) -> list[Side]:
    """The :class:`Side` of each of ``compare``'s variants (:class:`abstat.readers.specs.VariantData`,
    whose runs are converted in place): a stored variant's unit is its metric's in the store, a file's
    what ``--unit`` says (``UNIT`` for every file, ``NAME=UNIT`` for one)."""
    default, named = parse_unit_args(unit_args)
    unknown = sorted(set(named) - set(variants))
    if unknown:
        raise UsageError(
            f"{{unit}} {unknown[0]}=...: no input is named {unknown[0]!r} (inputs: {', '.join(variants)})",
            fields=["unit"],
        )
    sides = []
    for name, variant in variants.items():
        stored = [s[len("store:") :] for s in variant.sources if s.startswith("store:")]
        unit = named.get(name) or (_stored_unit(variant, store_arg, metric, stored[0]) if stored else default)
        sides.append(Side(name, variant.runs, unit))
    return sides


def _stored_unit(variant: Any, store_arg: str | None, metric: str, ref: str) -> str | None:
    """A stored variant's unit: the one its runs were read in (a metric whose unit changed between
    runs resolves to one unit's runs), else the metric's in the store."""
    from abstat.store.metric_unit import stored_unit

    return getattr(variant, "unit", None) or stored_unit(store_arg, metric, ref)


def align_sets(sets: Sequence[Any]) -> None:
    """:func:`align` within each row of a table (sets that differ only in ``variant``), in input order;
    converted values, units and warnings (as notes of the sets) written into the sets."""
    for members in _table_rows(sets).values():
        sides = [Side(str(s.labels.get("variant") or s.source), s.runs, s.unit) for s in members]
        _, warnings = align(sides, members[0].labels.get("metric"))
        for sample_set, side in zip(members, sides, strict=True):
            sample_set.unit = side.unit
            sample_set.notes.extend(w.message for w in warnings if w.variant == side.name)


def _table_rows(sets: Sequence[Any]) -> dict[tuple[tuple[str, str], ...], list[Any]]:
    """The sets of values (not summaries) by row: their labels but ``variant``."""
    rows: dict[tuple[tuple[str, str], ...], list[Any]] = {}
    for sample_set in sets:
        if sample_set.summary is None:
            key = tuple(sorted((k, v) for k, v in sample_set.labels.items() if k != "variant"))
            rows.setdefault(key, []).append(sample_set)
    return rows


def parse_unit_args(items: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """``--unit UNIT`` (every plain file) and ``--unit NAME=UNIT`` (one input) -> (default, by name)."""
    default: str | None = None
    named: dict[str, str] = {}
    for item in items:
        name, eq, unit = item.partition("=")
        if eq:
            if not name.strip() or not unit.strip():
                raise UsageError(f"{{unit}} {item!r}: expected UNIT or NAME=UNIT", fields=["unit"])
            named[name.strip()] = unit.strip()
        elif item.strip():
            default = item.strip()
    return default, named
