"""Audit a text: every ministat report and every table of bare averages.

:func:`audit_text` is the public entry point (``abstat.audit_text``); it
returns an :class:`AuditReport` whose ``to_dict()`` is the JSON contract of
``abstat audit --format json``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from abstat.audit.averages import find_averages
from abstat.audit.averages_audit import audit_averages
from abstat.audit.blocks import PrintedComparison
from abstat.audit.findings import Finding
from abstat.audit.judge import judge
from abstat.audit.printed import Printed, format_g
from abstat.audit.recompute import check, recompute
from abstat.audit.records import BlockAudit, ComparisonAudit
from abstat.audit.scan import Block, DataSet, find_blocks
from abstat.stats.student import CONFIDENCE_LEVELS

DEFAULT_CONFIDENCE = 95.0


@dataclass
class AuditReport:
    source: str
    blocks: list[BlockAudit]
    threshold_pct: float | None = None

    @property
    def comparisons(self) -> list[ComparisonAudit]:
        return [c for b in self.blocks if b.kind == "ministat" for c in b.comparisons if c.printed is not None]

    @property
    def consistent(self) -> bool:
        """No printed comparison contradicts its vitals and no report is damaged."""
        return not any(b.consistent is False or b.damaged for b in self.blocks)

    @property
    def exit_status(self) -> int:
        return 0 if self.consistent else 1

    def counts(self) -> dict[str, int]:
        comparisons = self.comparisons
        kinds = Counter(b.kind for b in self.blocks)
        verdicts = Counter(c.consistent for c in comparisons)  # True, False or None (unchecked)
        return {
            "ministat_reports": kinds["ministat"],
            "averages_claims": kinds["averages"],
            "damaged_reports": sum(1 for b in self.blocks if b.damaged),
            "printed_comparisons": len(comparisons),
            "consistent": verdicts[True],
            "inconsistent": verdicts[False],
            "unchecked": verdicts[None],
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "consistent": self.consistent,
            "exit_status": self.exit_status,
            "threshold_pct": self.threshold_pct,
            "counts": self.counts(),
            "blocks": [b.to_dict() for b in self.blocks],
        }


def audit_text(text: str, *, threshold: float | None = None, source: str = "<text>") -> AuditReport:
    """Audit every ministat report and every bare-averages claim in ``text``.

    ``threshold``: practical threshold in percent (the change matters only
    beyond +/- threshold).
    """
    blocks = find_blocks(text)
    audits = [_audit_block(block, threshold) for block in blocks]
    covered: set[int] = set()
    for block in blocks:
        covered.update(range(block.line, block.end_line + 1))
    from abstat.audit.kernel_audit import kernel_audits  # perf stat, LKP, mmtests, mean (sd), per-run tables

    kernel, kernel_lines = kernel_audits(text, covered, threshold)
    audits += kernel
    covered |= kernel_lines
    audits += [audit_averages(claim) for claim in find_averages(text, covered)]
    audits.sort(key=lambda b: b.line)
    return AuditReport(source=source, blocks=audits, threshold_pct=threshold)


# ----------------------------------------------------------------------------
# ministat reports


FAR_OUT = 10.0  # a Max this many times the Median: far outliers (interrupts, preemption) drive the block


def _label(dataset: DataSet) -> str:
    return dataset.name if dataset.name else dataset.symbol


def _vitals_findings(ds: DataSet) -> list[Finding]:
    """Relations every real sample satisfies, checked on the rounded vitals."""
    out: list[Finding] = []
    who = f"{ds.symbol} {_label(ds)}" if ds.name else ds.symbol
    if ds.n < 3:
        out.append(
            Finding("implausible_vitals", "error", f"{who}: N = {ds.n}, but ministat refuses fewer than 3 values")
        )
    if ds.min.low > ds.max.high:
        out.append(Finding("implausible_vitals", "error", f"{who}: Min {ds.min.text} is above Max {ds.max.text}"))
        return out
    out += _location_findings(ds, who)
    if ds.n >= 2 and not math.isnan(ds.stddev.value):
        out += _spread_findings(ds, who)
    return out


def _location_findings(ds: DataSet, who: str) -> list[Finding]:
    """Median and Avg inside Min..Max; a Max far above the Median."""
    out: list[Finding] = []
    for name, value in (("Median", ds.median), ("Avg", ds.avg)):
        if name == "Avg" and math.isinf(value.value) and math.isfinite(ds.max.value - ds.min.value):
            out.append(_overflowed_sum(who, value))
        elif value.high < ds.min.low or value.low > ds.max.high:
            out.append(Finding("implausible_vitals", "error", f"{who}: {name} {value.text} lies outside Min..Max"))
    if ds.median.value > 0 and ds.max.value >= FAR_OUT * ds.median.value:  # interrupts in the timed window
        out.append(
            Finding(
                "far_outliers",
                "warning",
                f"{who}: Max {ds.max.text} is {ds.max.value / ds.median.value:.0f}x "
                "the Median: a few far values move Avg, Stddev and Student's t; this block's verdict is "
                "theirs, not the bulk's (abstat compare uses the ranks)",
            )
        )
    return out


def _overflowed_sum(who: str, avg: Printed) -> Finding:
    """An Avg of inf between finite Min and Max: ministat's sum of the values overflowed (what it prints then)."""
    return Finding(
        "overflow",
        "warning",
        f"{who}: Avg {avg.text}: the sum of the values overflowed double precision (ministat adds them before "
        "dividing), so the average and the stddev are not the data's",
    )


def _spread_findings(ds: DataSet, who: str) -> list[Finding]:
    """Avg and Stddev against what N values between Min and Max allow (N >= 2, a Stddev printed)."""
    out: list[Finding] = []
    span_low = max(0.0, ds.max.low - ds.min.high)
    span_high = ds.max.high - ds.min.low
    # Both extremes are in the sample: the mean is at least 1/n of the range from each.
    if ds.avg.high < ds.min.low + span_low / ds.n or ds.avg.low > ds.max.high - span_low / ds.n:
        out.append(
            Finding("implausible_vitals", "error", f"{who}: Avg {ds.avg.text} too close to Min or Max for N = {ds.n}")
        )
    upper = span_high * math.sqrt(ds.n / (4.0 * (ds.n - 1)))
    lower = span_low / math.sqrt(2.0 * (ds.n - 1))
    # Classic ministat's one-pass variance carries a rounding error of
    # about |x| * sqrt(n * eps) in the stddev (constant data can print a
    # stddev of 1e-6): allow for it before calling a stddev impossible.
    one_pass_error = 8.0 * max(abs(ds.min.value), abs(ds.max.value)) * math.sqrt(ds.n * 2.2e-16)
    # ... and squares below double precision's normal range (values below 1.5e-154) keep an absolute error
    # of half the smallest subnormal each: values of 1e-320 give a stddev of 0 in both dialects
    one_pass_error += 4.0 * math.sqrt(ds.n * 5e-324)
    if ds.stddev.low > upper * (1 + 1e-9) + one_pass_error:
        out.append(
            Finding(
                "implausible_vitals",
                "error",
                f"{who}: Stddev {ds.stddev.text} exceeds the largest possible for this range ({format_g(upper)})",
            )
        )
    if ds.stddev.high < lower * (1 - 1e-6) - one_pass_error:
        out.append(
            Finding(
                "implausible_vitals",
                "error",
                f"{who}: Stddev {ds.stddev.text} is below the smallest possible for this range ({format_g(lower)})",
            )
        )
    return out


def _dialect_name(dialects: list[str]) -> str | None:
    if len(dialects) == 2:
        return "both"
    return dialects[0] if dialects else None


def _audit_block(block: Block, threshold: float | None) -> BlockAudit:
    audit = BlockAudit(
        kind="ministat",
        line=block.line,
        end_line=block.end_line,
        command=block.command,
        datasets=[d.to_dict() for d in block.datasets],
        problems=[p.to_dict() for p in block.problems],
        damaged=block.damaged,
    )
    for ds in block.datasets:
        audit.findings.extend(_vitals_findings(ds))
    by_symbol = {d.symbol: d for d in block.datasets}
    fits: set[str] | None = None
    for symbol in _candidate_symbols(block):
        comparison, dialects = _audit_comparison(block, by_symbol.get("x"), by_symbol.get(symbol), symbol, threshold)
        audit.comparisons.append(comparison)
        fits = _narrowed(fits, dialects)
    _settle_dialect(audit, block, fits)
    return audit


def _narrowed(fits: set[str] | None, dialects: list[str] | None) -> set[str] | None:
    """The dialects every comparison checked so far fits, narrowed by one more comparison's (None: none checked)."""
    if not dialects:
        return fits
    return set(dialects) if fits is None else fits & set(dialects)


def _settle_dialect(audit: BlockAudit, block: Block, fits: set[str] | None) -> None:
    """The block's dialect: the one every checked comparison fits (a finding when none or a -q output says classic)."""
    if fits is not None:
        if not fits:
            audit.findings.append(
                Finding("dialect_conflict", "error", "the comparisons of this report fit different ministat dialects")
            )
        else:
            audit.dialect = _dialect_name(sorted(fits))
    if not block.has_header and not block.legend and audit.dialect == "classic":
        audit.findings.append(
            Finding(
                "dialect_conflict",
                "warning",
                "no legend and no header (-q output), which only FreeBSD's ministat prints",
            )
        )


def _candidate_symbols(block: Block) -> list[str]:
    """The symbols compared with ``x``: the data sets', the damaged ones', then the printed comparisons'."""
    symbols = [d.symbol for d in block.datasets if d.symbol != "x"]
    symbols += sorted(s for s in block.damaged_symbols if s != "x")
    symbols += [s for s in block.comparisons if s not in symbols]
    return symbols


def _audit_comparison(
    block: Block, base: DataSet | None, cand: DataSet | None, symbol: str, threshold: float | None
) -> tuple[ComparisonAudit, list[str] | None]:
    """The audit of ``symbol`` against ``x``, and the dialects its printed comparison fits (None: not checked)."""
    printed = block.comparisons.get(symbol)
    confidence = printed.confidence if printed else (block.command_confidence or DEFAULT_CONFIDENCE)
    comparison = _new_comparison(block, base, cand, symbol, printed)
    if base is None or cand is None:
        missing = "baseline" if base is None else "candidate"
        comparison.findings.append(
            Finding("damaged", "error", f"the {missing} vitals line is damaged: nothing can be recomputed")
        )
        return comparison, None
    if not _can_recompute(comparison, base, cand, confidence):
        return comparison, None
    dialects = _recompute(comparison, base, cand, confidence, printed)
    if not _has_nan(base, cand):
        _rejudge(comparison, base, cand, confidence, printed, threshold)
    return comparison, dialects


def _has_nan(base: DataSet, cand: DataSet) -> bool:
    """A mean or a standard deviation printed as nan: nothing to re-judge."""
    return any(math.isnan(v) for v in (base.stddev.value, cand.stddev.value, base.avg.value, cand.avg.value))


def _new_comparison(
    block: Block, base: DataSet | None, cand: DataSet | None, symbol: str, printed: PrintedComparison | None
) -> ComparisonAudit:
    """The comparison's names (the legend's when a vitals line is damaged) and line, nothing judged yet."""
    return ComparisonAudit(
        baseline=_label(base) if base else block.legend.get("x", "x"),
        candidate=_label(cand) if cand else block.legend.get(symbol, symbol),
        line=printed.line if printed else (cand.line if cand else None),
        printed=printed,
        recomputation=None,
        consistent=None,
        dialect=None,
        judgement=None,
    )


def _recompute(
    comparison: ComparisonAudit, base: DataSet, cand: DataSet, confidence: float, printed: PrintedComparison | None
) -> list[str] | None:
    """Check the printed comparison (the dialects it fits), or recompute one ministat -n did not print (None)."""
    if printed is not None:
        return _check_printed(comparison, base, cand, printed)
    comparison.recomputation = recompute(base, cand, confidence)
    comparison.findings.append(
        Finding("not_printed", "info", "no comparison printed (ministat -n?): re-judged from the vitals only")
    )
    return None


def _can_recompute(comparison: ComparisonAudit, base: DataSet, cand: DataSet, confidence: float) -> bool:
    """False, with the finding (and a printed comparison inconsistent), when ministat has no t table for the
    confidence or a sample has fewer than 2 values."""
    if confidence not in CONFIDENCE_LEVELS:
        comparison.findings.append(
            Finding("unknown_confidence", "error", f"ministat has no t table column for {confidence:g}% confidence")
        )
    elif base.n < 2 or cand.n < 2:  # damaged or made-up vitals: no t test has such a sample
        comparison.findings.append(
            Finding(
                "implausible_vitals",
                "error",
                "N below 2: nothing can be recomputed (ministat refuses fewer than 3 values)",
            )
        )
    else:
        return True
    if comparison.printed is not None:
        comparison.consistent = False
    return False


def _check_printed(comparison: ComparisonAudit, base: DataSet, cand: DataSet, printed: PrintedComparison) -> list[str]:
    """Recompute the printed comparison from the vitals; the dialects it fits."""
    result = check(base, cand, printed)
    comparison.recomputation = result
    comparison.consistent = result.consistent
    comparison.dialect = _dialect_name(result.dialects)
    for reason in result.reasons:
        severity = "error" if result.consistent is False else "warning"
        comparison.findings.append(Finding("inconsistent" if severity == "error" else "unchecked", severity, reason))
    if result.consistent and comparison.dialect == "both":
        comparison.findings.append(
            Finding(
                "dialect_undecided",
                "info",
                "the relative interval prints the same in both dialects (classic e/avg and freebsd)",
            )
        )
    return result.dialects


def _rejudge(
    comparison: ComparisonAudit,
    base: DataSet,
    cand: DataSet,
    confidence: float,
    printed: PrintedComparison | None,
    threshold: float | None,
) -> None:
    """Judge the comparison again from the vitals (abstat's verdict); a finding when the values defeat it."""
    try:
        comparison.judgement = judge(
            base.n,
            base.avg.value,
            base.stddev.value,
            cand.n,
            cand.avg.value,
            cand.stddev.value,
            confidence=confidence,
            printed_difference=None if printed is None else printed.difference_proven,
            threshold_pct=threshold,
            varied=any(side.min.value < side.max.value for side in (base, cand)),
        )
    except (ValueError, ArithmeticError) as err:  # extreme values: say so, never crash
        comparison.findings.append(Finding("not_judged", "warning", f"could not re-judge: {err}"))
    else:
        comparison.findings.extend(comparison.judgement.findings)
