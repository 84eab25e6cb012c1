"""Per-variant summaries and diagnostics (after outlier exclusion)."""

from __future__ import annotations

import math
from typing import Any

from abstat.comparison.inputs import VariantSamples
from abstat.comparison.model import RunSummary, VariantSummary
from abstat.errors import InputError
from abstat.fastdataclass import dataclass
from abstat.stats.dependence import is_sorted
from abstat.stats.warnings import StatWarning


def quantized_fences_note(*variants: VariantSamples) -> str:
    """``; the data are quantized (grid 20) and the fences lie 1.5 steps
    outside the quartiles...`` when Tukey's fences drop values of quantized
    data only a few grid steps from the quartiles (per run, as the rule is
    applied), naming the variant unless both say the same; else ``""``."""
    from abstat.stats.outliers import quantized_fences

    clauses: list[tuple[str, str]] = []
    for v in variants:
        if v.runs is None:
            continue
        found = [f for f in (quantized_fences(run) for run in v.runs) if f is not None]
        if found:
            clauses.append((v.name, _fences_clause(found)))
    if not clauses:
        return ""
    if len(clauses) == len(variants) and len({text for _, text in clauses}) == 1:
        return "; " + clauses[0][1]
    return "".join(f"; {name}: {text}" for name, text in clauses)


def _steps(values: list[float]) -> str:
    """``1.5`` or ``1.5 to 2`` (three significant digits)."""
    low, high = f"{min(values):.3g}", f"{max(values):.3g}"
    return low if low == high else f"{low} to {high}"


def _fences_clause(found: list[Any]) -> str:
    """One variant's clause of :func:`quantized_fences_note` from its runs' findings."""
    grids = sorted({f.step for f in found})
    return (
        f"the data are quantized (grid {'/'.join(f'{g:g}' for g in grids)}) and the fences lie "
        f"{_steps([f.fence_steps for f in found])} steps outside the quartiles: values "
        f"{_steps([f.nearest_steps for f in found])} steps beyond them were dropped"
    )


@dataclass(frozen=True)
class ArrayDescription:
    n: int
    mean: float
    stddev: float
    min: float
    max: float
    median: float


def describe_array(values: Any, factor: float = 1.0, ordered: Any = None) -> ArrayDescription:
    """n, mean, standard deviation, min, max and median of a numpy array.

    The mean and standard deviation are computed on the values times
    ``factor`` (a power of two bringing the largest magnitude near 1), so that
    sums of values near 1e308 do not overflow and squares of 1e-320 do not
    underflow; then scaled back (exact).  ``ordered``: the values sorted, if
    known (the median then read from it: the same order statistics)."""
    import numpy as np

    from abstat.stats.medians import median, sorted_median

    scaled = values * factor if factor != 1.0 else values
    n = int(values.size)
    if n > 1:  # np.mean's and np.std's arithmetic (the same sums, one of them shared): sum / n, then
        # the sum of the squared deviations from it over n - 1
        centre = np.add.reduce(scaled) / n
        deviations = scaled - centre
        mean = float(centre) / factor
        stddev = math.sqrt(float(np.add.reduce(np.multiply(deviations, deviations, out=deviations)) / (n - 1))) / factor
    else:
        mean, stddev = float(np.mean(scaled)) / factor, math.nan
    if ordered is not None and n and not (ordered[(n - 1) // 2] == 0.0 or ordered[n // 2] == 0.0):
        middle = sorted_median(ordered)  # (a zero's sign is whichever the partition leaves there: not read so)
    else:
        middle = median(values)
    return ArrayDescription(n, mean, stddev, *_extremes(values, ordered), float(middle))


def _extremes(values: Any, ordered: Any) -> tuple[float, float]:
    """``np.min`` and ``np.max`` of ``values``: the ends of ``ordered`` (them sorted) unless a NaN or a zero
    (whose sign the reduction picks) lies there."""
    import numpy as np

    if ordered is not None and ordered.size and ordered[0] != 0.0 and ordered[-1] != 0.0 and ordered[-1] == ordered[-1]:
        return float(ordered[0]), float(ordered[-1])
    return float(np.min(values)), float(np.max(values))


def summarise(
    v: VariantSamples,
    confidence: float,
    outlier_rule: str,
    factor: float = 1.0,
    medians: bool = True,
    kept: list[Any] | None = None,
) -> tuple[VariantSamples, VariantSummary, list[StatWarning]]:
    """Summaries (in the data's units) and per-variant diagnostics (on the
    data times ``factor``); returns the variant after outlier exclusion
    (when a rule other than ``none`` is asked for).  ``medians``: the
    comparison compares medians, so a median without a distribution-free
    interval is worth a warning.  ``kept``: a list to which the values kept are appended, sorted
    (:func:`abstat.comparison.centres.agree` reads its medians there)."""

    from abstat.stats import diagnostics
    from abstat.stats.levels import level_starts
    from abstat.stats.location import median_ci_of_sorted, min_n_for_median_ci

    found: list[StatWarning] = []
    if v.summary is not None:
        s = v.summary
        return v, VariantSummary(v.name, "summary", s.n, s.mean, s.stddev), found
    assert v.runs is not None
    # ordered: the one sort of the sample, which the outliers, the median, its interval, the ties,
    # the modes and the ranks read
    mild, severe, dropped, kept_runs, everything, ordered = _outliers(v.runs, outlier_rule)
    if everything.size == 0:
        raise InputError(f"the {outlier_rule} outlier rule drops every sample; nothing is left to compare", path=v.name)
    if kept is not None:
        kept.append(ordered)
    d = describe_array(everything, factor, ordered)
    # with runs as the unit, the median and its interval from the run medians: the samples' order statistics
    # read 30 samples of 6 runs as 30 independent ones (a "90%" interval held the median 59% of the time:
    # attack22 A10), and the pooled samples' median lay outside that interval with runs of unequal length
    # (attack23 #7): the centre beside the interval is the one it is for
    of_runs = None if len(kept_runs) < 2 else _run_medians(kept_runs)
    ci = median_ci_of_sorted(ordered if of_runs is None else of_runs, confidence)
    if ci is None and medians:
        need = min_n_for_median_ci(confidence)
        what = f"{d.n} samples" if len(kept_runs) < 2 else f"{len(kept_runs)} runs (their medians)"
        found.append(
            StatWarning(
                "too-few-samples",
                f"{v.name}: {what} cannot give a distribution-free {confidence:.0%} interval "
                f"for the median; {need} would",
                v.name,
            )
        )
    summary = VariantSummary(
        v.name,
        "runs" if len(kept_runs) > 1 else "samples",
        d.n,
        d.mean,
        d.stddev,
        d.min,
        d.max,
        d.median if of_runs is None else _median_of_sorted(of_runs),
        ci,
        mild,
        severe,
        dropped,
    )
    starts = level_starts(ordered)  # (the groups of equal values: the ties' and the ranks')
    tied = diagnostics.ties(v.name, everything, ordered, starts)
    found += tied
    if not tied:  # (the product by a power of two keeps the order: ``ordered * factor`` is ``scaled`` sorted)
        scaled = (everything * factor, ordered * factor) if factor != 1.0 else (everything, ordered)
        found += diagnostics.bimodal(v.name, *scaled)
    if len(kept_runs) > 1:
        from abstat.stats import nested

        scaled_runs = [run * factor for run in kept_runs] if factor != 1.0 else kept_runs
        per_run = nested.run_stats(scaled_runs)
        summary.runs = [
            RunSummary(int(n), float(med) / factor, float(mean) / factor, float(sd) / factor)
            for n, med, mean, sd in zip(per_run.sizes, per_run.medians, per_run.means, per_run.stddevs)
        ]
        comps = nested.variance_components(scaled_runs, per_run)
        if comps is not None:
            summary.between_run_share = comps.share_between
            found += diagnostics.runs_disagree(v.name, comps.p_value, comps.share_between)
        # Bonferroni over the runs, so that many runs do not raise false alarms.
        level = 0.01 / len(kept_runs)
        drifting = diagnostics.drifting_runs(kept_runs, level)  # diagnostics.drift of each run, row-wise
        if drifting:
            found.append(
                StatWarning(
                    "drift",
                    f"{v.name}: trend or autocorrelation inside {drifting} of {len(kept_runs)} runs",
                    v.name,
                )
            )
    else:
        summary.lag1, drifting_found = _order(v.name, everything, starts.size, ordered, starts)
        found += drifting_found
    return VariantSamples(v.name, kept_runs, None), summary, found


def _outliers(runs: list[Any], rule: str) -> tuple[int, int, int, list[Any], Any, Any]:
    """(mild, severe, dropped, the runs after ``rule``, their values, those sorted); one run kept
    whole counts its Tukey outliers from the sorted values."""
    import numpy as np

    from abstat.stats import outliers

    ordered = np.sort(runs[0]) if len(runs) == 1 and rule == "none" else None
    if ordered is not None and ordered.size and np.isfinite(ordered[0]) and np.isfinite(ordered[-1]):
        mild, severe = outliers.sorted_run_counts(ordered)
        whole = runs[0] if runs[0].flags.c_contiguous else np.concatenate(runs)  # (read only: no copy needed)
        return mild, severe, 0, list(runs), whole, ordered
    # Run by run in effect (outliers.classify and keep_mask), row-wise on runs of equal size.
    mild, severe, dropped, kept = outliers.classify_runs(list(runs), rule)
    everything = np.concatenate(kept)
    return mild, severe, dropped, kept, everything, np.sort(everything)


def _order(
    name: str, values: Any, distinct: int | None = None, ordered: Any = None, starts: Any = None
) -> tuple[float, list[StatWarning]]:
    """One sample's lag-1 rank autocorrelation and drift warnings; none for a
    sorted sample (a sorted file: its order is the sort's, not time); ``distinct``: how many
    distinct values it has, ``ordered``: them sorted, ``starts``: where their groups start, if known."""
    from abstat.stats import diagnostics

    if is_sorted(values):
        return 0.0, []
    correlations = diagnostics.rank_correlations(values, distinct, ordered, starts)
    lag1 = correlations[1] if correlations is not None else 0.0
    return lag1, diagnostics.drift(name, values, correlations=correlations)


def _median_of_sorted(values: Any) -> float:
    """The median of sorted values (:func:`abstat.stats.medians.sorted_median`)."""
    from abstat.stats.medians import sorted_median

    return float(sorted_median(values))


def _run_medians(runs: list[Any]) -> Any:
    """The runs' medians, sorted (:func:`abstat.stats.nested.run_stats`)."""
    import numpy as np

    from abstat.stats import nested

    return np.sort(nested.run_stats([np.asarray(run, dtype=float) for run in runs]).medians)
