"""The audit of a table of bare averages (:mod:`abstat.audit.averages` finds them): no spread to judge
by, what to collect instead, and the change of each row against the baseline's with the run-to-run noise
it could be seen through."""

from __future__ import annotations

from abstat.audit.averages import AveragesClaim
from abstat.audit.findings import Finding
from abstat.audit.records import BlockAudit, ComparisonAudit
from abstat.comparison.analyses import negative_baseline
from abstat.stats import power as power_mod


def audit_averages(claim: AveragesClaim) -> BlockAudit:
    audit = BlockAudit(kind="averages", line=claim.line, end_line=claim.end_line, mention=claim.mention)
    runs = claim.runs
    for label, values in claim.rows:
        for column, value in zip(claim.columns, values, strict=False):
            audit.datasets.append(
                {
                    "name": label if len(claim.columns) == 1 else f"{label} {column}",
                    "metric": column,
                    "n": runs,
                    "min": None,
                    "max": None,
                    "median": None,
                    "avg": value,
                    "stddev": None,
                    "unit": claim.unit,
                }
            )
    how = f"averages of {runs} runs" if runs else "averages"
    audit.findings.append(
        Finding(
            "no_significance",
            "warning",
            f"only {how} are given, with no spread (no stddev, no min/max, no individual results): "
            "whether the differences are real or noise cannot be judged",
        )
    )
    per_variant = f"all {runs} individual results per variant" if runs else "every individual result per variant"
    audit.findings.append(
        Finding(
            "collect_instead",
            "info",
            f"collect instead: {per_variant} (one value per line, one file per variant) and compare them "
            "with `abstat compare` or ministat; at the least report N, mean and stddev per variant "
            "(name=n:mean:stddev)",
        )
    )
    if claim.rows:
        audit.comparisons.extend(_averages_comparisons(claim))
    return audit


def _averages_comparisons(claim: AveragesClaim) -> list[ComparisonAudit]:
    """Each row against the baseline's, column by column: the change, and the spread it needs to be seen."""
    runs = claim.runs
    base_index = claim.baseline_index()
    base_label, base_values = claim.rows[base_index]
    detectable = power_mod.detectable_effect_size(runs, runs) if runs and runs >= 2 else None
    comparisons = []
    for index, (label, values) in enumerate(claim.rows):
        if index == base_index:
            continue
        for column, base_value, value in zip(claim.columns, base_values, values, strict=False):
            comparisons.append(_average_change(claim, (base_label, label), column, (base_value, value), detectable))
    return comparisons


def _noise_bound(what: str, runs: int | None, change_text: str, noise: str) -> Finding:
    """How small the run-to-run noise must be for the change to be detectable with this many runs."""
    return Finding(
        "noise_bound",
        "info",
        f"{what}: with {runs} runs per variant, {change_text} is detectable (80% power, 95% confidence) "
        f"only if the run-to-run stddev is below {noise}",
    )


def _average_change(
    claim: AveragesClaim, labels: tuple[str, str], column: str, averages: tuple[float, float], detectable: float | None
) -> ComparisonAudit:
    """One column of a row against the baseline's: the change, with no spread to judge it by; relative to a
    baseline average above 0, else the difference in the data's unit with why (as compare and the Welch
    line of :mod:`abstat.audit.judge` say it)."""
    (base_label, label), (base_value, value) = labels, averages
    change = value - base_value
    percent = change * 100.0 / base_value if base_value > 0.0 else None
    comparison = ComparisonAudit(
        baseline=base_label,
        candidate=label,
        line=claim.line,
        printed=None,
        recomputation=None,
        consistent=None,
        dialect=None,
        judgement=None,
        metric=column if len(claim.columns) > 1 else None,
    )
    what = f"{label} vs {base_label}" + (f" ({column})" if len(claim.columns) > 1 else "")
    unit = f" {claim.unit}" if claim.unit else ""
    if percent is not None:
        change_text = said = f"{percent:+.3g}%"
    else:
        change_text = f"{change:+.6g}{unit}"
        said = f"the difference of the averages is {change_text} ({negative_baseline('average', base_value)})"
    comparison.findings.append(
        Finding("no_spread", "warning", f"{what}: {said} -- significance cannot be judged without a spread")
    )
    if detectable is not None and change != 0.0:
        noise = f"{abs(percent) / detectable:.2g}% of the mean" if percent is not None else ""
        noise = noise or f"{abs(change) / detectable:.2g}{unit}"
        comparison.findings.append(_noise_bound(what, claim.runs, change_text, noise))
    comparison.printed_values = {"baseline_avg": base_value, "candidate_avg": value}
    comparison.recomputed_values = {"difference": change, "percent": percent}
    return comparison
