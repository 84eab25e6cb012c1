"""``abstat plan``'s result as text and JSON (:class:`abstat.comparison.planning.Plan`)."""
from __future__ import annotations

import json
import math
from typing import Any


def _finite(value: Any) -> Any:
    """JSON has no infinities or NaN: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def render_text(result: Any) -> str:
    """The plan as text (``result``: :class:`abstat.comparison.planning.Plan`)."""
    change = f"{result.detect:.6g}"
    if result.detect_pct is not None:
        change = f"{result.detect_pct:g}% ({change})"
    center = "" if result.center == "auto" else f" --center {result.center}"
    out = [
        f"plan: detect a change of {change} from {result.baseline} with {result.power:.0%} power "
        f"at {result.confidence:g}% confidence (two-sided)",
        f"sizes and power are for the {result.estimand_label}: what abstat compare{center} compares on data "
        "like these",
        "",
        "pilot:",
    ]
    for v in result.variants:
        runs = f", {v.runs} runs" if v.runs else ""
        power = f"; power now {v.current_power:.0%}" if v.current_power is not None else ""
        out.append(f"  {v.name}: n={v.n}{runs}, mean {v.mean:.6g}, stddev {v.stddev:.6g}{power}")
    out.append("")
    if result.method == "flat":
        for pair in result.pairs:
            needed = pair["samples_per_variant"]
            text = "more than 10,000,000" if needed is None else str(needed)
            out.append(f"samples per variant ({pair['candidate']} vs {pair['baseline']}): {text}")
        if len(result.pairs) > 1:
            total = result.samples_per_variant
            out.append(f"samples per variant for all comparisons: {'more than 10,000,000' if total is None else total}")
    else:
        flat = result.samples_per_variant
        flat_text = "more than 10,000,000" if flat is None else flat
        out.append(f"if every sample were its own run: {flat_text} samples per variant")
        out.append(
            f"variance components: within a run {math.sqrt(result.within):.6g} (sd), "
            f"between runs {math.sqrt(max(result.between, 0.0)):.6g} (sd)"
        )
        out.append("allocation (Kalibera & Jones 2013): samples per run = ceil(sqrt(cost ratio x within / between))")
        for a in result.allocations:
            cost = "" if a.relative_cost is None else f", cost {a.relative_cost:.6g} sample-times per variant"
            runs = "more than 10,000,000" if a.runs_per_variant is None else str(a.runs_per_variant)
            label = f"run costs {a.cost_ratio:g} samples" + (" (assumed)" if a.assumed else "")
            out.append(f"  {label}: {runs} runs x {a.samples_per_run} samples per run per variant{cost}")
    for note in result.notes:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def plan_json(result: Any) -> str:
    """The plan as JSON (infinities and NaN as null)."""
    return json.dumps(_finite(result.to_dict()), indent=2, allow_nan=False) + "\n"
