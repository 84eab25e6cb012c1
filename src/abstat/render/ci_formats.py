"""Outputs for CI systems: GitHub Actions and GitLab merge requests.

``github``
    Workflow commands (``::error`` / ``::warning``, `GitHub's syntax
    <https://docs.github.com/actions/reference/workflow-commands-for-github-actions>`_,
    with its ``%25 %0D %0A`` escapes, and ``%3A %2C`` in properties) followed by a
    Markdown step summary (every cell from data escaped by :func:`escape.markdown`).
    An ``::error`` marks a comparison proven worse beyond its threshold (the rule of
    :mod:`abstat.report.gate`), a ``::warning`` one whose verdict is worse but whose
    interval reaches back inside the threshold, or which cannot be judged.
    ``abstat compare --format github`` appends the summary to ``$GITHUB_STEP_SUMMARY``
    when that is set, and prints only the commands.
``gitlab``
    GitLab's code-quality report (a JSON list of issues: ``description``,
    ``check_name``, ``fingerprint``, ``severity``, ``location.path``,
    ``location.lines.begin``), shown in the merge request's widget: one ``major``
    issue per comparison proven worse beyond its threshold, one ``minor`` per
    worse verdict not proven beyond it; ``[]`` when there is none.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

from abstat.render import escape


@dataclass
class Finding:
    level: str  # "error" (proven worse beyond the threshold) or "warning"
    title: str  # "candidate vs baseline" or the report cell's place
    message: str
    source: str | None


def _data(text: object) -> str:
    return escape.terminal(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: object) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def findings(
    comparisons: Sequence[Any],
    names: Sequence[str] | None = None,
    p_adjusted: Sequence[float | None] | None = None,
    sources: Sequence[str | None] | None = None,
) -> list[Finding]:
    """What a CI system should flag among ``comparisons``, in order: each judged at its confidence on
    ``p_adjusted`` (by default its own, adjusted over the family shown with it, as its verdict is:
    :func:`family_p`)."""
    from abstat.report.gate import evaluate

    out = []
    for index, comp in enumerate(comparisons):
        name = names[index] if names else f"{comp.candidate} vs {comp.baseline}"
        gate = evaluate(
            [comp],
            "slower",
            comp.threshold,
            names=[name],
            p_adjusted=[p_adjusted[index] if p_adjusted is not None else family_p(comp)],
            confidence=comp.confidence,
            refuse_unjudged=False,
        )
        finding = _finding(comp, name, gate, sources[index] if sources else None)
        if finding is not None:
            out.append(finding)
    return out


def family_p(comp: Any) -> float | None:
    """The p-value the comparison's verdict follows: adjusted over its family (compare's candidates, run's
    metrics x candidates) when it has one, else its own."""
    return comp.p_value if comp.p_adjusted is None else comp.p_adjusted


def _finding(comp: Any, name: str, gate: Any, source: str | None) -> Finding | None:
    """One comparison's finding: an error where the gate fails, a warning where it cannot judge or the change
    is worse but not proven beyond the threshold; None otherwise."""
    limit = f"{comp.threshold:g}%" if comp.threshold is not None else "0%"
    ci = comp.ci_pct
    change = f"{comp.delta_pct:+.2f}% [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci is not None else f"{comp.delta_pct:+.2f}%"
    change = change if math.isfinite(comp.delta_pct) else "n/a"  # (as the table says it)
    if gate.failed:
        said = f"{gate.hits[0].direction}: {change}, proven beyond the threshold {limit}{_p_words(comp)}"
        return Finding("error", name, said, source)
    if comp.verdict == "cannot judge" or gate.unjudged:
        return Finding("warning", name, f"cannot judge: {change}", source)
    if _worse(comp):
        return Finding(
            "warning", name, f"worse: {change}, not proven beyond the threshold {limit}{_p_words(comp)}", source
        )
    return None


def _p_words(comp: Any) -> str:
    """The p-value the verdict follows, naming the family's adjustment (``; Holm-adjusted p 0.012``)."""
    from abstat.render.units import format_p
    from abstat.report.adjust import ADJUSTED_NAMES

    name = ADJUSTED_NAMES.get(comp.adjustment, "")
    return f"; {name + '-adjusted ' if name else ''}p {format_p(family_p(comp))}"


def _worse(comp: Any) -> bool:
    return comp.verdict == "slower" or "(worse)" in comp.verdict


def github_commands(found: Sequence[Finding]) -> str:
    lines = []
    for item in found:
        props = f" title={_property('abstat: ' + item.title)}"
        if item.source:
            props = f" file={_property(item.source)}," + props.lstrip()
        lines.append(f"::{item.level}{props}::{_data(item.message)}")
    return "".join(line + "\n" for line in lines)


def github_summary(markdown_table: str, found: Sequence[Finding], title: str = "abstat") -> str:
    errors = sum(1 for f in found if f.level == "error")
    warnings = len(found) - errors
    verdict = (
        f"**{errors} regression(s) proven beyond the threshold**"
        if errors
        else "No regression proven beyond the threshold"
    )
    lines = [f"### {escape.markdown(title)}", "", verdict + (f"; {warnings} warning(s)." if warnings else "."), ""]
    for item in found:
        lines.append(
            f"- {'**error**' if item.level == 'error' else 'warning'}: "
            f"{escape.markdown(item.title)}: {escape.markdown(item.message)}"
        )
    if found:
        lines.append("")
    return "\n".join(lines) + "\n" + markdown_table


def gitlab_code_quality(found: Sequence[Finding]) -> str:
    issues = []
    for item in found:
        digest = hashlib.sha256(f"abstat\0{item.title}\0{item.level}".encode("utf-8", "surrogatepass"))
        issues.append(
            {
                "description": escape.terminal(f"{item.title}: {item.message}"),
                "check_name": "abstat-regression" if item.level == "error" else "abstat-warning",
                "fingerprint": digest.hexdigest(),
                "severity": "major" if item.level == "error" else "minor",
                "location": {"path": escape.terminal(item.source or "abstat"), "lines": {"begin": 1}},
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def render_comparisons(
    comparisons: Sequence[Any], fmt: str, *, unit: str | None = None, metric: str | None = None, split: bool = False
) -> Any:
    """``github`` or ``gitlab`` for compare's comparisons; ``split``: github as
    (commands, summary) for the command that writes ``$GITHUB_STEP_SUMMARY``."""
    found = findings(comparisons)
    if fmt == "gitlab":
        return gitlab_code_quality(found)
    from abstat.render.compare_formats import _markdown

    commands, summary = github_commands(found), github_summary(_markdown(comparisons, unit, metric), found)
    return (commands, summary) if split else commands + summary


def render_report(report: Any, fmt: str, split: bool = False) -> Any:
    """``github`` or ``gitlab`` for a report's cells, judged on their adjusted p-values."""
    cells = report.comparisons
    found = findings(
        [c.comparison for c in cells],
        names=["/".join(v for v in (*c.row, c.column) if v) for c in cells],
        p_adjusted=[c.p_adjusted if c.p_adjusted is not None else (0.0 if c.significant else 1.0) for c in cells],
        sources=[c.sample_set.source for c in cells],
    )
    if fmt == "gitlab":
        return gitlab_code_quality(found)
    from abstat.render.matrix import render_markdown

    commands, summary = github_commands(found), github_summary(render_markdown(report), found)
    return (commands, summary) if split else commands + summary
