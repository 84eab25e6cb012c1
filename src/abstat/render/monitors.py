"""What else changed (``--monitor``), below the main table: text and Markdown lines, and the JSON form.

One line per counter that moved (:func:`abstat.comparison.monitors.other_changes`), under a caption naming
the family and its rule::

    what else changed: 2 of 58 monitor counters moved (Benjamini-Hochberg, 5% false discoveries)
      counter                 pair        median       mean              q
      monitor.interrupts.TLB  two vs one  4 → 19,968   3.5 → 19,986    1.7e-07
      monitor.interrupts.CAL  two vs one  1 → 5        1.4 → 5         4e-06
"""
from __future__ import annotations

from typing import Any

from abstat.comparison.monitors import OtherChanges
from abstat.render import tables
from abstat.render.units import format_p, format_value


def caption(changes: OtherChanges) -> str:
    moved, tested = len(changes.moved), changes.tested
    rule = f"Benjamini-Hochberg, {changes.fdr * 100:g}% false discoveries"
    if not moved:
        return f"what else changed: none of {tested} monitor counters moved ({rule})"
    return f"what else changed: {moved} of {tested} monitor counter{'s' if tested != 1 else ''} moved ({rule})"


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

        body.append([row.metric, f"{row.candidate} vs {row.baseline}",
                     f"{number(row.baseline_median)} → {number(row.candidate_median)}",
                     f"{number(row.baseline_mean)} → {number(row.candidate_mean)}", format_p(row.q_value)])
    out = [caption(changes)]
    headers, align = ["counter", "pair", "median", "mean", "q"], ["l", "l", "l", "l", "r"]
    if body and markdown:
        out += ["", *tables.markdown(headers, body, align)]
    elif body:
        out += ["  " + line for line in tables.plain(headers, body, align, rule=False)]
    return out


def as_json(changes: OtherChanges) -> dict[str, Any]:
    return {"tested": changes.tested, "fdr": changes.fdr, "adjustment": "benjamini-hochberg",
            "moved": [{"metric": r.metric, "candidate": r.candidate, "baseline": r.baseline, "unit": r.unit,
                       "baseline_median": r.baseline_median, "candidate_median": r.candidate_median,
                       "baseline_mean": r.baseline_mean, "candidate_mean": r.candidate_mean,
                       "p_value": r.p_value, "q_value": r.q_value, "direction": r.direction}
                      for r in changes.moved]}
