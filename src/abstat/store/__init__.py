"""The result store: SQLite, one file (``./abstat.db`` by default), or a
PostgreSQL database named by a ``postgresql://`` URL (``pip install
'abstat[postgres]'``), with one schema and one API for both.

Public functions used by other areas:

- :func:`resolve_variant` -- ``EXPERIMENT:VARIANT`` -> runs (one list of
  floats per run group) for ``abstat compare``;
- :func:`iter_sample_sets` -- every stored sample set with its labels, for
  ``abstat report``.
"""

from __future__ import annotations

import os
from itertools import chain
from collections.abc import Iterator, Mapping
from typing import Any

from abstat.errors import InputError
from abstat.store.backend import display_name, is_url
from abstat.store.db import DEFAULT_STORE, Store, open_store, resolve_store_path
from abstat.store.records import ExperimentSummary, Invocation, SampleSet
from abstat.store.schema import SCHEMA_VERSION
from abstat.store.write import check_experiment_name

__all__ = [
    "DEFAULT_STORE",
    "ExperimentSummary",
    "Invocation",
    "SCHEMA_VERSION",
    "SampleSet",
    "Store",
    "check_experiment_name",
    "display_name",
    "is_url",
    "iter_sample_sets",
    "open_store",
    "resolve_variant",
    "resolve_store_path",
    "store_exists",
    "stored_variant_warnings",
]


def store_exists(store: str) -> bool:
    """Whether ``store`` may hold data: an existing file, or any URL (the server answers when opened)."""
    return is_url(store) or os.path.exists(store)


def resolve_variant(
    ref: str, store_path: str = DEFAULT_STORE, metric: str = "wall", where: Mapping[str, Any] | None = None
) -> list[list[float]] | None:
    """Samples of a stored variant ``EXPERIMENT:VARIANT``, grouped by run group.

    Returns one list of values per replicated unit (:mod:`abstat.store.run_groups`):
    per ``abstat run`` invocation (so each boot is its own group) when there
    are several, else per process run when runs hold several samples of
    ``metric``, else one list; or ``None`` when the store, the experiment or the variant
    does not exist.  Raises InputError when the variant exists but has no
    successful sample of ``metric`` (the message lists the metrics it has),
    and when ``store_path`` exists but is not a readable store (a garbage or
    damaged file must not pass for "no such variant").

    ``where`` (label -> value or set of values, as ``iter_sample_sets``)
    keeps the invocations whose labels match.  Invocations with different
    labels (``--label host=milan`` and ``host=naples``) are different
    configurations, not repeated runs of one: when the kept ones still
    differ, InputError names the labels to choose with.
    """
    experiment, sep, variant = ref.partition(":")
    if not sep or not experiment or not variant or not store_exists(store_path):
        return None
    with open_store(store_path, create=False) as store:
        if variant not in store.variant_names(experiment):
            return None
        _check_metric(store, ref, experiment, variant, metric)
        wanted = {**(where or {}), "experiment": experiment, "variant": variant, "metric": metric}
        sets = list(store.sample_sets(wanted))
    _resolved.clear()  # for stored_variant_warnings, which follows with the same arguments
    _resolved[_key(ref, store_path, metric, where)] = sets
    _check_one_configuration(sets, ref, store_path, where)
    return sets[0].runs


def _check_metric(store: Store, ref: str, experiment: str, variant: str, metric: str) -> None:
    """InputError when the variant has no successful sample of ``metric`` (naming the metrics it has)."""
    if store.has_metric(experiment, variant, metric):
        return
    available = store.metrics(experiment, variant)  # the metrics of its successful runs
    if available:
        raise InputError(
            f"stored variant {ref!r} has no metric {metric!r} (it has: {', '.join(available)})",
            path=store.display,
        )
    raise InputError(f"stored variant {ref!r} has no successful run", path=store.display)


def _check_one_configuration(sets: list[SampleSet], ref: str, store_path: str, where: Mapping[str, Any] | None) -> None:
    """InputError when no set matches ``where``, or the sets differ in labels (configurations)."""
    if not sets:
        choice = ", ".join(
            f"{k}={v if isinstance(v, str) else ','.join(sorted(map(str, v)))}" for k, v in (where or {}).items()
        )
        raise InputError(f"stored variant {ref!r} has no runs with {choice}", path=display_name(store_path))
    if len(sets) > 1:
        differing = sorted(
            key for key in {k for s in sets for k in s.labels} if len({s.labels.get(key) for s in sets}) > 1
        )
        choices = "; ".join(f"{key}={'|'.join(sorted({str(s.labels.get(key)) for s in sets}))}" for key in differing)
        raise InputError(
            f"stored variant {ref!r} mixes runs with different labels ({choices}); "
            "choose one configuration with {where} KEY=VALUE",
            path=display_name(store_path),
            fields=["where"],
        )


# The sets resolve_variant found last, so that stored_variant_warnings, called
# next with the same arguments (readers.specs), does not read the samples again.
_resolved: dict[tuple, list[SampleSet]] = {}


def _key(ref: str, store_path: str, metric: str, where: Mapping[str, Any] | None) -> tuple:
    return (ref, store_path, metric, repr(sorted((k, repr(v)) for k, v in (where or {}).items())))


def resolved_unit(
    ref: str, store_path: str = DEFAULT_STORE, metric: str = "wall", where: Mapping[str, Any] | None = None
) -> str | None:
    """The unit of the samples :func:`resolve_variant` just returned for ``ref`` (None: no unit, or
    not one set): a metric whose unit changed between runs resolves to one unit's runs."""
    sets = _resolved.get(_key(ref, store_path, metric, where))
    if sets is None:
        experiment, sep, variant = ref.partition(":")
        if not sep or not store_exists(store_path):
            return None
        with open_store(store_path, create=False) as store:
            sets = list(
                store.sample_sets(
                    {**(where or {}), "experiment": experiment, "variant": variant, "metric": metric}, machines=False
                )
            )
    return sets[0].unit if len(sets) == 1 else None


def resolved_invocations(
    ref: str, store_path: str = DEFAULT_STORE, metric: str = "wall", where: Mapping[str, Any] | None = None
) -> list[int]:
    """The invocation of each run group :func:`resolve_variant` just returned for ``ref`` (empty when it
    did not resolve to one set): what a comparison needs to put both sides at one replicated unit
    (:func:`abstat.store.run_groups.common_unit`)."""
    sets = _resolved.get(_key(ref, store_path, metric, where))
    return list(sets[0].invocations) if sets is not None and len(sets) == 1 else []


def stored_variant_warnings(
    ref: str,
    store_path: str = DEFAULT_STORE,
    metric: str = "wall",
    where: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> list[Any]:
    """What :func:`resolve_variant` returns for ``ref`` warrants saying: the
    ``command-differs`` warning (:mod:`abstat.comparison.commands`) when its
    runs ran different commands, calling the variant ``name`` (default ``ref``).
    Empty when the variant does not resolve to one configuration."""
    experiment, sep, variant = ref.partition(":")
    if not sep or not store_exists(store_path):
        return []
    from abstat.comparison.commands import command_warnings

    with open_store(store_path, create=False) as store:
        sets = _resolved.pop(_key(ref, store_path, metric, where), None)
        if sets is None:
            sets = list(
                store.sample_sets({**(where or {}), "experiment": experiment, "variant": variant, "metric": metric})
            )
        if len(sets) != 1:
            return []
        found = command_warnings(store, experiment, sets[0].invocations, name=name or ref).get(variant)
    from abstat.stats.warnings import StatWarning

    converted = [StatWarning("units-converted", f"{name or ref}: {note}", name or ref) for note in sets[0].notes]
    return ([found] if found else []) + converted


def iter_sample_sets(
    store_path: str = DEFAULT_STORE, where: dict[str, Any] | None = None, *, machines: bool = True
) -> Iterator[SampleSet]:
    """Every stored sample set whose labels match ``where`` (``machines`` False: each with ``machine``
    ``{}``, its record left unread: :func:`abstat.report.stored_runs.add_machines` reads those a report shows).

    Labels: ``experiment``, ``variant``, ``metric``, ``host`` and every
    ``--label k=v`` given to ``abstat run``.  ``where`` maps a label to a
    value or a collection of accepted values.  Raises InputError when the
    store does not exist or is not a store.  When nothing matches and the
    store is damaged, the InputError says what is damaged.
    """
    with open_store(store_path, create=False) as store:
        # without records, the sets read as columns, each made as the caller takes it (the read is done
        # here: its errors too); the same sets as the rows make (store/read_columns.py)
        found = store.light_sets(where) if not machines else store.sample_sets(where, machines=True)
        first = next(found, None)
        if first is None:
            damage = store.check_damage()
            if damage:
                raise InputError(
                    f"damaged store, no readable samples match: {'; '.join(damage[:3])}", path=store.display
                )
            return iter(())
    return chain((first,), found)
