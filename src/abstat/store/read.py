"""Reading the store: the queries every read command uses, on either back end.

A row the store cannot decode (a JSON column that is not JSON, a sample
that is not a number) does not stop a reader: it is left out or read as
empty, and :attr:`StoreReader.damage` says what was damaged, so commands can
use what is readable and name the rest.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from abstat.store.read_runs import RunReader, and_in
from abstat.store.records import ExperimentSummary, SampleSet


class StoreReader(RunReader):
    def _number(self, value: Any, metric: str, invocation_id: int) -> float | None:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except (TypeError, ValueError):
            self._damaged(f"a {metric!r} sample of invocation {invocation_id} is not a number ({value!r:.40})")
            return None

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
        hosts: dict[int, list[str]] = {}
        for exp_id, host in self.db.execute(
            "SELECT DISTINCT experiment_id, hostname FROM invocations WHERE hostname IS NOT NULL"
            " ORDER BY experiment_id, hostname"
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
                    name=name, created_at=created, last_run_at=last, invocations=int(count),
                    boots=int(boots), hosts=hosts.get(exp_id, []), variants=variants.get(exp_id, []),
                    runs_ok=counts.get((exp_id, True), 0), runs_failed=counts.get((exp_id, False), 0),
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
        names = [row[0] for row in self.db.execute(sql, params)]
        from abstat.runner.model import BUILTIN_METRICS

        builtin = [m for m in BUILTIN_METRICS if m in names]
        return builtin + sorted(m for m in names if m not in BUILTIN_METRICS)

    def unit(self, experiment: str, metric: str) -> str | None:
        row = self.db.execute(
            "SELECT s.unit FROM samples s JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND s.metric = ? AND s.unit IS NOT NULL"
            " LIMIT 1",
            (experiment, metric),
        ).fetchone()
        return row[0] if row else None

    def groups_by_metric(
        self, experiment: str, *, invocations: Sequence[int] | None = None
    ) -> dict[str, dict[str, list[list[float]]]]:
        """Values of successful runs: metric -> variant -> one list per invocation (run group),
        only those of ``invocations`` when given."""
        sql = (
            "SELECT s.metric, v.name, r.invocation_id, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? AND r.status = 'ok'"
        )
        params: list[Any] = [experiment]
        sql = and_in(sql, params, "r.invocation_id", invocations)
        sql += " ORDER BY s.metric, v.id, r.invocation_id, r.position, s.idx"
        found: dict[str, dict[str, dict[int, list[float]]]] = {}
        for metric, variant, invocation_id, value in self.db.execute(sql, params):
            number = self._number(value, metric, invocation_id)
            if number is not None:
                found.setdefault(metric, {}).setdefault(variant, {}).setdefault(invocation_id, []).append(number)
        return {
            metric: {variant: list(groups.values()) for variant, groups in by_variant.items()}
            for metric, by_variant in found.items()
        }

    def machine_records(
        self, experiment: str, variant: str | None = None, *, invocations: Sequence[int] | None = None
    ) -> list[dict[str, Any]]:
        """Machine records of the invocations with successful runs (oldest first),
        only those of ``invocations`` when given."""
        sql = (
            "SELECT DISTINCT i.id, i.machine FROM invocations i JOIN runs r ON r.invocation_id = i.id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = i.experiment_id"
            " WHERE e.name = ? AND r.status = 'ok'"
        )
        params: list[Any] = [experiment]
        sql = and_in(sql, params, "v.name", None if variant is None else [variant])
        sql = and_in(sql, params, "i.id", invocations)
        sql += " ORDER BY i.id"
        return [self._load(row[1], {}, f"machine record of invocation {row[0]}") for row in self.db.execute(sql, params)]

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
                    "id": row[0], "started_at": row[1], "ended_at": row[2], "status": row[3],
                    "hostname": row[4], "boot_id": row[5],
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

    def sample_rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """One row per stored sample (export): experiment, variant, metric, value, run...

        In a damaged SQLite file the rows the one ordered query cannot reach are
        read run by run, around the damage (named in ``damage``)."""
        done: set[int] = set()
        try:
            for row in self._sample_rows(experiment):
                done.add(row["run"])
                yield row
        except self.db.errors as err:
            if not self.db.is_damage(err):
                raise
            self._damaged(f"the store is damaged ({' '.join(str(err).split())}); read around it run by run")
            yield from self._salvaged_rows(experiment, done)

    def _salvaged_rows(self, experiment: str | None, done: set[int]) -> Iterator[dict[str, Any]]:
        run_ids: list[int] = []
        try:
            for (run_id,) in self.db.execute("SELECT id FROM runs WHERE status = 'ok' ORDER BY id"):
                run_ids.append(run_id)
        except self.db.errors:
            self._damaged(f"the list of runs is damaged: {len(run_ids)} run(s) readable")
        lost = 0
        for run_id in run_ids:
            if run_id in done:
                continue
            try:
                rows = list(self._sample_rows(experiment, run_id))
            except self.db.errors:
                lost += 1
                continue
            yield from rows
        if lost:
            self._damaged(f"the samples of {lost} run(s) are unreadable")

    def _sample_rows(self, experiment: str | None = None, run_id: int | None = None) -> Iterator[dict[str, Any]]:
        sql = (
            "SELECT e.name, v.name, s.metric, s.value, s.unit, r.id, r.iteration, s.idx, i.id, i.boot_id,"
            " i.hostname, r.started_at, r.command, i.machine, r.notes FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " JOIN invocations i ON i.id = r.invocation_id WHERE r.status = 'ok'"
        )
        params: list[Any] = []
        sql = and_in(sql, params, "e.name", None if experiment is None else [experiment])
        sql = and_in(sql, params, "r.id", None if run_id is None else [run_id])
        sql += " ORDER BY e.id, i.id, r.position, s.metric, s.idx"
        machines: dict[int, dict[str, Any]] = {}
        label_cache: dict[int, dict[str, str]] = {}
        for row in self.db.execute(sql, params):
            invocation_id = row[8]
            if invocation_id not in machines:
                machines[invocation_id] = self._load(row[13], {}, f"machine record of invocation {invocation_id}")
                label_cache[invocation_id] = dict(
                    self.db.execute(
                        "SELECT key, value FROM labels WHERE invocation_id = ? ORDER BY key", (invocation_id,)
                    ).fetchall()
                )
            value = self._number(row[3], row[2], invocation_id)
            if value is None:
                continue
            yield {
                "experiment": row[0], "variant": row[1], "metric": row[2], "value": value,
                "unit": row[4], "run": row[5], "iteration": row[6] + 1, "index": row[7],
                "invocation": invocation_id, "boot_id": row[9], "host": row[10],
                "started_at": row[11], "command": row[12], "labels": label_cache[invocation_id],
                "notes": self._load(row[14], [], f"notes of run {row[5]}"), "machine": machines[invocation_id],
            }

    def sample_sets(self, where: Mapping[str, Any] | None = None) -> Iterator[SampleSet]:
        """Group samples by (experiment, variant, metric, host, labels); runs by invocation."""
        # Names and hosts come from the small tables, not with every sample row:
        # the big query moves five columns, three of them numbers.
        sql = (
            "SELECT v.id, s.metric, r.invocation_id, s.value, s.unit FROM samples s"
            " JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE r.status = 'ok'"
        )
        accepted = {key: _accepted(wanted) for key, wanted in (where or {}).items()}
        params: list[Any] = []
        for key, column in (("experiment", "e.name"), ("variant", "v.name"), ("metric", "s.metric")):
            # these labels are columns: let the database skip the other rows
            sql = and_in(sql, params, column, sorted(accepted[key]) if key in accepted else None)
        rows = self.db.execute(sql + " ORDER BY e.id, v.id, s.metric, r.invocation_id, r.position, s.idx", params)
        names = {key: (experiment, variant) for key, experiment, variant in self.db.execute(
            "SELECT v.id, e.name, v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id")}
        hosts = dict(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
        label_cache = self._all_labels()
        sets: dict[tuple, dict[str, Any]] = {}
        for variant_id, metric, invocation_id, value, unit in rows:
            if variant_id not in names or invocation_id not in hosts:  # created after the lookups were read
                names.update({key: (e, v) for key, e, v in self.db.execute(
                    "SELECT v.id, e.name, v.name FROM variants v JOIN experiments e ON e.id = v.experiment_id")})
                hosts.update(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
            (experiment, variant), host = names[variant_id], hosts[invocation_id]
            number = self._number(value, metric, invocation_id)
            if number is None:
                continue
            if invocation_id not in label_cache:  # no labels, or started after they were read
                label_cache[invocation_id] = dict(
                    self.db.execute("SELECT key, value FROM labels WHERE invocation_id = ?", (invocation_id,))
                )
            labels = dict(label_cache[invocation_id])
            labels.update({"experiment": experiment, "variant": variant, "metric": metric})
            if host is not None:
                labels.setdefault("host", host)  # a --label host=NAME names the machine
            if not _matches(labels, accepted):
                continue
            key = tuple(sorted(labels.items()))
            entry = sets.setdefault(key, {"labels": labels, "groups": {}, "invocations": [], "unit": unit})
            if invocation_id not in entry["groups"]:
                entry["groups"][invocation_id] = []
                entry["invocations"].append(invocation_id)
            entry["groups"][invocation_id].append(number)
        last_ids = sorted({entry["invocations"][-1] for entry in sets.values()})
        machines: dict[int, str] = {}  # invocation id -> machine record (JSON)
        for start in range(0, len(last_ids), 500):
            chunk = last_ids[start:start + 500]
            machines.update(self.db.execute(
                f"SELECT id, machine FROM invocations WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall())
        for entry in sets.values():
            last = entry["invocations"][-1]
            yield SampleSet(
                labels=entry["labels"],
                runs=[entry["groups"][i] for i in entry["invocations"]],
                machine=self._load(machines.get(last), {}, f"machine record of invocation {last}"),
                unit=entry["unit"],
                invocations=list(entry["invocations"]),
            )


def _accepted(wanted: Any) -> set[str]:
    """The values a ``where`` entry accepts: one value or a collection of them."""
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return {str(w) for w in wanted}
    return {str(wanted)}


def _matches(labels: Mapping[str, str], accepted: Mapping[str, set[str]]) -> bool:
    return all(labels.get(key) in values for key, values in accepted.items())


