"""Audit what kernel developers paste (perf stat -r blocks, the kernel test robot's tables, mmtests,
``mean (sd)`` and per-run tables) with the same findings as a ministat block: the test recomputed
from N, mean and standard deviation (:func:`abstat.audit.judge.judge`: Welch's t as scipy's
``ttest_ind_from_stats(equal_var=False)`` gives it, power, samples needed), the printed change checked
against the printed means, and a verdict.  A block that cannot be read is named, never compared.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from abstat.audit.findings import Finding
from abstat.audit.judge import judge
from abstat.audit.kernel_blocks import Claim, PrintedChange, Row, Side, find_perf_blocks
from abstat.audit.kernel_lkp import find_lkp_tables
from abstat.audit.kernel_runs import find_listed_runs
from abstat.audit.kernel_tables import find_mean_sd, find_mmtests, find_per_run
from abstat.audit.kernel_unreadable import find_unreadable
from abstat.audit.records import BlockAudit, ComparisonAudit

KINDS = ("perf-stat", "lkp", "mmtests", "mean-sd", "per-run", "unreadable")
TITLES = {
    "perf-stat": "perf stat -r blocks",
    "lkp": "kernel test robot table",
    "mmtests": "mmtests table",
    "mean-sd": "mean (sd) table",
    "per-run": "per-run table",
    "unreadable": "tool output",
}


def find_claims(text: str, covered: set[int]) -> list[Claim]:
    """Every kernel tool's result in ``text`` outside the ``covered`` lines (ministat reports)."""
    lines = text.splitlines()
    claims: list[Claim] = []
    for finder in (find_perf_blocks, find_lkp_tables, find_mmtests):
        claims += [c for c in finder(lines) if c.line not in covered]
    taken = set(covered)
    _take_lines(taken, claims)
    for finder2 in (find_per_run, find_mean_sd, find_listed_runs):
        found = finder2(lines, taken)
        _take_lines(taken, found)
        claims += found
    claims += find_unreadable(lines, taken, found_other=bool(claims or covered))
    return sorted(claims, key=lambda c: c.line)


def _take_lines(taken: set[int], claims: list[Claim]) -> None:
    """The claims' lines (1-based) are taken: no later finder reads them."""
    for claim in claims:
        taken.update(range(claim.line, claim.end_line + 1))


def kernel_audits(text: str, covered: set[int], threshold: float | None) -> tuple[list[BlockAudit], set[int]]:
    """The audits of every kernel tool's result, and the lines they cover."""
    audits: list[BlockAudit] = []
    lines: set[int] = set()
    for claim in find_claims(text, covered):
        audits.append(audit_claim(claim, threshold))
        lines.update(range(claim.line, claim.end_line + 1))
    return audits, lines


def audit_claim(claim: Claim, threshold: float | None) -> BlockAudit:
    audit = BlockAudit(
        kind=claim.kind, line=claim.line, end_line=claim.end_line, command=claim.title, findings=list(claim.findings)
    )
    if not claim.readable:
        audit.findings.append(
            Finding(
                "unreadable",
                "warning",
                f"{TITLES[claim.kind]}: nothing in it could be read as numbers to compare; it is not audited",
            )
        )
    for row in claim.rows:
        for side in row.sides:
            audit.datasets.append(
                {
                    "name": side.label,
                    "metric": row.metric,
                    "line": row.line,
                    "n": side.n,
                    "avg": side.mean,
                    "stddev": side.sd,
                    "how": side.how,
                }
            )
        base = row.sides[0]
        for index, cand in enumerate(row.sides[1:]):
            printed = row.changes[index] if index < len(row.changes) else None
            audit.comparisons.append(_compare(row, base, cand, printed, threshold))
    return audit


def _compare(
    row: Row, base: Side, cand: Side, printed: PrintedChange | None, threshold: float | None
) -> ComparisonAudit:
    comparison = ComparisonAudit(
        baseline=base.label,
        candidate=cand.label,
        line=row.line,
        printed=None,
        recomputation=None,
        consistent=None,
        dialect=None,
        judgement=None,
        metric=row.metric,
    )
    percent = (cand.mean - base.mean) * 100.0 / base.mean if base.mean > 0 else None  # else undefined (judge.py)
    comparison.printed_values = {
        "baseline_avg": base.mean,
        "candidate_avg": cand.mean,
        "change": None if printed is None else printed.value,
        "change_is_percent": None if printed is None else float(printed.percent),
    }
    comparison.recomputed_values = {"difference": cand.mean - base.mean, "percent": percent}
    out = comparison.findings
    if printed is not None:
        _check_change(comparison, base, cand, printed, percent)
    missing = _why_not_judged(base, cand)
    if missing:
        out.append(Finding("not_judged", "warning", f"verdict: not judged -- {missing}"))
        return comparison
    _judge(comparison, base, cand, printed, threshold)
    return comparison


def _check_change(
    comparison: ComparisonAudit, base: Side, cand: Side, printed: PrintedChange, percent: float | None
) -> None:
    """Whether the printed change follows from the printed means (a finding when it does not)."""
    comparison.consistent = _printed_fits(base, cand, printed)
    if comparison.consistent is False:
        difference = cand.mean - base.mean
        shown = f"{percent:+.4g}%" if percent is not None and printed.percent else f"{difference:+.6g}"
        comparison.findings.append(
            Finding(
                "inconsistent",
                "error",
                f"printed change {printed.text} does not follow from "
                f"the printed values {base.mean_text} and {cand.mean_text} ({shown})",
            )
        )


def _judge(
    comparison: ComparisonAudit, base: Side, cand: Side, printed: PrintedChange | None, threshold: float | None
) -> None:
    """abstat's verdict from N, mean and sd of both sides (each side's source of its spread named first)."""
    out = comparison.findings
    for side in (base, cand):
        if side.how:
            out.append(Finding("spread_source", "info", f"{side.label}: N={side.n}, sd={side.sd:.6g} ({side.how})"))
    assert base.n is not None and cand.n is not None and base.sd is not None and cand.sd is not None
    try:
        comparison.judgement = judge(
            base.n,
            base.mean,
            base.sd,
            cand.n,
            cand.mean,
            cand.sd,
            printed_difference=None if printed is None else printed.marked,
            threshold_pct=threshold,
        )
    except (ValueError, ArithmeticError) as err:
        out.append(Finding("not_judged", "warning", f"could not re-judge: {err}"))
        return
    out.append(_verdict(comparison))
    out.extend(comparison.judgement.findings)


def _why_not_judged(base: Side, cand: Side) -> str | None:
    reasons = []
    if base.n is None or cand.n is None:
        reasons.append("the number of runs is not given")
    elif base.n < 2 or cand.n < 2:
        return "one run on a side: no spread"
    no_sd = _no_sd(base, cand)
    if no_sd:
        reasons.append(no_sd)
    if reasons:
        return "; ".join(reasons)
    if not _finite(base, cand):
        return "a value is not finite"
    return None


def _finite(base: Side, cand: Side) -> bool:
    """Both means and both standard deviations (those given) are finite."""
    return all(math.isfinite(x) for x in (base.mean, cand.mean, base.sd or 0.0, cand.sd or 0.0))


def _no_sd(base: Side, cand: Side) -> str | None:
    """The sides printed without a standard deviation (and why), or None."""
    missing = [side for side in (base, cand) if side.sd is None]
    if not missing:
        return None
    return "no standard deviation for " + " and ".join(
        f"{side.label}" + (f" ({side.how})" if side.how else "") for side in missing
    )


def _verdict(comparison: ComparisonAudit) -> Finding:
    judgement = comparison.judgement
    assert judgement is not None
    ci = judgement.welch.get("ci") if judgement.welch else None
    if not ci:
        return Finding("verdict", "info", "verdict: no test applies (both spreads are 0)")
    low, high = ci  # type: ignore[misc]
    p = judgement.welch.get("p")
    if low > 0 or high < 0:
        return Finding("verdict", "info", f"verdict: DIFFERENCE at {judgement.confidence:g}% (Welch's t, p = {p:.2g})")
    return Finding(
        "verdict", "info", f"verdict: no difference proven at {judgement.confidence:g}% (Welch's t, p = {p:.2g})"
    )


def _half_unit(text: str) -> float:
    """Half a unit of the last digit ``text`` prints (``1.792e+08``: 50000)."""
    try:
        exponent = Decimal(text.replace(",", "").rstrip("%")).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    return 0.5 * 10.0**exponent if exponent <= 308 else math.inf  # 31e9993515: beyond every double


def _bounds(side: Side) -> tuple[float, float]:
    """The interval the printed mean stands for: rounded (half a unit either way), or truncated toward
    zero to an integer (LKP's ``%d``: up to one unit away from zero)."""
    if side.truncated:
        return (side.mean, side.mean + 1.0) if side.mean >= 0 else (side.mean - 1.0, side.mean)
    half = _half_unit(side.mean_text)
    return side.mean - half, side.mean + half


def _printed_fits(base: Side, cand: Side, printed: PrintedChange) -> bool | None:
    """Whether ``printed`` follows from the printed means, allowing for every rounding."""
    hp = _half_unit(printed.text)
    values = _corner_changes(base, cand, printed.percent)
    if values is None:
        return None
    low, high = min(values), max(values)
    slack = hp + 1e-9 * max(1.0, abs(printed.value))
    fits = low - slack <= printed.value <= high + slack
    if printed.gain:
        fits = fits or low - slack <= -printed.value <= high + slack
    return fits


def _corner_changes(base: Side, cand: Side, percent: bool) -> list[float] | None:
    """The change (in percent, or absolute) between each pair of ends of the printed means' intervals; None
    for a percentage of a baseline whose interval holds 0."""
    corners = [(b, c) for b in _bounds(base) for c in _bounds(cand)]
    if not percent:
        return [c - b for b, c in corners]
    low_base, high_base = _bounds(base)
    if any(b == 0 for b, _ in corners) or low_base * high_base <= 0:
        return None
    return [(c - b) * 100.0 / b for b, c in corners]


# --------------------------------------------------------------------------
# text

_MARK = {"error": "!!", "warning": " !", "info": " -"}


def block_lines(block: BlockAudit) -> list[str]:
    """The human lines of a kernel block's audit."""
    state = {True: "consistent", False: "INCONSISTENT", None: "not checked"}[block.consistent]
    out = [f"line {block.line}: {block.command} -- {state}"]
    out.extend(f"  {_MARK[f.severity]} {f.message}" for f in block.findings)
    for comparison in block.comparisons:
        out.append(_comparison_head(comparison))
        out.extend(f"    {_MARK[f.severity]} {f.message}" for f in comparison.findings)
    return out


def _recomputed_change(recomputed: dict[str, float | None], absolute: bool) -> str:
    """The recomputed change: in percent, unless the text printed an absolute one (or none can be had)."""
    change = recomputed.get("percent")
    if isinstance(change, float) and not absolute:
        return f"{change:+.3g}%"
    return f"{recomputed.get('difference') or 0.0:+.6g}"


def _comparison_head(comparison: ComparisonAudit) -> str:
    """A comparison's line: the means, the recomputed change and the printed one."""
    values = comparison.printed_values or {}
    absolute = values.get("change_is_percent") == 0.0
    shown = _recomputed_change(comparison.recomputed_values or {}, absolute)
    printed = values.get("change")
    return (
        f"  {comparison.metric}: {comparison.candidate} vs {comparison.baseline}: "
        f"{values.get('baseline_avg'):.6g} -> {values.get('candidate_avg'):.6g} ({shown}"
        + (f"; printed {printed:+g}{'' if absolute else '%'}" if printed is not None else "")
        + ")"
    )
