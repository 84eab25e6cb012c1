"""Render an :class:`~abstat.audit.report.AuditReport` as text or JSON."""

from __future__ import annotations

import json
import math
from typing import cast

from abstat.audit.blocks import PrintedComparison
from abstat.audit.printed import Printed, format_g
from abstat.audit.recompute import Recomputation
from abstat.audit.report import AuditReport, BlockAudit, ComparisonAudit

_MARK = {"error": "!!", "warning": " !", "info": " -"}


def render(report: AuditReport, fmt: str = "text") -> str:
    """``fmt``: ``text`` (the human report) or ``json``."""
    return to_json(report) if fmt == "json" else render_text(report)


def _clean(value: object) -> object:
    """NaN/inf are not JSON: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def to_json(report: AuditReport) -> str:
    return json.dumps(_clean(report.to_dict()), indent=2, allow_nan=False) + "\n"


def _state(consistent: bool | None) -> str:
    return {True: "consistent", False: "INCONSISTENT", None: "not checked"}[consistent]


def _g(value: object, digits: int = 6) -> str:
    """A number of a data set's dict (None: nan, as JSON writes it) as %g prints it."""
    return "nan" if value is None else format_g(cast(float, value), digits)


def _span(bounds: tuple[float, float]) -> str:
    """What %g prints anywhere in a recomputed range: one value, or low..high."""
    low, high = (_g(b) for b in bounds)
    return low if low == high else f"{low}..{high}"


def render_text(report: AuditReport) -> str:
    lines = [_report_head(report)]
    if not report.blocks:
        lines.append("no ministat report, no kernel tool's result and no claim from averages found")
    for block in report.blocks:
        lines.append("")
        lines.extend(_block_lines(block))
    return "\n".join(lines) + "\n"


def _report_head(report: AuditReport) -> str:
    """The source and what was found in it: reports, comparisons and how many are consistent, claims."""
    counts = report.counts()
    averages = f"; {counts['averages_claims']} claim(s) from bare averages" if counts["averages_claims"] else ""
    kernel = sum(1 for b in report.blocks if b.kind not in ("ministat", "averages"))
    averages += f"; {kernel} kernel tool result(s)" if kernel else ""
    if counts["ministat_reports"] == 0:
        return f"{report.source}: no ministat report{averages}"
    return (
        f"{report.source}: {counts['ministat_reports']} ministat report(s), "
        f"{counts['printed_comparisons']} printed comparison(s): {counts['consistent']} consistent, "
        f"{counts['inconsistent']} inconsistent, {counts['unchecked']} not checkable"
        + (f"; {counts['damaged_reports']} damaged" if counts["damaged_reports"] else "")
        + averages
    )


def _block_lines(block: BlockAudit) -> list[str]:
    if block.kind not in ("ministat", "averages"):  # a kernel tool's result (abstat.audit.kernel_audit)
        from abstat.audit.kernel_audit import block_lines

        return block_lines(block)
    if block.kind == "averages":
        return _averages_lines(block)
    return _ministat_lines(block)


def _ministat_lines(block: BlockAudit) -> list[str]:
    """A ministat report: its title, problems, data sets, findings and comparisons."""
    out = [_ministat_title(block)]
    for problem in block.problems:
        mark = "!!" if problem["severity"] == "error" else " !"
        out.append(f"  {mark} line {problem['line']}: {problem['message']}")
    for dataset in block.datasets:
        name = f" {dataset['name']}" if dataset["name"] else ""
        out.append(
            f"    {dataset['symbol']}{name}: N={dataset['n']} avg={_g(dataset['avg'], 8)} "
            f"stddev={_g(dataset['stddev'], 8)}"
        )
    out.extend(f"  {_MARK[f.severity]} {f.message}" for f in block.findings)
    for comparison in block.comparisons:
        out.extend(_comparison_lines(comparison))
    return out


def _ministat_title(block: BlockAudit) -> str:
    title = f"line {block.line}: ministat report"
    if block.command:
        title += f" ({block.command})"
    title += _block_state(block)
    if block.dialect:
        title += ", dialect: " + ("classic or freebsd (both fit)" if block.dialect == "both" else block.dialect)
    return title


def _block_state(block: BlockAudit) -> str:
    """Consistent, inconsistent or not checked; DAMAGED beside it (or instead, when nothing was checked)."""
    if block.damaged and block.consistent is None:
        return " -- DAMAGED"
    return f" -- {_state(block.consistent)}" + (", DAMAGED" if block.damaged and block.consistent is False else "")


def _averages_lines(block: BlockAudit) -> list[str]:
    """A claim from bare averages: its rows (label: values), its findings and its comparisons' but the
    "no spread" each repeats."""
    head = f"line {block.line}: averages without spread"
    if block.mention:
        head += f' ("{block.mention}")'
    out = [head]
    out.extend(f"    {label}: {', '.join(values)}" for label, values in _average_rows(block).items())
    out.extend(f"  {_MARK[f.severity]} {f.message}" for f in block.findings)
    for comparison in block.comparisons:
        out.extend(f"  {_MARK[f.severity]} {f.message}" for f in comparison.findings if f.code != "no_spread")
    return out


def _average_rows(block: BlockAudit) -> dict[str, list[str]]:
    """The claim's rows as printed: each label with its values (``metric value`` when there are columns)."""
    rows: dict[str, list[str]] = {}
    for dataset in block.datasets:
        unit = f" {dataset['unit']}" if dataset.get("unit") else ""
        label = str(dataset["name"])
        metric = str(dataset.get("metric") or "value")
        if metric != "value" and label.endswith(" " + metric):
            label = label[: -len(metric) - 1]
            rows.setdefault(label, []).append(f"{metric} {_g(dataset['avg'])}{unit}")
        else:
            rows.setdefault(label, []).append(f"{_g(dataset['avg'])}{unit}")
    return rows


def _comparison_lines(comparison: ComparisonAudit) -> list[str]:
    out = [_comparison_head(comparison)]
    printed, result = comparison.printed, comparison.recomputation
    if printed is not None and printed.difference_proven and result is not None:
        out += _difference_lines(printed, result)
    elif printed is not None and result is not None and result.spread_known:
        out.append(_no_difference_line(printed, result))
    out.extend(f"    {_MARK[f.severity]} {f.message}" for f in comparison.findings)
    return out


def _no_difference_line(printed: PrintedComparison, result: Recomputation) -> str:
    """A printed "No difference proven" beside the recomputed difference and half-width."""
    verdict = "difference" if result.central["margin"] > 0 else "no difference"
    return (
        f"      printed: no difference proven at {printed.confidence:g}%; recomputed: |{_g(result.central['difference'])}| "
        f"vs half-width {_g(result.central['half_width'])} -> {verdict}"
    )


def _comparison_head(comparison: ComparisonAudit) -> str:
    """Who against whom, and whether the printed comparison (and which dialect) fits."""
    head = f"  {comparison.candidate} vs {comparison.baseline}"
    if comparison.printed is None:
        return head + ": nothing printed"
    head += f" (line {comparison.line}): {_state(comparison.consistent)}"
    if comparison.dialect:
        head += " -- " + ("both dialects fit" if comparison.dialect == "both" else f"{comparison.dialect} dialect")
    return head


def _difference_lines(printed: PrintedComparison, result: Recomputation) -> list[str]:
    """A printed "Difference at ..." beside the ranges recomputed from the vitals."""

    def show(value: Printed | None) -> str:
        return "?" if value is None else value.text

    out = [
        f"      printed:    {show(printed.difference)} +/- {show(printed.half_width)}, "
        f"{show(printed.percent)}% +/- {show(printed.percent_half_width)}%, pooled s = {show(printed.pooled_s)}"
    ]
    r = result.ranges
    if result.overflow:
        out.append("      recomputed: nothing (the vitals overflow double precision)")
    elif "percent" in r and not result.spread_known:
        out.append(
            f"      recomputed: {_span(r['difference'])} +/- ?, {_span(r['percent'])}% +/- ?%, pooled s = ? "
            "(a stddev is nan)"
        )
    elif "percent" in r:
        out.append(
            f"      recomputed: {_span(r['difference'])} +/- {_span(r['half_width'])}, {_span(r['percent'])}% +/- "
            f"{_span(r['percent_half_width_classic'])}% (classic) / {_span(r['percent_half_width_freebsd'])}% (freebsd), "
            f"pooled s = {_span(r['pooled_s'])}  [t = {result.t:g}, df = {result.df}]"
        )
    return out
