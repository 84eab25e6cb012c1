"""The replicated unit of a set's values: one group per invocation (boot), else per process run, else one
group (:mod:`abstat.store.run_groups` says why); the store's sets and the reader of ``abstat export``'s CSV
(:mod:`abstat.readers.csvexport`) group alike, so that a report of the export is the report of the store."""

from __future__ import annotations

MIN_RUNS = 3  # process runs that make runs the unit (compare warns below 3 runs: their variation unknown)


def replicates(
    groups: dict[int, list[float]], sizes: dict[int, list[int]], invocations: list[int]
) -> tuple[list[list[float]], list[int]]:
    """A set's run groups and the invocation of each: one per invocation when it has several; one per
    process run when it has one invocation whose runs (MIN_RUNS or more) hold several samples of
    the metric in some run; else the invocation's samples as one group."""
    if len(invocations) != 1:
        return [groups[i] for i in invocations], list(invocations)
    invocation = invocations[0]
    values, run_sizes = groups[invocation], sizes.get(invocation, [])
    if len(run_sizes) < MIN_RUNS or max(run_sizes) < 2 or sum(run_sizes) != len(values):
        return [values], [invocation]
    runs = []
    start = 0
    for size in run_sizes:
        runs.append(values[start : start + size])
        start += size
    return runs, [invocation] * len(runs)
