"""``abstat plan``'s result as text and JSON (:class:`abstat.comparison.planning.Plan`)."""

from __future__ import annotations

import math
from typing import Any

from abstat.render.escape import json_text


def render_text(result: Any) -> str:
    """The plan as text (``result``: :class:`abstat.comparison.planning.Plan`)."""
    change = f"{result.detect:.6g}"
    if result.detect_pct is not None:
        change = f"{result.detect_pct:g}% ({change})"
    center = "" if result.center == "auto" else f" --center {result.center}"
    out = [
        f"plan: detect a change of {change} from {result.baseline} with {result.power:.0%} power "
        f"at {result.confidence:g}% confidence (two-sided)",
        f"sizes and power are for the {result.estimand_label}: what abstat compare{center} compares on data like these",
        "",
        "pilot:",
        *map(_pilot_line, result.variants),
        "",
        *(_flat_lines(result) if result.method == "flat" else _nested_lines(result)),
        *(f"note: {note}" for note in result.notes),
    ]
    return "\n".join(out) + "\n"


def _pilot_line(v: Any) -> str:
    runs = f", {v.runs} runs" if v.runs else ""
    power = f"; power now {v.current_power:.0%}" if v.current_power is not None else ""
    return f"  {v.name}: n={v.n}{runs}, mean {v.mean:.6g}, stddev {v.stddev:.6g}{power}"


def _count(needed: int | None) -> str:
    return "more than 10,000,000" if needed is None else str(needed)


def _flat_lines(result: Any) -> list[str]:
    """Samples per variant for each comparison (and for all of them, with several)."""
    out = [
        f"samples per variant ({pair['candidate']} vs {pair['baseline']}): {_count(pair['samples_per_variant'])}"
        for pair in result.pairs
    ]
    if len(result.pairs) > 1:
        out.append(f"samples per variant for all comparisons: {_count(result.samples_per_variant)}")
    return out


def _nested_lines(result: Any) -> list[str]:
    """The flat count, the variance components and the runs x samples allocation per cost ratio."""
    out = [
        f"runs per variant at {pair['samples_per_run']} samples per run ({pair['candidate']} vs "
        f"{pair['baseline']}): {_count(pair['runs_per_variant'])}"
        for pair in result.pairs
        if "runs_per_variant" in pair
    ]
    of = " of a run median" if result.center != "mean" else ""
    out += [
        f"if every sample were its own run: {_count(result.samples_per_variant)} samples per variant",
        f"variance components{of}: within a run {math.sqrt(result.within):.6g} (sd), "
        f"between runs {math.sqrt(max(result.between, 0.0)):.6g} (sd)",
        "allocation (Kalibera & Jones 2013): samples per run = ceil(sqrt(cost ratio x within / between))",
    ]
    for a in result.allocations:
        cost = "" if a.relative_cost is None else f", cost {a.relative_cost:.6g} sample-times per variant"
        label = f"run costs {a.cost_ratio:g} samples" + (" (assumed)" if a.assumed else "")
        out.append(
            f"  {label}: {_count(a.runs_per_variant)} runs x {a.samples_per_run} samples per run per variant{cost}"
        )
    return out


def plan_json(result: Any) -> str:
    """The plan as JSON (infinities and NaN as null)."""
    return json_text(result.to_dict())
