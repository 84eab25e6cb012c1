"""What ``abstat bisect`` ends with: the culprit (or why none), the change, the runs; text or JSON
(as :mod:`abstat.history.render` renders a history)."""

from __future__ import annotations

from typing import Any

from abstat.history.bisect.search import GATE_PVALUE


def change_text(change: Any, sides: str = "bad vs good") -> str:
    """A change (a :class:`abstat.comparison.model.Comparison` of bad against good) in the words and digits of
    ``abstat compare``: the change and its interval, the estimand's label, the p-value."""
    from abstat.render.units import format_change, format_p

    interval = (
        f" with its {change.confidence * 100:g}% confidence interval"
        if change.ci_pct is not None
        else f"; no interval: {change.verdict}"  # (both sides constant, too few values...): none is promised
    )
    return (
        f"{format_change(change.delta_pct, change.ci_pct)} ({sides}: {change.estimand_label}{interval}, "
        f"p={format_p(change.p_value)})"
    )


def change_doc(change: Any, reference_p: float | None = None) -> dict[str, Any] | None:
    """The JSON of a change: the fields ``abstat compare --format json`` gives it."""
    if change is None:
        return None
    doc = {k: v for k, v in change.to_dict().items() if k in CHANGE_FIELDS}
    return doc if reference_p is None else {**doc, "references_p": reference_p}


CHANGE_FIELDS = ("n", "estimand", "estimand_label", "delta_pct", "ci_pct", "confidence", "p_value", "method")


def render(report: Any, fmt: str) -> str:
    outcome = report.outcome
    commits = report.commits
    candidates = [
        {"rev": commits[i], "probability": p, "subject": report.subjects.get(commits[i], "")}
        for i, p in outcome.candidates
    ]
    steps = [
        {
            "rev": commits[o.culprit],
            "probability": o.probability,
            "change": o.change,
            "subject": report.subjects.get(commits[o.culprit], ""),
        }
        for o in outcome.steps
        if o.culprit is not None
    ]
    if fmt == "json":
        return _json(report, candidates, steps)
    from abstat.render.escape import terminal as _t

    lines = []
    size = f"change {change_text(outcome.change)}" if outcome.change is not None else ""
    if outcome.status == "found":
        sha = commits[outcome.culprit]
        lines.append(f"culprit: {sha} {_t(report.subjects.get(sha, ''))}")
        lines.append(f"  probability {outcome.probability:.3f}; {size}")
    elif outcome.status == "no-change":
        lines.append(
            "no change found: the good and bad revisions do not differ clearly "
            f"(Brunner-Munzel p={outcome.reference_p:.2g} between them, and the density-scored permutation "
            f"test's p, above the {GATE_PVALUE:g} a search needs); "
            "no culprit named"
        )
    elif outcome.status == "several":
        lines += _several(outcome, commits, steps, size)
    else:
        lines += _inconclusive(outcome.status, report.confidence, size, candidates)
    lines.append(_spent(report))
    for warning in report.warnings + outcome.notes:
        lines.append(f"warning: {_t(warning.message)}")
    lines.append(f"  measurements stored in experiment {_t(report.experiment)} (see abstat history)")
    return "\n".join(lines) + "\n"


def _several(outcome: Any, commits: list[str], steps: list[dict[str, Any]], size: str) -> list[str]:
    from abstat.render.escape import terminal as _t

    where = commits[outcome.intermediate][:12] if outcome.intermediate is not None else "?"
    lines = [
        f"more than one change: {where} measures unlike both the good and the bad revision; no single commit "
        "made the whole change",
        f"  whole range: {size}" if size else "",
    ]
    for step in steps:
        lines.append(f"  step: {step['rev']} {_t(step['subject'])}")
        text = f"change {change_text(step['change'])}" if step["change"] is not None else "change ?"
        lines.append(f"    probability {step['probability']:.3f}; {text}, between the levels on either side of it")
    lines += [_unresolved(commits[low][:12], commits[high][:12], status) for low, high, status in outcome.unresolved]
    if not steps and not outcome.unresolved:
        lines.append("  no step isolated within the budget" if not outcome.notes else "  no step isolated")
    return [line for line in lines if line]


def _unresolved(low: str, high: str, status: str) -> str:
    """A part of a ``several`` answer that names no step: its good end ``low`` (excluded) to its bad end ``high``."""
    if status == "no-change":
        return f"  between {low} and {high}: no change found (these two do not differ clearly)"
    why = "(its commits' neighbours did not build)" if status == "untestable" else "within the budget"
    return f"  a change after {low} up to {high}: no step isolated {why}"


def _json(report: Any, candidates: list[dict[str, Any]], steps: list[dict[str, Any]]) -> str:
    outcome, commits = report.outcome, report.commits
    from abstat.render.escape import json_text

    return json_text(
        {
            "status": outcome.status,
            "culprit": commits[outcome.culprit] if outcome.culprit else None,
            "probability": outcome.probability if outcome.culprit else None,
            "candidates": candidates,
            "runs": outcome.runs,
            "commits": len(commits) - 1,
            "change": change_doc(outcome.change, outcome.reference_p),
            "skipped": report.skipped,
            "warnings": [w.to_dict() for w in report.warnings + outcome.notes],
            "experiment": report.experiment,
            "graph": report.graph,
            "boots": report.boots or None,
            "steps": [{**step, "change": change_doc(step["change"])} for step in steps],
            "intermediate": commits[outcome.intermediate] if outcome.intermediate is not None else None,
            "unresolved": [
                {"after": commits[low], "through": commits[high], "status": status}
                for low, high, status in outcome.unresolved
            ],
        }
    )


def _spent(report: Any) -> str:
    from abstat.render.escape import terminal as _t

    outcome, commits = report.outcome, report.commits
    merges = report.graph.get("merges", 0)
    boots = report.boots
    spent = (
        f"{outcome.runs} boots of host {_t(boots['host'])} ({boots['runs_per_boot']} run(s) each, the boot as "
        f"the unit{'; ' + str(boots['replayed']) + ' read back from the store' if boots['replayed'] else ''})"
        if boots
        else f"{outcome.runs} benchmark runs"
    )
    return (
        f"  {spent} over {len(commits) - 1} commits"
        + (f" ({merges} merge(s): searched the commit graph; {report.graph['model']})" if merges else "")
        + (
            f"; {len(report.skipped)} skipped (did not build{', install or boot' if boots else ''}, or every run "
            "failed): " + ", ".join(s[:12] for s in report.skipped)
            if report.skipped
            else ""
        )
    )


def _inconclusive(status: str, confidence: float, size: str, candidates: list[dict[str, Any]]) -> list[str]:
    from abstat.render.escape import terminal as _t

    word = "inconclusive" if status == "inconclusive" else "inconclusive (untestable commits)"
    lead = max(candidates, key=lambda c: c["probability"], default=None)
    if lead is not None and lead["probability"] >= confidence:  # the search put it there; nothing confirmed it
        why = (
            f"the budget ran out before {lead['rev'][:12]} (probability {lead['probability']:.3f} from the runs "
            "that steered the search to it) was confirmed by runs of its own"
        )
    else:
        why = f"no commit reached probability {confidence:g}"
    lines = [f"{word}: {why}"] + (["  " + size] if size else [])
    if candidates:
        lines.append("  remaining candidates:")
    for c in candidates:
        lines.append(f"    {c['probability']:.3f}  {c['rev'][:12]} {_t(c['subject'])}")
    return lines
