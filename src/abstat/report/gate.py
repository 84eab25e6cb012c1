"""The CI gate: does a set of comparisons prove a change beyond a threshold?

``--fail-on slower|faster|change`` with ``--threshold PCT`` makes ``abstat compare`` and
``abstat report`` exit 1 when, for at least one comparison,

- the change is significant *after* multiple-comparison control over the family gated
  (Holm over a report's cells, or over compare's candidates; one comparison is its own
  family), and
- the whole confidence interval of the change lies beyond the threshold in the named
  direction (``slower``: worse, whatever the metric's direction; ``faster``: better;
  ``change``: either).

A change whose estimate is beyond the threshold but whose interval reaches back inside
it is *not* proven beyond it and does not fail the gate; neither does a comparison that
cannot be judged (its lines say how many there were) when the gate judged at least one
other.  A gate that judged none is refused (exit 2), never passed: nothing laid side by
side at all (one variant: no comparison to judge), or pairs laid side by side of which none
could be judged (one run a side, both sides constant, every run of one side failed...: the
cheapest way past a gate would be to make the numbers unjudgeable; attack22 A8).  This
module only decides; commands print and exit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

FAIL_ON = ("slower", "faster", "change")


@dataclass
class GateHit:
    """One comparison that fails the gate."""

    name: str  # "candidate vs baseline" (or a report cell's place)
    direction: str  # "slower" or "faster" (worse/better)
    delta_pct: float
    ci_pct: tuple[float, float]
    p_adjusted: float


@dataclass
class GateResult:
    fail_on: str
    threshold: float
    hits: list[GateHit] = field(default_factory=list)
    judged: int = 0  # comparisons the gate looked at
    unjudged: int = 0  # comparisons that could not be judged (no interval)

    @property
    def failed(self) -> bool:
        return bool(self.hits)

    @property
    def exit_status(self) -> int:
        return 1 if self.hits else 0

    def lines(self) -> list[str]:
        """One line per hit, then the verdict of the gate: for standard error."""
        out = [
            f"gate: {hit.name}: {hit.direction} {hit.delta_pct:+.2f}% "
            f"[{hit.ci_pct[0]:+.2f}, {hit.ci_pct[1]:+.2f}], beyond {self.threshold:g}% "
            f"(adjusted p {hit.p_adjusted:.3g})"
            for hit in self.hits
        ]
        if self.hits:
            out.append(
                f"gate: FAIL: {len(self.hits)} of {self.judged} comparison(s) proven "
                f"{self.fail_on} beyond {self.threshold:g}%"
            )
        else:
            out.append(f"gate: pass: no comparison of {self.judged} proven {self.fail_on} beyond {self.threshold:g}%")
        if self.unjudged:
            out.append(f"gate: {self.unjudged} comparison(s) could not be judged (no interval)")
        return out


def _direction(comparison: Any, lo: float, hi: float, threshold: float) -> str | None:
    """``slower``/``faster`` when the whole interval lies beyond the threshold, else None."""
    if lo > threshold:
        up = "faster" if comparison.higher_is_better else "slower"
    elif hi < -threshold:
        up = "slower" if comparison.higher_is_better else "faster"
    else:
        return None
    return up


def evaluate(
    comparisons: Sequence[Any],
    fail_on: str,
    threshold: float | None,
    *,
    names: Sequence[str] | None = None,
    p_adjusted: Sequence[float | None] | None = None,
    confidence: float = 0.95,
    adjust: str = "holm",
    nothing: str | None = None,
    uncompared: int = 0,
    why_uncompared: str = "",
    refuse_unjudged: bool = True,
) -> GateResult:
    """Gate ``comparisons`` (:class:`abstat.comparison.Comparison`).  ``p_adjusted``:
    p-values already adjusted over the family (a report's); else they are adjusted
    here with ``adjust``.  ``names``: how each comparison is named in the lines.  No comparison at all is a
    UsageError (exit 2: a gate given nothing to judge never passes), ``nothing`` saying why there is none;
    ``uncompared``: pairs laid side by side but not compared (a report's cells of one value a side), counted
    as comparisons that cannot be judged, ``why_uncompared`` saying why.  When none of them could be judged,
    a UsageError too (saying why the first could not), unless ``refuse_unjudged`` is false (one comparison's
    annotation, :mod:`abstat.render.ci_formats`, rather than a gate's verdict)."""
    from abstat.errors import UsageError
    from abstat.report.adjust import adjust_p_values

    if fail_on not in FAIL_ON:
        raise UsageError(f"{{fail_on}} {fail_on!r}: choose from {', '.join(FAIL_ON)}", fields=["fail_on"])
    if not comparisons and not uncompared:
        raise UsageError(
            f"{{fail_on}} {fail_on}: nothing to gate: {nothing or 'no comparison was made'}", fields=["fail_on"]
        )
    limit = float(threshold or 0.0)
    if p_adjusted is None:
        raw = [float("nan") if c.p_value is None else float(c.p_value) for c in comparisons]
        p_adjusted = adjust_p_values(raw, adjust)
    result = GateResult(fail_on=fail_on, threshold=limit, unjudged=uncompared)
    alpha = 1.0 - confidence
    why = why_uncompared
    for index, comparison in enumerate(comparisons):
        ci = comparison.ci_pct
        p = p_adjusted[index]
        name = names[index] if names else f"{comparison.candidate} vs {comparison.baseline}"
        if not _judgeable(comparison, p) or p is None:  # (p is None: said again for the type checker)
            result.unjudged += 1
            why = why or f"{name}: {_why_not_judged(comparison, p)}"
            continue
        result.judged += 1
        direction = _direction(comparison, float(ci[0]), float(ci[1]), limit)
        if direction is None or p >= alpha or (fail_on != "change" and direction != fail_on):
            continue
        result.hits.append(
            GateHit(name, direction, float(comparison.delta_pct), (float(ci[0]), float(ci[1])), float(p))
        )
    if refuse_unjudged and not result.judged:
        raise UsageError(
            f"{{fail_on}} {fail_on}: nothing could be judged: {result.unjudged} comparison(s) laid side by side,"
            f" none with an interval and a p-value ({why}); a gate that judged nothing does not pass",
            fields=["fail_on"],
        )
    return result


def _why_not_judged(comparison: Any, p: float | None) -> str:
    """Why a comparison cannot be gated: its own "cannot judge" warning, else what it lacks."""
    for warning in getattr(comparison, "warnings", None) or ():
        if warning.code == "cannot-judge":
            return str(warning.message)
    ci = comparison.ci_pct
    if ci is None or any(math.isnan(x) for x in ci):
        return "no confidence interval"
    return "no p-value" if p is None or math.isnan(p) else f"verdict {comparison.verdict!r}"


def _judgeable(comparison: Any, p: float | None) -> bool:
    """Whether the comparison has an interval, a verdict and a p-value to gate on."""
    ci = comparison.ci_pct
    return not (
        ci is None
        or any(math.isnan(x) for x in ci)
        or comparison.verdict == "cannot judge"
        or p is None
        or math.isnan(p)
    )


def gate_report(report: Any, fail_on: str, threshold: float | None) -> GateResult:
    """Gate the cells of a report (:class:`abstat.report.table.Report`) on their
    adjusted p-values (the report's ``--adjust``)."""
    cells = report.comparisons
    return evaluate(
        [c.comparison for c in cells],
        fail_on,
        threshold,
        names=[f"{'/'.join(v for v in (*c.row, c.column) if v)}" for c in cells],
        p_adjusted=[c.p_adjusted if c.p_adjusted is not None else (0.0 if c.significant else 1.0) for c in cells],
        confidence=report.confidence,
        uncompared=max(0, len(report.pairs()) - len(cells)),
        why_uncompared=_why_not_compared(report),
        nothing=f"no row has both the baseline {report.by}={report.baseline} and another {report.by}"
        + (f" (the inputs hold only {report.by}={report.baseline})" if len(report.columns) < 2 else ""),
    )


def _why_not_compared(report: Any) -> str:
    """The first pair laid side by side but not compared, and why (its note), or ""."""
    for _, cell in report.pairs():
        if cell.comparison is None:
            said = [m.get("message") for m in cell.messages if m.get("code") == "not-compared"]
            place = "/".join(v for v in (*cell.row, cell.column) if v)
            return f"{place}: not compared: {said[0]}" if said else f"{place}: not compared"
    return ""
