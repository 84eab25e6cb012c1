"""Reading the store: the queries every read command uses, on either back end.

A row the store cannot decode (a JSON column that is not JSON, a sample
that is not a number) does not stop a reader: it is left out or read as
empty, and :attr:`StoreReader.damage` says what was damaged, so commands can
use what is readable and name the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from abstat.store.read_columns import ColumnReader
from abstat.store.read_rows import RowReader
from abstat.store.read_runs import BY_INVOCATION, BY_VARIANT, RunReader, and_in
from abstat.store.read_sets import SetReader
from abstat.store.run_groups import common_unit, numbers_by_run, refuse_unreadable_keys, replicates, run_groups
from abstat.store.records import ExperimentSummary


def _filing_order(item: tuple[tuple[Any, ...], Any]) -> tuple[Any, ...]:
    """A run group's key in the order groups are filed: variant, metric, unit, invocation."""
    variant_id, metric, invocation_id, unit = item[0]
    return variant_id, metric, unit or "", invocation_id


def _converted_units(found: dict[tuple[str, str | None], dict[int, dict[int, list[float]]]]) -> list[str]:
    """``found`` ((metric, unit) -> variant -> invocation -> values) with the units of one metric that
    convert merged into the finest (values multiplied by whole numbers; the store keeps its own);
    a note per metric converted."""
    from abstat.readers.unit_table import conversion_note, converted, convertible_groups

    units: dict[str, list[str | None]] = {}
    for metric, unit in found:
        units.setdefault(metric, []).append(unit)
    notes = []
    for metric, stored in units.items():
        for target, members in convertible_groups(stored) if len(stored) > 1 else ():
            merged: dict[int, dict[int, list[float]]] = {}
            for unit in members:
                for variant, groups in found.pop((metric, unit)).items():
                    into = merged.setdefault(variant, {})
                    for invocation, values in groups.items():
                        into.setdefault(invocation, []).extend(converted(values, unit, target))
            found[(metric, target)] = {v: dict(sorted(groups.items())) for v, groups in merged.items()}
            notes.append(conversion_note(metric, members, target))
    return notes


class StoreReader(RowReader, RunReader, SetReader, ColumnReader):
    def _number(self, value: Any, metric: str, invocation_id: int) -> float | None:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except (TypeError, ValueError):
            self._damaged(f"a {metric!r} sample of invocation {invocation_id} is not a number ({value!r:.40})")
            return None

    def _numbers(self, values: list[Any], metric: str, invocation_id: int) -> list[float]:
        """``values`` (one run group's), those that are not numbers left out and named."""
        if set(map(type, values)) <= {float}:
            return values
        return [number for number in (self._number(v, metric, invocation_id) for v in values) if number is not None]

    def _all_labels(self) -> dict[int, dict[str, str]]:
        """invocation id -> its labels, in one query (one row per label: a small table)."""
        labels: dict[int, dict[str, str]] = {}
        for invocation_id, key, value in self.db.execute("SELECT invocation_id, key, value FROM labels ORDER BY key"):
            labels.setdefault(invocation_id, {})[key] = value
        return labels

    def experiment_names(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM experiments ORDER BY id")]

    def has_experiment(self, name: str) -> bool:
        return self.db.execute("SELECT id FROM experiments WHERE name = ?", (name,)).fetchone() is not None

    def experiments(self) -> list[ExperimentSummary]:
        invocations = {
            row[0]: row[1:]
            for row in self.db.execute(
                "SELECT experiment_id, COUNT(*), COUNT(DISTINCT boot_id), MAX(started_at) FROM invocations"
                " GROUP BY experiment_id"
            )
        }
        hosts: dict[int, list[str]] = {}  # as report and show name them: the host label, else the hostname
        for exp_id, host in self.db.execute(
            "SELECT DISTINCT i.experiment_id, COALESCE(l.value, i.hostname) FROM invocations i"
            " LEFT JOIN labels l ON l.invocation_id = i.id AND l.key = 'host'"
            " WHERE COALESCE(l.value, i.hostname) IS NOT NULL ORDER BY 1, 2"
        ):
            hosts.setdefault(exp_id, []).append(host)
        variants: dict[int, list[str]] = {}
        for exp_id, name in self.db.execute("SELECT experiment_id, name FROM variants ORDER BY id"):
            variants.setdefault(exp_id, []).append(name)
        counts: dict[tuple[int, bool], int] = {
            (exp_id, bool(ok)): count
            for exp_id, ok, count in self.db.execute(
                "SELECT v.experiment_id, r.status = 'ok', COUNT(*) FROM runs r JOIN variants v ON v.id = r.variant_id"
                " GROUP BY v.experiment_id, r.status = 'ok'"
            )
        }
        summaries: list[ExperimentSummary] = []
        for exp_id, name, created in self.db.execute("SELECT id, name, created_at FROM experiments ORDER BY id"):
            count, boots, last = invocations.get(exp_id, (0, 0, None))
            summaries.append(
                ExperimentSummary(
                    name=name,
                    created_at=created,
                    last_run_at=last,
                    invocations=int(count),
                    boots=int(boots),
                    hosts=hosts.get(exp_id, []),
                    variants=variants.get(exp_id, []),
                    runs_ok=counts.get((exp_id, True), 0),
                    runs_failed=counts.get((exp_id, False), 0),
                )
            )
        return summaries

    def variant_names(self, experiment: str) -> list[str]:
        return [
            row[0]
            for row in self.db.execute(
                "SELECT v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id"
                " WHERE e.name = ? ORDER BY v.id",
                (experiment,),
            )
        ]

    def metrics(self, experiment: str, variant: str | None = None) -> list[str]:
        """Metric names with samples, built-in ones first, then by name."""
        sql = (
            "SELECT DISTINCT s.metric FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ?"
        )
        params: list[Any] = [experiment]
        sql = and_in(sql, params, "v.name", None if variant is None else [variant])
        return ordered_metrics(row[0] for row in self.db.execute(sql, params))

    def lists_metric(self, experiment: str, metric: str) -> bool:
        """Whether :meth:`metrics` of ``experiment`` lists ``metric`` (stops at the first sample: at 10^5
        runs of five metrics, a lookup per run at most instead of reading every sample)."""
        sql = (
            "SELECT 1 FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND s.metric = ? LIMIT 1"
        )
        return self.db.execute(sql, (experiment, metric)).fetchone() is not None

    def has_metric(self, experiment: str, variant: str, metric: str) -> bool:
        """Whether a successful run of ``experiment``'s ``variant`` has a sample of ``metric``
        (stops at the first: cheaper than :meth:`metrics` on a large experiment)."""
        return (
            self.db.execute(
                "SELECT 1 FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
                " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND v.name = ? AND s.metric = ?"
                " AND r.status = 'ok' LIMIT 1",
                (experiment, variant, metric),
            ).fetchone()
            is not None
        )

    def unit(self, experiment: str, metric: str) -> str | None:
        """The unit ``metric`` was stored in (one of them when it changed: :meth:`unit_groups` keeps
        them apart)."""
        row = self.db.execute(
            "SELECT s.unit FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND s.metric = ? AND s.unit IS NOT NULL"
            " LIMIT 1",
            (experiment, metric),
        ).fetchone()
        return row[0] if row else None

    def _variant_ids(self, experiment: str) -> dict[int, str]:
        """Variant id -> name, for ``experiment``'s variants (in the order they were declared)."""
        return dict(
            self.db.execute(
                "SELECT v.id, v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ?"
                " ORDER BY v.id",
                (experiment,),
            ).fetchall()
        )

    def groups_by_metric(
        self, experiment: str, *, invocations: Sequence[int] | None = None
    ) -> dict[str, dict[str, list[list[float]]]]:
        """:meth:`unit_groups` by metric name: a metric stored in one unit under its name, one stored
        in several under ``METRIC [UNIT]`` each (never pooled: no row mixes units)."""
        found = self.unit_groups(experiment, invocations=invocations)
        units: dict[str, int] = {}
        for metric, _ in found:
            units[metric] = units.get(metric, 0) + 1
        return {
            metric if units[metric] == 1 else f"{metric} [{unit or 'no unit'}]": by_variant
            for (metric, unit), by_variant in found.items()
        }

    def unit_groups(
        self, experiment: str, *, invocations: Sequence[int] | None = None, notes: list[str] | None = None
    ) -> dict[tuple[str, str | None], dict[str, list[list[float]]]]:
        """Values of successful runs: (metric, unit) -> variant -> one list per run group (per invocation,
        or per process run for a variant of one invocation whose runs hold several samples:
        :mod:`abstat.store.run_groups`), only those of ``invocations`` when given.  A metric whose unit
        changed between runs is one entry in the finest of its units when they convert (ns and µs:
        :mod:`abstat.readers.unit_table`; what was converted is said in ``notes``), else one entry per
        unit.  Metrics by name (then unit), variants in their declared order, run groups in the order
        they ran, values in the order they were measured."""
        variants = self._variant_ids(experiment)
        if not variants:
            return {}
        params: list[Any] = []
        sql = (
            "SELECT r.variant_id, s.metric, r.invocation_id, s.value, s.unit, s.run_id FROM samples s"
            " JOIN runs r ON r.id = s.run_id WHERE r.status = 'ok'"
        )
        if invocations is None:  # else the invocations alone drive the query (see RunReader._runs_of)
            sql = and_in(sql, params, "r.variant_id", list(variants)) + BY_VARIANT
        else:
            sql = (
                and_in(sql, params, "r.invocation_id", self._own_invocations(experiment, invocations), self.db)
                + BY_INVOCATION
            )
        found: dict[tuple[str, str | None], dict[int, dict[int, list[float]]]] = {}
        sizes: dict[tuple[str, str | None], dict[int, dict[int, list[int]]]] = {}  # each process run's count
        groups, starts = run_groups(self.db.execute(sql, params))
        refuse_unreadable_keys(self, groups)
        for key, values in sorted(groups.items(), key=_filing_order):
            variant_id, metric, invocation_id, unit = key
            group, counts = numbers_by_run(values, starts.get(key), self._numbers, metric, invocation_id)
            if group:
                found.setdefault((metric, unit), {}).setdefault(variant_id, {})[invocation_id] = group
                if counts is not None:  # runs of several samples
                    sizes.setdefault((metric, unit), {}).setdefault(variant_id, {})[invocation_id] = counts
        converted = _converted_units(found)
        if notes is not None:
            notes.extend(converted)
        return {
            key: _one_unit(
                {
                    variants[v]: replicates(found[key][v], sizes.get(key, {}).get(v, {}), list(found[key][v]))
                    for v in variants
                    if v in found[key]
                },
                notes,
            )
            for key in sorted(found, key=lambda key: (key[0], key[1] or ""))
        }

    def machine_records_by_variant(
        self, experiment: str, *, invocations: Sequence[int] | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Variant -> the machine records of the invocations with successful runs of it
        (oldest first), only those of ``invocations`` when given; each record is read once."""
        variants = self._variant_ids(experiment)
        params: list[Any] = []
        sql = "SELECT DISTINCT r.variant_id, r.invocation_id FROM runs r WHERE r.status = 'ok'"
        if invocations is None:
            sql = and_in(sql, params, "r.variant_id", list(variants))
        else:
            sql = and_in(sql, params, "r.invocation_id", self._own_invocations(experiment, invocations), self.db)
        pairs = self.db.execute(sql, params).fetchall() if variants else []
        wanted = sorted({invocation for _, invocation in pairs})
        records: dict[int, dict[str, Any]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            for key, text in self.db.execute(
                f"SELECT id, machine FROM invocations WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                records[key] = self._load(text, {}, f"machine record of invocation {key}")
        found: dict[str, list[dict[str, Any]]] = {name: [] for name in variants.values()}
        for variant_id, invocation in sorted(pairs, key=lambda pair: pair[1]):
            if invocation in records:
                found[variants[variant_id]].append(records[invocation])
        return {name: found_records for name, found_records in found.items() if found_records}

    def invocation_ids(self, experiment: str, labels: Mapping[str, str]) -> list[int]:
        """The invocations of ``experiment`` whose ``--label``s are exactly ``labels``, oldest first."""
        wanted = dict(labels)
        return [key for key, mine in self.invocation_labels(experiment, host=False).items() if mine == wanted]

    def invocation_labels(self, experiment: str, *, host: bool = True) -> dict[int, dict[str, str]]:
        """Invocation id -> its ``--label``s, oldest first; with ``host``, ``host`` is its
        hostname unless a label names it (as :meth:`sample_sets` labels them)."""
        rows = self.db.execute(
            "SELECT i.id, i.hostname, l.key, l.value FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
            " LEFT JOIN labels l ON l.invocation_id = i.id WHERE e.name = ? ORDER BY i.id, l.key",
            (experiment,),
        )
        found: dict[int, dict[str, str]] = {}
        hosts: dict[int, str | None] = {}
        for invocation_id, hostname, key, value in rows:
            mine = found.setdefault(invocation_id, {})
            hosts[invocation_id] = hostname
            if key is not None:
                mine[key] = value
        if host:
            for invocation_id, hostname in hosts.items():
                if hostname is not None:
                    found[invocation_id].setdefault("host", hostname)
        return found

    def settings_newest_first(self, experiment: str) -> Iterator[dict[str, Any]]:
        """The settings of ``experiment``'s invocations, the latest first, one at a time: what
        :meth:`invocations` gives without decoding every machine record (a history experiment of
        10^5 revisions is 10^5 records; a grid's parameters are in the latest settings)."""
        cursor = self.db.execute(
            "SELECT i.id, i.settings FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
            " WHERE e.name = ? ORDER BY i.id DESC",
            (experiment,),
        )
        for invocation_id, text in cursor:
            yield self._load(text, {}, f"settings of invocation {invocation_id}")

    def invocations(self, experiment: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT i.id, i.started_at, i.ended_at, i.status, i.hostname, i.boot_id, i.argv, i.settings,"
            " i.notes, i.machine FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
            " WHERE e.name = ? ORDER BY i.id",
            (experiment,),
        ).fetchall()
        labels: dict[int, dict[str, str]] = {row[0]: {} for row in rows}
        for invocation_id, key, value in self.db.execute(
            "SELECT l.invocation_id, l.key, l.value FROM labels l JOIN invocations i ON i.id = l.invocation_id"
            " JOIN experiments e ON e.id = i.experiment_id WHERE e.name = ? ORDER BY l.key",
            (experiment,),
        ):
            if invocation_id in labels:  # not one started since the first query
                labels[invocation_id][key] = value
        run_counts: dict[int, list[tuple[Any, ...]]] = {row[0]: [] for row in rows}
        for invocation_id, *count in self.db.execute(
            f"SELECT r.invocation_id, v.name, r.status, COUNT(*), {self.db.concat_distinct('r.command')} FROM runs r"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? GROUP BY r.invocation_id, v.id, v.name, r.status ORDER BY v.id, r.status",
            (experiment,),
        ):
            if invocation_id in run_counts:
                run_counts[invocation_id].append(tuple(count))
        result = []
        for row in rows:
            result.append(
                {
                    "id": row[0],
                    "started_at": row[1],
                    "ended_at": row[2],
                    "status": row[3],
                    "hostname": row[4],
                    "boot_id": row[5],
                    "argv": self._load(row[6], [], f"argv of invocation {row[0]}"),
                    "settings": self._load(row[7], {}, f"settings of invocation {row[0]}"),
                    "notes": self._load(row[8], [], f"notes of invocation {row[0]}"),
                    "machine": self._load(row[9], {}, f"machine record of invocation {row[0]}"),
                    "labels": labels[row[0]],
                    "runs": [
                        {"variant": c[0], "status": c[1], "count": c[2], "command": c[3]} for c in run_counts[row[0]]
                    ],
                }
            )
        return result


def ordered_metrics(names: Iterable[str]) -> list[str]:
    """Metric names as the store lists them: built-in ones first (in their order), then by name."""
    from abstat.box.runner.model import BUILTIN_METRICS

    found = set(names)
    return [m for m in BUILTIN_METRICS if m in found] + sorted(m for m in found if m not in BUILTIN_METRICS)


def _one_unit(
    by_variant: dict[str, tuple[list[list[float]], list[int]]], notes: list[str] | None
) -> dict[str, list[list[float]]]:
    """Each variant's run groups, all at one replicated unit (:func:`abstat.store.run_groups.common_unit`:
    a variant of one invocation's process runs beside variants of several invocations is that one
    invocation), what was changed said in ``notes``."""
    groups, changed = common_unit([(name, runs, invocations) for name, (runs, invocations) in by_variant.items()])
    if notes is not None:
        notes.extend(text for _, text in changed if text not in notes)
    return dict(zip(by_variant, groups, strict=True))
