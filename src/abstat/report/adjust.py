"""Multiple-comparison control across a report's table.

``holm``: Holm's step-down method, controls the family-wise error rate
(the chance of even one false "significant" mark in the table).
``bh``: Benjamini-Hochberg, controls the false discovery rate (the
expected share of false marks among the marked cells).
``none``: every cell judged on its own p-value.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from abstat.errors import named

METHODS = ("holm", "bh", "none")

DESCRIPTIONS = {
    "holm": "Holm step-down adjustment (family-wise error rate)",
    "bh": "Benjamini-Hochberg adjustment (false discovery rate)",
    "none": "no multiple-comparison adjustment",
}


ADJUSTED_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}  # the rule's name in captions and column heads


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


def adjust_family(comparisons: Sequence[Any], method: str = "holm") -> list[Any]:
    """The comparisons shown together (a report's cells; ``run``/``show``'s metrics x candidates;
    ``compare``'s candidates), each judged on its p-value adjusted over them all by ``method``:
    ``p_adjusted`` and ``adjustment`` set, verdict and ``significant`` following the adjusted p-value
    (:func:`follow_adjusted`).  A family of one is returned as it is, unadjusted; a comparison that
    cannot be judged (NaN p-value) counts in the family as p = 1 and keeps its verdict; one whose
    method gives no p-value is not in the family and is returned as it is."""
    family = [i for i, c in enumerate(comparisons) if c.p_value is not None]
    done = list(comparisons)
    if len(family) < 2 or method == "none":
        return done
    adjusted = adjust_p_values([float(comparisons[i].p_value) for i in family], method)
    for i, p_adj in zip(family, adjusted, strict=True):
        alpha = 1.0 - float(comparisons[i].confidence)
        judged = follow_adjusted(comparisons[i], p_adj < alpha)
        done[i] = dataclasses.replace(judged, p_adjusted=p_adj, adjustment=method)
    return done


def adjust_sections(
    sections: Sequence[tuple[Any, Any, Sequence[Any]]], method: str = "holm"
) -> list[tuple[Any, Any, list[Any]]]:
    """``(metric, unit, comparisons)`` sections adjusted as one family (:func:`adjust_family`)."""
    flat = iter(adjust_family([c for _, _, comps in sections for c in comps], method))
    return [(metric, unit, [next(flat) for _ in comps]) for metric, unit, comps in sections]


def family_rule(comparisons: Sequence[Any]) -> str:
    """The name of the rule the family's verdicts follow (``Holm``; empty when no adjustment was made)."""
    method = next((c.adjustment for c in comparisons if getattr(c, "adjustment", None)), "")
    return ADJUSTED_NAMES.get(method, method)


def family_caption(comparisons: Sequence[Any]) -> str:
    """The caption's one mention of the family's rule (empty when no adjustment was made)."""
    name = family_rule(comparisons)
    return f"verdicts after {name} over the {len(comparisons)} comparisons (intervals unadjusted)" if name else ""


def follow_adjusted(comparison: Any, significant: bool) -> Any:
    """The comparison with its verdict and ``significant`` flag re-decided on
    the adjusted significance, so that a cell's verdict, star and colour agree
    in every format (its ``p_value`` stays the unadjusted one)."""
    from abstat.comparison import decide

    if comparison.verdict == "cannot judge":
        return comparison
    verdict = decide(
        comparison.delta_pct, comparison.ci_pct, significant, comparison.threshold, comparison.higher_is_better
    )
    return dataclasses.replace(comparison, significant=significant, verdict=verdict)


def unreachable(comparisons: Sequence[Any], method: str, alpha: float, size: int | None = None) -> str | None:
    """Why no comparison of the family can be significant, whatever the data (one sentence), or None.

    A rank test on a permutation reference cannot give a p-value below ``2 / C(n_a + n_b, n_a)`` (ties
    only raise it); Holm needs ``m`` times the smallest p below ``alpha``, Benjamini-Hochberg and no
    adjustment the smallest p itself.  Said only when every comparison of the family has such a floor;
    ``size``: the family's size when ``comparisons`` are only its rank-test members (run and show's note:
    none of them can be the first Holm passes)."""
    from abstat.comparison.sequential import smallest_p

    family = [c for c in comparisons if c.p_value is not None]
    if not family or any("permutation" not in c.method for c in family):
        return None
    sizes = [tuple(c.runs if c.unit == "runs" and c.runs else c.n) for c in family]
    floor, (n_a, n_b) = min((smallest_p(a, b), (a, b)) for a, b in sizes)
    m = (size or len(family)) if method == "holm" else 1
    if m * floor <= alpha:
        return None
    unit = family[0].unit if len({c.unit for c in family}) == 1 else "values"
    rule = f"Holm over {m} comparisons needs one below {alpha / m:.2g}" if m > 1 else f"it must be below {alpha:.2g}"
    return named(
        f"No cell can be significant: with {n_a} {unit} against {n_b} the smallest p-value the rank test can give "
        f"is {floor:.2g}, and {rule}; more runs (abstat plan says how many) or fewer comparisons ({{metrics}}) can.",
        "metrics",
    )
