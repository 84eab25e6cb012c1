"""Text, Markdown and JSON of an ``abstat noise`` report."""

from __future__ import annotations

from typing import Any

from abstat.errors import named
from abstat.render.escape import json_text
from abstat.render.escape import markdown as md_escape
from abstat.render.escape import terminal as terminal_safe
from abstat.render.units import format_change, format_p, format_size_pct, format_value


def _needed(metric: Any) -> str:
    return ", ".join(f"{target}: {'>10^7' if n is None else f'{n:,}'}" for target, n in metric.samples_needed.items())


def _p(value: float, digits: int = 2) -> str:
    return format_p(value, digits)


def _stability_line(metric: Any) -> str:
    s = metric.stability
    if s is None:
        return "too few runs"
    step = f"Pettitt p {_p(s.step.p_value)}" + (f" (after run {s.step.position})" if s.step.p_value < 0.05 else "")
    return (
        f"trend rho {s.trend.statistic:+.2f} (p {_p(s.trend.p_value)}); lag-1 autocorrelation"
        f" {s.autocorrelation.statistic:+.2f} (p {_p(s.autocorrelation.p_value)}); step {step}"
    )


def _between(metric: Any) -> str:
    if metric.between_share is None:
        return f"n/a ({metric.invocations} invocation{'s' if metric.invocations != 1 else ''})"
    return (
        f"{metric.between_share:.0%} of the variance (F test p {_p(metric.between_p)}) over"
        f" {metric.invocations} invocations, {metric.boots} boot{'s' if metric.boots != 1 else ''}"
    )


def _blocks(metric: Any) -> str:
    b = metric.blocks
    if b is None:
        return "too few runs (2 blocks of 8 needed)"
    return (
        f"{b.calls} of {b.comparisons} pairs of {b.blocks} blocks x {b.block_size} runs called a difference"
        f" ({b.rate:.0%}; {b.alpha:.0%} per pair expected by chance);"
        f" Kruskal-Wallis across the blocks p {_p(b.p_value)}"
    )


def _aa(metric: Any) -> str:
    if getattr(metric, "aa_cannot", ""):
        return f"cannot judge ({terminal_safe(metric.aa_cannot)})"
    if metric.aa_delta_pct is None:
        return "n/a"
    return format_change(metric.aa_delta_pct, metric.aa_ci_pct) + (
        " DIFFERENT" if metric.aa_significant else " (no difference)"
    )


def render_text(header: dict[str, Any], metrics: list[Any]) -> str:
    lines = [terminal_safe(_title(header)), *(terminal_safe(w) for w in _warnings(header)), ""]
    for m in metrics:
        lines.append(
            f"{terminal_safe(m.metric)}"
            + (f" ({terminal_safe(m.unit)})" if m.unit else "")
            + f": mean {format_value(m.mean, m.unit)}, spread {format_size_pct(m.cv_pct)} (CV),"
            f" {format_size_pct(m.robust_cv_pct)} (MAD/median)"
        )
        n = "/".join(str(v) for v in m.runs.values())
        of = f" of the {m.estimand_label}" if getattr(m, "estimand_label", "") else ""
        lines.append(
            f"  detectable change{of} at n = {n} runs, 80% power, {m.confidence:.0%} confidence:"
            f" {format_size_pct(m.detectable_pct)}" + (f" ({m.unresolvable})" if getattr(m, "unresolvable", "") else "")
        )
        lines.append(f"  runs per variant needed for {_needed(m)}")
        level = f" (each test flags below p {_p(m.stability.alpha / 4, 3)})" if m.stability is not None else ""
        lines.append(f"  along the run order{level}: {_stability_line(m)}")
        lines.append(f"  between invocations: {_between(m)}")
        lines.append(f"  A/A: a vs b {_aa(m)}; disjoint blocks: {_blocks(m)}")
        lines.append(f"  verdict: {m.verdict()}")
        lines.extend(f"  note: {terminal_safe(note)}" for note in m.notes)
        lines.append("")
    if not metrics:
        lines.append("no metric has enough runs (at least 2 per variant)")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_markdown(header: dict[str, Any], metrics: list[Any]) -> str:
    lines = [f"### {md_escape(_title(header))}", "", *(f"- {md_escape(w)}" for w in _warnings(header))]
    lines += [""] if _warnings(header) else []
    lines.append(
        "| metric | mean | spread (CV) | detectable change | runs for 1% / 2% / 5% | drift, step,"
        " autocorrelation | between invocations | A/A block calls | stable |"
    )
    lines.append("|:---|---:|---:|---:|---:|:---|:---|---:|:---|")
    for m in metrics:
        needed = " / ".join("n/a" if v is None else str(v) for v in m.samples_needed.values())
        calls = f"{m.blocks.calls}/{m.blocks.comparisons} ({m.blocks.rate:.0%})" if m.blocks else "n/a"
        stable = {True: "yes", False: "**no**", None: "n/a"}[m.stable]
        lines.append(
            f"| {md_escape(m.metric)} | {md_escape(format_value(m.mean, m.unit))} | {format_size_pct(m.cv_pct)} |"
            f" {format_size_pct(m.detectable_pct)} | {needed} | {md_escape(_stability_line(m))} |"
            f" {md_escape(_between(m))} | {calls} | {stable} |"
        )
    lines.append("")
    for m in metrics:
        lines.append(f"- **{md_escape(m.metric)}**: {md_escape(m.verdict())}")
    return "\n".join(lines) + "\n"


def render_json(header: dict[str, Any], metrics: list[Any]) -> str:
    return json_text(dict(header, metrics=[m.to_dict() for m in metrics]))


def _warnings(header: dict[str, Any]) -> list[str]:
    """The header's warnings (``command-differs``: the stored runs ran different commands), with advice."""
    advice = {
        "command-differs": named(
            "; the analysis pools them; if that was not meant, use a new {experiment} name", "experiment"
        )
    }
    return [f"warning: {w['message']}{advice.get(w['code'], '')}" for w in header.get("warnings") or []]


def _title(header: dict[str, Any]) -> str:
    where = f" on host {header['host']}" if header.get("host") else ""
    return (
        f"abstat noise: experiment {header['experiment']!r}{where}: two identical variants (a, b), interleaved;"
        f" command: {header.get('command') or 'as stored'}"
    )


def render(header: dict[str, Any], metrics: list[Any], fmt: str = "text") -> str:
    return {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt](header, metrics)
