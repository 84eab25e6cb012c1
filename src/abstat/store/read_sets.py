"""The store's sample sets (:meth:`SetReader.sample_sets`): every sample grouped by its labels, runs by
invocation, for the report, history and the API; a mixin of :class:`abstat.store.read.StoreReader`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from abstat.store.read_runs import BY_RUN, BY_VARIANT, and_in, drained, gc_paused, shared
from abstat.store.records import SampleSet
from abstat.store.run_groups import numbers_by_run, refuse_unreadable_keys, replicates, run_groups


class SetReader:
    db: Any
    _numbers: Any
    _all_labels: Any
    _load: Any

    def sample_sets(self, where: Mapping[str, Any] | None = None, *, machines: bool = True) -> Iterator[SampleSet]:
        """Group samples by (experiment, variant, metric, host, labels); run groups by the replicated unit:
        by invocation, or by process run when the set has one invocation whose runs hold several samples
        each (:mod:`abstat.store.run_groups`; ``invocations`` then names each run's invocation).

        Sets come in the order of their experiment, variant, metric and first
        invocation; each set's run groups in the order they ran, values as measured.  Each set's
        ``machine`` is its last invocation's record (``{}`` without ``machines``: a
        history never reads them), decoded once per invocation: the sets of one
        invocation share it, and what it shares with the record decoded before it
        (most of a machine's record, run after run) is one object (:func:`shared`)."""
        with gc_paused():  # 10^6 new objects, none in a cycle: the collector's passes only cost
            found = self._sample_sets(where, machines)
        yield from found

    def _sample_sets(self, where: Mapping[str, Any] | None, machines: bool) -> list[SampleSet]:
        accepted = {key: _accepted(wanted) for key, wanted in (where or {}).items()}
        names = self._names()
        chosen = chosen_variants(names, accepted)
        if not chosen:
            return []
        sql, params = samples_query(chosen, len(chosen) < len(names), accepted)
        groups, starts = run_groups(self.db.execute(sql, params))  # and where each process run starts
        entries = _named_units(_kept_entries(self._fill_sets(groups, starts, names, accepted)))
        records = self._machine_records(sorted({entry["invocations"][-1] for entry in entries})) if machines else {}
        return [
            SampleSet(
                labels=entry["labels"],
                runs=runs,
                machine=records.get(entry["invocations"][-1], NO_RECORD),
                unit=entry["unit"],
                invocations=invocations,
                notes=entry.get("notes", []),
            )
            for entry in drained(entries)
            # the replicated unit: invocations, else process runs (:mod:`abstat.store.run_groups`)
            for runs, invocations in [replicates(entry["groups"], entry.get("sizes", {}), entry["invocations"])]
        ]

    def _fill_sets(
        self,
        groups: dict[tuple[Any, ...], list[Any]],
        starts: dict[tuple[Any, ...], list[int]],
        names: dict[int, tuple[int, str, str]],
        accepted: Mapping[str, set[str]],
    ) -> dict[tuple, dict[str, Any]]:
        """The sets (as entries: labels, run groups by invocation, unit, order) the run groups go to,
        each group's values moved to its set's, by invocation, variant, metric: the order sets and
        their run groups are made in."""
        hosts = dict(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
        label_cache = self._all_labels()
        sets: dict[tuple, dict[str, Any]] = {}
        canons: dict[int, tuple] = {}  # invocation -> its labels' part of its sets' keys (equal ones shared)
        interned: dict[tuple, tuple] = {}
        refuse_unreadable_keys(self, groups)
        for key in sorted(groups, key=_INVOCATION_FIRST):
            variant_id, metric, invocation_id, unit = key
            if variant_id not in names or invocation_id not in hosts:  # created after the lookups were read
                names.update(self._names())
                hosts.update(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
            if invocation_id not in label_cache:  # no labels, or started after they were read
                label_cache[invocation_id] = dict(
                    self.db.execute(
                        "SELECT key, value FROM labels WHERE invocation_id = ?", (invocation_id,)
                    ).fetchall()
                )
            canon = canons.get(invocation_id)
            if canon is None:
                canon = canons[invocation_id] = _canon(label_cache[invocation_id], interned)
            entry = _set_entry(
                sets,
                variant_id,
                names[variant_id],
                metric,
                invocation_id,
                (label_cache[invocation_id], canon),
                hosts[invocation_id],
                unit,
                accepted,
            )
            values = groups.pop(key)  # each value held once: the group's list becomes the set's run group
            if entry is not None:
                group = entry["groups"].get(invocation_id)
                if group is None:  # a new list: the group's, made among short-lived objects, is let go
                    group = entry["groups"][invocation_id] = []
                    entry["invocations"].append(invocation_id)
                kept, sizes = numbers_by_run(values, starts.pop(key, None), self._numbers, metric, invocation_id)
                group.extend(kept)
                if sizes is not None:  # runs of several samples: their sizes (else no object per set)
                    # invocation -> how many samples each of its process runs kept
                    entry.setdefault("sizes", {}).setdefault(invocation_id, []).extend(sizes)
        return sets

    def machine_records(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Invocation id -> its decoded machine record (``{}`` when damaged), for ``ids``."""
        return self._machine_records(sorted(set(ids)))

    def _machine_records(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Invocation id -> its decoded machine record (``{}`` and a damage note when damaged),
        each sharing with the one decoded before it what did not change."""
        records: dict[int, dict[str, Any]] = {}
        previous: Any = None
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for key, text in self.db.execute(
                f"SELECT id, machine FROM invocations WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                record = self._load(text, {}, f"machine record of invocation {key}")
                records[key] = previous = shared(record, previous)
        return records

    def _names(self) -> dict[int, tuple[int, str, str]]:
        """Variant id -> (experiment id, experiment name, variant name)."""
        rows = self.db.execute(
            "SELECT v.id, e.id, e.name, v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id"
        )
        return {key: (experiment_id, experiment, variant) for key, experiment_id, experiment, variant in rows}


_INVOCATION_FIRST = itemgetter(2, 0, 1)


NO_RECORD: dict[str, Any] = {}  # the record of every set read without one: one object, as records are
# shared (an invocation's sets share its record; nothing changes a set's record), not 10^5 empty dicts


def chosen_variants(names: Mapping[int, Any], accepted: Mapping[str, Any]) -> list[int]:
    """The variant ids ``accepted`` keeps.  Experiment and variant are columns of small tables: the
    variants are chosen here, and the database skips the other rows (the big query moves four
    columns, two of them numbers)."""
    return [
        key
        for key, (_, experiment, variant) in names.items()
        if experiment in accepted.get("experiment", (experiment,)) and variant in accepted.get("variant", (variant,))
    ]


def samples_query(chosen: list[int], some: bool, accepted: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """The query of every measured sample of the ``chosen`` variants (``some``: not all of them) and
    accepted metrics, in run order; (SQL, parameters)."""
    params: list[Any] = []
    sql = (
        "SELECT r.variant_id, s.metric, r.invocation_id, s.value, s.unit, s.run_id FROM samples s"
        " JOIN runs r ON r.id = s.run_id WHERE r.status = 'ok'"
    )
    order = BY_RUN
    if some:
        sql = and_in(sql, params, "r.variant_id", chosen)
        order = BY_VARIANT
    sql = and_in(sql, params, "s.metric", sorted(accepted["metric"]) if "metric" in accepted else None)
    return sql + order, params


def _kept_entries(sets: dict[tuple, dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries in their order, each with the invocations whose run group kept a value (not all
    damaged); those left with none dropped; those whose labels another entry has too (in another unit)
    with their labels as ``key`` (the only ones :func:`_named_units` looks at: no tuple made per set).
    ``sets`` is emptied."""
    kept = []
    for key, entry in sorted(sets.items(), key=lambda item: item[1]["order"]):
        entry["invocations"] = [i for i in entry["invocations"] if entry["groups"][i]]  # not all damaged
        if entry["invocations"]:
            kept.append((key[0], entry))
    sets.clear()
    counts = Counter(labels for labels, _ in kept)
    for labels, entry in kept:
        if counts[labels] > 1:
            entry["key"] = labels
    return [entry for _, entry in kept]


def _set_entry(
    sets: dict[tuple, dict[str, Any]],
    variant_id: int,
    name: tuple[int, str, str],
    metric: str,
    invocation_id: int,
    labelled: tuple[Mapping[str, str], tuple],
    host: str | None,
    unit: str | None,
    accepted: Mapping[str, set[str]],
) -> dict[str, Any] | None:
    """The entry of the set the values of one invocation's (variant, metric) go to, as its labels
    (and their :func:`_canon`) make it; None when the labels do not match ``accepted``."""
    experiment_id, experiment, variant = name
    labels, canon = labelled
    # the set's labels as a key (what the dict of its labels is equal to; one unit per set: a set never
    # mixes units), of a few objects: the labels' part shared by the invocation's sets
    key = ((canon, experiment, variant, metric, labels.get("host", host)), unit)
    entry = sets.get(key)
    if entry is not None:  # (matched when made)
        return entry
    full = dict(labels)
    full.update({"experiment": experiment, "variant": variant, "metric": metric})
    if host is not None:
        full.setdefault("host", host)  # a --label host=NAME names the machine
    if not _matches(full if "unit" not in accepted or "unit" in full else {**full, "unit": unit or ""}, accepted):
        return None
    entry = sets[key] = {
        "labels": full,
        "groups": {},
        "invocations": [],
        "unit": unit,
        "order": (experiment_id, variant_id, metric, invocation_id),
    }
    return entry


_SET_LABELS = frozenset(("experiment", "variant", "metric", "host"))  # in a set's key apart


def _canon(labels: Mapping[str, str], interned: dict[tuple, tuple]) -> tuple:
    """An invocation's labels other than those of :data:`_SET_LABELS`, sorted, as a tuple (one object
    for all the invocations whose labels are alike)."""
    canon = tuple(sorted(item for item in labels.items() if item[0] not in _SET_LABELS))
    return interned.setdefault(canon, canon)


def _named_units(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries, those whose labels are alike but whose units differ (a metric stored in ns by
    one invocation and in µs by the next) made one set when the units convert
    (:mod:`abstat.readers.unit_table`: to the finest, noted on the set), else told apart by a ``unit``
    label (as ``--where unit=ns`` chooses them); a store whose metrics have one unit each reads as it
    always did."""
    alike: dict[Any, list[dict[str, Any]]] = {}
    for entry in entries:
        if "key" in entry:
            alike.setdefault(entry.pop("key"), []).append(entry)
    if not alike:
        return entries
    grouped = {id(entry) for group in alike.values() for entry in group}
    kept = [entry for entry in entries if id(entry) not in grouped]
    for stored in alike.values():
        group = _converted(stored)
        for entry in group:
            if len(group) > 1:
                entry["labels"].setdefault("unit", entry["unit"] or "")
        kept.extend(group)
    kept.sort(key=lambda e: e["order"])
    return kept


def _converted(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of one set's labels in several units, those whose units convert merged into one in
    the finest of them (its runs by invocation, values multiplied by whole numbers), with a note saying
    so; the store keeps every sample in the unit it was stored in."""
    from abstat.readers.unit_table import conversion_note, converted, convertible_groups

    for target, units in convertible_groups(entry["unit"] for entry in group):
        merged = [entry for entry in group if entry["unit"] in units]
        into = min(merged, key=lambda e: e["order"])
        groups: dict[int, list[Any]] = {}
        sizes: dict[int, list[int]] = {}
        for entry in sorted(merged, key=lambda e: e["order"]):
            for invocation in entry["invocations"]:
                groups.setdefault(invocation, []).extend(converted(entry["groups"][invocation], entry["unit"], target))
                sizes.setdefault(invocation, []).extend(entry.get("sizes", {}).get(invocation, []))
        metric = into["labels"].get("metric", "")
        into.update(
            groups=groups,
            sizes=sizes,
            invocations=sorted(groups),
            unit=target,
            notes=[conversion_note(metric, units, target)],
        )
        gone = {id(entry) for entry in merged if entry is not into}
        group = [entry for entry in group if id(entry) not in gone]
    return group


def _accepted(wanted: Any) -> set[str]:
    """The values a ``where`` entry accepts: one value or a collection of them."""
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return {str(w) for w in wanted}
    return {str(wanted)}


def _matches(labels: Mapping[str, str], accepted: Mapping[str, set[str]]) -> bool:
    return all(labels.get(key) in values for key, values in accepted.items())
