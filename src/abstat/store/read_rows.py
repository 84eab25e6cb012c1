"""Reading the store row by row, for ``abstat export`` and ``abstat noise``:
one row per stored sample with its run, and one row per invocation with its
machine record.  The machine record (~4 KB) goes out once per invocation,
never with every sample."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from abstat.store.read_runs import RUN_ORDER, and_in


class RowReader:
    db: Any
    damage: list[str]
    _all_labels: Any
    _load: Any
    _damaged: Any
    _number: Any

    def sample_rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """One row per stored sample: experiment, variant, metric, value, unit, run, iteration,
        index, invocation, boot_id, host, started_at, command, labels, notes.  Experiments in
        the order they were created, then invocations, runs in the order they ran, metrics by name.
        Rows of one run share their ``labels`` and ``notes`` objects: do not change them.

        In a damaged SQLite file the rows the ordered queries cannot reach are
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

    def machine_rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """One row per invocation: experiment, invocation, host, boot_id, started_at and its
        machine record (``machine``), in the order of ``sample_rows``."""
        params: list[Any] = []
        sql = and_in("SELECT e.name, i.id, i.hostname, i.boot_id, i.started_at, i.machine FROM invocations i"
                     " JOIN experiments e ON e.id = i.experiment_id WHERE 1 = 1", params, "e.name",
                     None if experiment is None else [experiment])
        for name, invocation_id, host, boot_id, started_at, machine in self.db.execute(sql + " ORDER BY e.id, i.id",
                                                                                       params):
            yield {"experiment": name, "invocation": invocation_id, "host": host, "boot_id": boot_id,
                   "started_at": started_at,
                   "machine": self._load(machine, {}, f"machine record of invocation {invocation_id}")}

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
        params: list[Any] = []
        sql = and_in("SELECT id, name FROM experiments WHERE 1 = 1", params, "name",
                     None if experiment is None else [experiment])
        experiments = self.db.execute(sql + " ORDER BY id", params).fetchall()
        labels = self._all_labels()
        for experiment_id, name in experiments:
            yield from self._experiment_rows(experiment_id, name, labels, run_id)

    def _experiment_rows(self, experiment_id: int, name: str, labels: dict[int, dict[str, str]],
                         run_id: int | None) -> Iterator[dict[str, Any]]:
        # Run and invocation columns come from one query per experiment of the small
        # tables; the big query moves the samples with their run's id only.
        invocations = {row[0]: row[1:] for row in self.db.execute(
            "SELECT id, boot_id, hostname FROM invocations WHERE experiment_id = ?", (experiment_id,))}
        variants = dict(self.db.execute("SELECT id, name FROM variants WHERE experiment_id = ?", (experiment_id,)))
        params: list[Any] = [experiment_id]
        sql = ("SELECT s.run_id, s.metric, s.idx, s.value, s.unit, r.invocation_id, r.variant_id, r.iteration,"
               " r.started_at, r.command, r.notes FROM samples s JOIN runs r ON r.id = s.run_id"
               " WHERE r.status = 'ok' AND r.invocation_id IN (SELECT id FROM invocations WHERE experiment_id = ?)")
        sql = and_in(sql, params, "r.id", None if run_id is None else [run_id])
        current = None
        for key, metric, index, value, unit, invocation_id, variant_id, iteration, started_at, command, notes \
                in self.db.execute(sql + RUN_ORDER, params):
            if key != current:
                if invocation_id not in invocations:  # started after the lookups were read
                    invocations.update({row[0]: row[1:] for row in self.db.execute(
                        "SELECT id, boot_id, hostname FROM invocations WHERE experiment_id = ?", (experiment_id,))})
                    variants.update(self.db.execute("SELECT id, name FROM variants WHERE experiment_id = ?",
                                                    (experiment_id,)))
                    labels.update(self._all_labels())
                boot_id, host = invocations[invocation_id]
                current, variant = key, variants[variant_id]
                run_labels = labels.setdefault(invocation_id, {})
                run_notes = self._load(notes, [], f"notes of run {key}")
            if value.__class__ is not float:
                value = self._number(value, metric, invocation_id)
                if value is None:
                    continue
            yield {"experiment": name, "variant": variant, "metric": metric, "value": value, "unit": unit,
                   "run": key, "iteration": iteration + 1, "index": index, "invocation": invocation_id,
                   "boot_id": boot_id, "host": host, "started_at": started_at, "command": command,
                   "labels": run_labels, "notes": run_notes}
