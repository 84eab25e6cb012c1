"""Multiple-comparison control across a report's table.

``holm``: Holm's step-down method, controls the family-wise error rate
(the chance of even one false "significant" mark in the table).
``bh``: Benjamini-Hochberg, controls the false discovery rate (the
expected share of false marks among the marked cells).
``none``: every cell judged on its own p-value.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

METHODS = ("holm", "bh", "none")

DESCRIPTIONS = {
    "holm": "Holm step-down adjustment (family-wise error rate)",
    "bh": "Benjamini-Hochberg adjustment (false discovery rate)",
    "none": "no multiple-comparison adjustment",
}


def adjust_p_values(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values, in the order given."""
    if method not in METHODS:
        raise ValueError(f"unknown adjustment {method!r}")
    m = len(p_values)
    if method == "none" or m == 0:
        return [float(p) for p in p_values]
    # A comparison that cannot be judged (NaN p) counts in the family as p = 1;
    # left as NaN it made the sort order arbitrary and the step-down wrong.
    p_values = [1.0 if math.isnan(float(p)) else float(p) for p in p_values]
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, index in enumerate(order):
            running = max(running, min(1.0, (m - rank) * float(p_values[index])))
            adjusted[index] = running
    else:  # Benjamini-Hochberg, from the largest p-value down
        running = 1.0
        for rank in range(m - 1, -1, -1):
            index = order[rank]
            running = min(running, min(1.0, m * float(p_values[index]) / (rank + 1)))
            adjusted[index] = running
    return adjusted


def follow_adjusted(comparison: Any, significant: bool) -> Any:
    """The comparison with its verdict and ``significant`` flag re-decided on
    the adjusted significance, so that a cell's verdict, star and colour agree
    in every format (its ``p_value`` stays the unadjusted one)."""
    import dataclasses

    from abstat.comparison import decide

    if comparison.verdict == "cannot judge":
        return comparison
    verdict = decide(comparison.delta_pct, comparison.ci_pct, significant, comparison.threshold,
                     comparison.higher_is_better)
    return dataclasses.replace(comparison, significant=significant, verdict=verdict)
