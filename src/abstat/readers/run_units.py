"""The replicated unit of a set's values: one group per invocation (boot), else per process run, else one
group (:mod:`abstat.store.run_groups` says why); the store's sets and the reader of ``abstat export``'s CSV
(:mod:`abstat.readers.csvexport`) group alike, so that a report of the export is the report of the store."""

from __future__ import annotations

MIN_RUNS = 3  # process runs that make runs the unit (compare warns below 3 runs: their variation unknown)
DISAGREE_P = 0.01  # two runs whose Brunner-Munzel p is below this differ (docs/statistics.md, "Two runs")


def replicates(
    groups: dict[int, list[float]], sizes: dict[int, list[int]], invocations: list[int]
) -> tuple[list[list[float]], list[int]]:
    """A set's run groups and the invocation of each: one per invocation when it has several; one per
    process run when it has one invocation whose runs (MIN_RUNS or more) hold several samples of
    the metric in some run, or whose two such runs differ by more than their samples do
    (:func:`two_runs_differ`: pooled, their samples would be read as independent, and a per-process
    offset as the change); else the invocation's samples as one group."""
    if len(invocations) != 1:
        return [groups[i] for i in invocations], list(invocations)
    invocation = invocations[0]
    values, run_sizes = groups[invocation], sizes.get(invocation, [])
    if len(run_sizes) < 2 or max(run_sizes) < 2 or sum(run_sizes) != len(values):
        return [values], [invocation]
    runs = []
    start = 0
    for size in run_sizes:
        runs.append(values[start : start + size])
        start += size
    if len(runs) < MIN_RUNS and not two_runs_differ(runs):
        return [values], [invocation]
    return runs, [invocation] * len(runs)


def two_runs_differ(runs: list[list[float]]) -> bool:
    """Whether two process runs' samples differ by more than their own noise explains: :func:`two_runs_p`
    below :data:`DISAGREE_P`.  Two run centres cannot estimate the run-to-run variation, so two runs that
    agree are pooled; two that differ are kept as runs, whose two centres a side compare says cannot be
    judged (a per-process offset, read from pooled samples, was called a change in up to 70% of the A/A
    comparisons of README's 2-run recipe: docs/statistics.md, "Two runs a variant")."""
    p = two_runs_p(runs)
    return p is not None and p < DISAGREE_P


def two_runs_p(runs: list[list[float]]) -> float | None:
    """Brunner-Munzel's p-value between two runs' samples (ranks: an interrupt's far value does not hide an
    offset, as it does from an ANOVA); None unless two runs of at least two samples each."""
    if len(runs) != 2 or min(len(run) for run in runs) < 2:
        return None
    import numpy as np

    from abstat.stats.brunner_munzel import bm_p_value, bm_statistic, spread_ties

    x, y = (spread_ties(np.sort(np.asarray(run, dtype=float))) for run in runs)
    return bm_p_value(bm_statistic(x, y, 0.0), x.n, y.n)
