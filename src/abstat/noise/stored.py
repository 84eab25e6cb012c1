"""The noise report of a stored A/A experiment, checked: what ``abstat noise`` and the API analyse."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.noise import VARIANTS, MetricNoise, analyse_experiment


def analyse_stored(
    store: Any,
    experiment: str,
    *,
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
    blocks: int | None = None,
    seed: int = 0,
    host: str | None = None,
) -> tuple[list[MetricNoise], list]:
    """``experiment``'s noise per metric, in the store's order of its metrics, and the warnings about its
    commands (of ``host``'s runs only, when given).  An experiment that is missing, not an A/A one of
    abstat noise, without runs of ``host``, or a metric it does not hold: an error naming it."""
    _check(store, experiment, host)
    order = list(store.metrics(experiment))
    unknown = [m for m in metrics or [] if m not in order]
    if unknown:
        raise UsageError(f"{{metrics}} {unknown[0]!r}: no such metric (stored: {', '.join(order)})", fields=["metrics"])
    labels = {"host": host} if host is not None else None
    results = analyse_experiment(
        store,
        experiment,
        metrics=list(metrics) if metrics else None,
        confidence=confidence,
        blocks=blocks,
        seed=seed,
        labels=labels,
    )
    results.sort(key=lambda m: order.index(m.metric) if m.metric in order else len(order))
    from abstat.comparison.commands import experiment_command_warnings

    chosen = [i["id"] for i in store.invocations(experiment) if i["labels"].get("host") == host] if labels else None
    return results, list(experiment_command_warnings(store, experiment, chosen))


def _check(store: Any, experiment: str, host: str | None) -> None:
    if not store.has_experiment(experiment):
        raise InputError(f"no experiment {experiment!r}", path=store.display)
    variants = store.variant_names(experiment)
    if set(variants) != set(VARIANTS):
        raise InputError(
            f"experiment {experiment!r} is not an A/A experiment of abstat noise (its variants:"
            f" {', '.join(variants) or 'none'}; expected a and b)",
            path=store.display,
        )
    if host is not None and not any(i["labels"].get("host") == host for i in store.invocations(experiment)):
        raise InputError(f"experiment {experiment!r} has no runs of host {host!r}", path=store.display)
