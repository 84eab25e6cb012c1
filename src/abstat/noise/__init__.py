"""``abstat noise``: this machine's noise floor, measured with the user's own benchmark.

Two identical variants run interleaved (by ``abstat run``'s code path) and
are stored as an experiment; :func:`analyse_experiment` then reports, per
metric, the run-to-run spread, the smallest change ``abstat compare`` would
detect at this n (80 % power) and the runs needed for 1, 2 and 5 %, drift,
steps and autocorrelation along the run order, the between-invocation
share, and the rate at which A/A comparisons of disjoint blocks call a
difference.
"""

from __future__ import annotations

from typing import Any

from abstat.noise.analysis import MetricNoise, RunValue, analyse_metric, detectable_change

VARIANTS = ("a", "b")
# Counts of context switches are recorded by every run but are not performance.
SKIPPED_METRICS = frozenset({"vcsw", "ivcsw"})

__all__ = [
    "VARIANTS",
    "MetricNoise",
    "RunValue",
    "analyse_experiment",
    "analyse_metric",
    "detectable_change",
    "runs_by_metric",
]


def runs_by_metric(
    store: Any,
    experiment: str,
    labels: dict[str, str] | None = None,
) -> tuple[dict[str, list[RunValue]], dict[str, str | None]]:
    """Each metric's runs in run order (one value per run: its centre as ``abstat compare`` reduces a
    run, :func:`abstat.stats.nested.run_centres`: the median, ties read as spread over the grid step;
    a run of one sample, that sample), and units; only runs whose invocation carries every one of
    ``labels`` (e.g. ``host=NAME``)."""
    collected, units = _collect(store, experiment, labels)
    return {metric: _run_values(list(runs.values())) for metric, runs in collected.items()}, units


def _collect(
    store: Any, experiment: str, labels: dict[str, str] | None
) -> tuple[dict[str, dict[int, list[Any]]], dict[str, str | None]]:
    """Each metric's runs (``[variant, invocation, boot, samples]`` by run id) and units."""
    collected: dict[str, dict[int, list[Any]]] = {}
    units: dict[str, str | None] = {}
    wanted = set((labels or {}).items())
    for row in store.sample_rows(experiment):
        if not wanted <= set(row["labels"].items()):
            continue
        metric = row["metric"]
        units.setdefault(metric, row["unit"])
        runs = collected.setdefault(metric, {})
        entry = runs.get(row["run"])
        if entry is None:
            runs[row["run"]] = [row["variant"], row["invocation"], row["boot_id"], [row["value"]]]
        else:
            entry[3].append(row["value"])
    return collected, units


def _run_values(runs: list[list[Any]]) -> list[RunValue]:
    """``[variant, invocation, boot, samples]`` of each run -> its RunValue (the run centres of one
    metric together: its grid step is all its runs')."""
    import numpy as np

    from abstat.stats.nested import run_centres

    if not runs:
        return []
    centres = run_centres([np.asarray(run[3], dtype=float) for run in runs], "median")
    return [
        RunValue(v, i, b, float(c), len(samples)) for (v, i, b, samples), c in zip(runs, centres.tolist(), strict=True)
    ]


def analyse_experiment(
    store: Any,
    experiment: str,
    *,
    variants: tuple[str, str] = VARIANTS,
    metrics: list[str] | None = None,
    confidence: float = 0.95,
    blocks: int | None = None,
    seed: int = 0,
    labels: dict[str, str] | None = None,
) -> list[MetricNoise]:
    """The noise report of every metric (or those named) of a stored A/A experiment
    (of its runs labelled ``labels``, when given: one host's)."""
    import numpy as np

    collected, units = _collect(store, experiment, labels)
    names = metrics or [m for m in collected if m not in SKIPPED_METRICS]
    results = []
    for metric in names:
        every = list(collected.get(metric, {}).values())
        runs = [r for r in _run_values(every) if r.variant in variants]
        chosen = [run for run in every if run[0] in variants]
        if len(runs) < 4:
            continue
        samples = np.concatenate([np.asarray(run[3], dtype=float) for run in chosen])
        results.append(
            analyse_metric(
                metric,
                units.get(metric),
                runs,
                variants=variants,
                confidence=confidence,
                blocks=blocks,
                seed=seed,
                samples=samples,
            )
        )
    return results
