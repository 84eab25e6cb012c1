"""A stored experiment's label configurations and the invocations ``--where`` selects (``abstat show``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.errors import InputError, UsageError

SET_KEYS = ("experiment", "variant", "metric")  # what a configuration's sample sets differ in


def configurations(
    store: Any, experiment: str, where: dict[str, set[str]], invocations: list[dict[str, Any]] | None = None
) -> list[tuple[dict[str, str], list[int]]]:
    """(labels, invocation ids) of each label configuration of ``experiment``, from its ``invocations``
    (``Store.invocations``, read here when not given).

    Invocations recorded with different labels (``--label host=milan`` and
    ``host=naples``) are different configurations, not repeated runs of one;
    the grouping is the store's (``Store.sample_sets``), less the experiment,
    variant and metric each set also carries; invocations with no successful
    run have no samples and form none.
    """
    # From the invocations (their labels and host, as Store.sample_sets labels its sets), not
    # from the samples: reading every sample only to learn the labels cost most of `show`.
    found: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list[int]]] = {}
    for invocation in store.invocations(experiment) if invocations is None else invocations:
        if not selected(invocation, where) or not any(
            entry["status"] == "ok" and entry["count"] for entry in invocation["runs"]
        ):
            continue
        labels = dict(invocation["labels"])
        if invocation.get("hostname") is not None:
            labels.setdefault("host", invocation["hostname"])
        labels = {k: v for k, v in labels.items() if k not in SET_KEYS}
        _, ids = found.setdefault(tuple(sorted(labels.items())), (labels, []))
        ids.append(invocation["id"])
    return [found[key] for key in sorted(found)]


def selected(invocation: dict[str, Any], where: dict[str, set[str]]) -> bool:
    labels = dict(invocation["labels"])
    if invocation.get("hostname") is not None:
        labels.setdefault("host", invocation["hostname"])  # as Store.sample_sets
    return all(labels.get(key) in values for key, values in where.items())


def check_experiment(store: Any, experiment: str, metrics: Sequence[str] | None = None) -> None:
    """An error naming ``experiment`` when it is not stored, or a metric of ``metrics`` it does not hold."""
    if not store.has_experiment(experiment):
        names = store.experiment_names()
        raise InputError(
            f"no experiment {experiment!r}" + (f" (experiments: {', '.join(names)})" if names else ""),
            path=store.display,
        )
    if metrics:
        known = store.metrics(experiment)
        for metric in metrics:
            if metric not in known:
                raise UsageError(
                    f"{{metrics}} {metric!r}: experiment has {', '.join(known) or 'no metrics'}", fields=["metrics"]
                )


def shown(
    store: Any, experiment: str, where: dict[str, set[str]], invocations: list[dict[str, Any]] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The invocations ``where`` selects (of ``invocations``, read when not given), and their failed runs."""
    chosen = [
        inv for inv in (store.invocations(experiment) if invocations is None else invocations) if selected(inv, where)
    ]
    ids = {inv["id"] for inv in chosen}
    return chosen, [f for f in store.failed_runs(experiment) if f["invocation"] in ids]
