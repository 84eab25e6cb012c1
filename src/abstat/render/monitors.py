"""What else changed (``--monitor``), below the main table: text and Markdown lines, and the JSON form.

One line per counter that moved (:func:`abstat.comparison.monitors.other_changes`), under a caption naming
the family and its rule::

    what else changed: 2 of the 58 monitor counters that varied moved (Benjamini-Hochberg, 5% false discoveries)
      counter                 pair        median       mean              q
      monitor.interrupts.TLB  two vs one  4 → 19,968   3.5 → 19,986    1.7e-07
      monitor.interrupts.CAL  two vs one  1 → 5        1.4 → 5         4e-06
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from abstat.render.escape import json_text
from abstat.comparison.monitors import OtherChanges, is_monitor, other_changes
from abstat.render import tables
from abstat.render.units import format_p, format_value


def caption(changes: OtherChanges) -> str:
    moved, tested = len(changes.moved), changes.tested
    rule = f"Benjamini-Hochberg, {changes.fdr * 100:g}% false discoveries"
    counters = f"{tested} monitor counter{'s' if tested != 1 else ''} that varied"
    if not moved:
        return f"what else changed: none of the {counters} moved ({rule})"
    return f"what else changed: {moved} of the {counters} moved ({rule})"


def lines(changes: OtherChanges, *, markdown: bool = False) -> list[str]:
    """The caption and a table of the counters that moved ([] when none was tested)."""
    if not changes.tested:
        return []
    body = []
    for row in changes.moved:

        def number(value: float, unit: str | None = row.unit) -> str:
            if unit:
                return format_value(value, unit)
            return f"{int(value):,}" if float(value).is_integer() else f"{value:,.5g}"

        body.append(
            [
                row.metric,
                f"{row.candidate} vs {row.baseline}",
                f"{number(row.baseline_median)} → {number(row.candidate_median)}",
                f"{number(row.baseline_mean)} → {number(row.candidate_mean)}",
                format_p(row.q_value),
            ]
        )
    out = [caption(changes)]
    headers, align = ["counter", "pair", "median", "mean", "q"], ["l", "l", "l", "l", "r"]
    if body and markdown:
        out += ["", *tables.markdown(headers, body, align)]
    elif body:
        out += ["  " + line for line in tables.plain(headers, body, align, rule=False)]
    return out


def as_json(changes: OtherChanges) -> dict[str, Any]:
    return {
        "tested": changes.tested,
        "fdr": changes.fdr,
        "adjustment": "benjamini-hochberg",
        "moved": [
            {
                "metric": r.metric,
                "candidate": r.candidate,
                "baseline": r.baseline,
                "unit": r.unit,
                "baseline_median": r.baseline_median,
                "candidate_median": r.candidate_median,
                "baseline_mean": r.baseline_mean,
                "candidate_mean": r.candidate_mean,
                "p_value": r.p_value,
                "q_value": r.q_value,
                "direction": r.direction,
            }
            for r in changes.moved
        ],
    }


def split_monitors(metrics: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the main table's metrics, the ``--monitor`` counters) of a list of metric names."""
    return [m for m in metrics if not is_monitor(m)], [m for m in metrics if is_monitor(m)]


def from_groups(
    groups: Mapping[str, Mapping[str, Sequence[Sequence[float]]]],
    names: Sequence[str],
    baseline: str,
    units: Mapping[str, str | None],
) -> OtherChanges:
    """What else changed among the monitor counters ``names`` of a store's groups (metric -> variant -> the
    values of each run), every run's values pooled per variant."""
    samples = {
        name: {variant: [value for run in runs for value in run] for variant, runs in groups.get(name, {}).items()}
        for name in names
    }
    return other_changes(samples, baseline, units)


def split_sets(sets: Sequence[Any], metrics: Sequence[str] | None) -> tuple[list[Any], list[Any]]:
    """(the sample sets of the main table, those of ``--monitor`` counters) unless ``metrics`` names them."""
    if metrics:
        return list(sets), []
    return (
        [s for s in sets if not is_monitor(s.labels.get("metric", ""))],
        [s for s in sets if is_monitor(s.labels.get("metric", ""))],
    )


def from_sets(sets: Sequence[Any], by: str, baseline: str) -> OtherChanges:
    """What else changed among monitor sample sets: each counter of each configuration (the labels other
    than ``by``) compared across ``by``'s values with ``baseline``'s."""
    samples: dict[str, dict[str, list[float]]] = {}
    units: dict[str, str | None] = {}
    for found in sets:
        labels = found.labels
        if by not in labels:
            continue
        cell = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in (by, "metric", "experiment"))
        name = labels.get("metric", "") + (f" [{cell}]" if cell else "")
        samples.setdefault(name, {}).setdefault(labels[by], []).extend(v for run in found.runs for v in run)
        units[name] = found.unit
    return other_changes(samples, baseline, units)


def with_other_changes(text: str, changes: OtherChanges, fmt: str) -> str:
    """A rendered report with what else changed below it (text, table, Markdown, e-mail), or as a JSON key."""
    if not changes.tested:
        return text
    if fmt == "json":
        document = json.loads(text)
        if isinstance(document, dict):
            document["what_else_changed"] = as_json(changes)
            return json_text(document)
        return text
    if fmt not in ("text", "table", "markdown", "email"):
        return text
    return text.rstrip("\n") + "\n\n" + "\n".join(lines(changes, markdown=fmt == "markdown")) + "\n"
