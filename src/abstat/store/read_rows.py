"""Reading the store row by row, for ``abstat export`` and ``abstat noise``:
one row per stored sample with its run, and one row per invocation with its
machine record.  The machine record (~4 KB) goes out once per invocation,
never with every sample."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from abstat.store.read_runs import RUN_ORDER, and_in


class RowReader:
    db: Any
    damage: list[str]
    _all_labels: Any
    _load: Any
    _damaged: Any
    _number: Any
    _optional: Any

    def label_values(self, keys: Sequence[str]) -> dict[str, set[str]]:
        """key -> every value stored under it, for ``keys`` (labels of every experiment)."""
        marks = ", ".join("?" for _ in keys)
        found: dict[str, set[str]] = {}
        for key, value in self.db.execute(
            f"SELECT DISTINCT key, value FROM labels WHERE key IN ({marks})", tuple(keys)
        ).fetchall():
            found.setdefault(key, set()).add(value)
        return found

    def sample_rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """One row per stored sample: experiment, variant, metric, value, unit, run, iteration,
        index, invocation, boot_id, host, started_at, command, labels, notes (as
        :meth:`sample_values`, one dict per sample), variant_order."""
        for run, metric, value, unit, index in self.sample_values(experiment):
            yield {
                "experiment": run["experiment"],
                "variant": run["variant"],
                "metric": metric,
                "value": value,
                "unit": unit,
                "run": run["run"],
                "iteration": run["iteration"],
                "index": index,
                "invocation": run["invocation"],
                "boot_id": run["boot_id"],
                "host": run["host"],
                "started_at": run["started_at"],
                "command": run["command"],
                "labels": run["labels"],
                "notes": run["notes"],
                "variant_order": run["variant_order"],
            }

    def sample_values(self, experiment: str | None = None) -> Iterator[tuple[dict[str, Any], str, float, Any, int]]:
        """``(run, metric, value, unit, index)`` per stored sample; ``run`` is one dict per run
        (experiment, variant, run, iteration, invocation, boot_id, host, started_at, command,
        labels, notes, variant_order: the variant's place in its experiment, 1 the first declared), the same
        object for all its samples: do not change it.  Experiments in
        the order they were created, then invocations, runs in the order they ran, metrics by name.

        In a damaged SQLite file the rows the ordered queries cannot reach are
        read run by run, around the damage (named in ``damage``)."""
        done: set[int] = set()
        try:
            last: Any = None
            for row in self._sample_values(experiment):
                if row[0] is not last:
                    last = row[0]
                    done.add(last["run"])
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
        sql = and_in(
            "SELECT e.name, i.id, i.hostname, i.boot_id, i.started_at, i.machine FROM invocations i"
            " JOIN experiments e ON e.id = i.experiment_id WHERE 1 = 1",
            params,
            "e.name",
            None if experiment is None else [experiment],
        )
        for name, invocation_id, host, boot_id, started_at, machine in self.db.execute(
            sql + " ORDER BY e.id, i.id", params
        ):
            yield {
                "experiment": name,
                "invocation": invocation_id,
                "host": host,
                "boot_id": boot_id,
                "started_at": started_at,
                "machine": self._load(machine, {}, f"machine record of invocation {invocation_id}"),
            }

    def _salvaged_rows(self, experiment: str | None, done: set[int]) -> Iterator[tuple[Any, ...]]:
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
                rows = list(self._sample_values(experiment, run_id))
            except self.db.errors:
                lost += 1
                continue
            yield from rows
        if lost:
            self._damaged(f"the samples of {lost} run(s) are unreadable")

    def _sample_values(self, experiment: str | None = None, run_id: int | None = None) -> Iterator[tuple[Any, ...]]:
        params: list[Any] = []
        sql = and_in(
            "SELECT id, name FROM experiments WHERE 1 = 1", params, "name", None if experiment is None else [experiment]
        )
        experiments = self.db.execute(sql + " ORDER BY id", params).fetchall()
        labels = self._all_labels()
        notes_read: dict[Any, list[str]] = {}  # runs mostly leave the same notes: decoded once
        for experiment_id, name in experiments:
            # The samples move six columns each; their runs' columns are read once per
            # run, one invocation at a time (memory stays flat in the number of runs).
            params = [experiment_id]
            sql = and_in(
                "SELECT s.run_id, s.metric, s.value, s.unit, s.idx, r.invocation_id FROM samples s"
                " JOIN runs r ON r.id = s.run_id WHERE r.status = 'ok'"
                " AND r.invocation_id IN (SELECT id FROM invocations WHERE experiment_id = ?)",
                params,
                "r.id",
                None if run_id is None else [run_id],
            )
            variants: dict[int, tuple[str, int]] = {}  # id -> name, place among the experiment's (1 first)
            runs: dict[int, tuple[Any, ...]] = {}
            current: Any = None
            run: dict[str, Any] = {}
            orphans = 0
            for key, metric, value, unit, index, invocation_id in self.db.execute(sql + RUN_ORDER, params):
                if key != current:
                    if key not in runs:  # the next invocation, or a run stored since its runs were read
                        runs = self._invocation_runs(invocation_id)
                        if key not in runs:  # a damaged row: its run id names no run of its invocation
                            orphans += 1
                            continue
                        self._look_up(experiment_id, runs[key][2], variants, invocation_id, labels)
                    current = key
                    run = self._run_record(
                        name, key, runs[key], invocation_id, variants[runs[key][2]], labels[invocation_id], notes_read
                    )
                if value.__class__ is not float:
                    value = self._number(value, metric, invocation_id)
                    if value is None:
                        continue
                if unit is not None and unit.__class__ is not str:
                    unit = str(unit)
                yield run, metric, value, unit, index
            if orphans:
                self._damaged(f"{orphans} sample row(s) of experiment {name!r} name no run: left out")

    def _look_up(
        self,
        experiment_id: int,
        variant_id: int,
        variants: dict[int, tuple[str, int]],
        invocation_id: int,
        labels: dict[int, dict[str, str]],
    ) -> None:
        """Read the variants' names and places (the order they were declared in: report's order, its first the
        baseline) and the invocation's labels when not read yet."""
        if variant_id not in variants:
            found = self.db.execute(
                "SELECT id, name FROM variants WHERE experiment_id = ? ORDER BY id", (experiment_id,)
            )
            variants.update({key: (variant, place) for place, (key, variant) in enumerate(found, 1)})
        if invocation_id not in labels:
            labels[invocation_id] = dict(
                self.db.execute("SELECT key, value FROM labels WHERE invocation_id = ? ORDER BY key", (invocation_id,))
            )

    def _run_record(
        self,
        name: str,
        key: int,
        columns: tuple[Any, ...],
        invocation_id: int,
        variant: tuple[str, int],
        labels: dict[str, str],
        notes_read: dict[Any, list[str]],
    ) -> dict[str, Any]:
        """The dict :meth:`sample_values` gives with each sample of run ``key``."""
        boot_id, host, _variant_id, iteration, started_at, command, notes = columns
        if iteration.__class__ is not int:  # a row an older abstat let a box write
            iteration = self._optional(iteration, int, f"iteration of run {key}")
        return {
            "experiment": name,
            "variant": variant[0],
            "run": key,
            "iteration": None if iteration is None else iteration + 1,
            "invocation": invocation_id,
            "boot_id": boot_id,
            "host": host,
            "started_at": started_at,
            "command": command,
            "labels": labels,
            "notes": notes_read.get(notes) or self._notes(notes, key, notes_read),
            "variant_order": variant[1],
        }

    def _notes(self, text: Any, run_id: int, found: dict[Any, list[str]]) -> list[str]:
        notes = self._load(text, [], f"notes of run {run_id}")
        if len(found) >= 10_000:
            found.clear()
        if notes:
            found[text] = notes
        return notes

    def _invocation_runs(self, invocation_id: int) -> dict[int, tuple[Any, ...]]:
        """Run id -> (boot id, host, variant id, iteration, started_at, command, notes) of one invocation."""
        return {
            row[0]: row[1:]
            for row in self.db.execute(
                "SELECT r.id, i.boot_id, i.hostname, r.variant_id, r.iteration, r.started_at, r.command, r.notes"
                " FROM runs r JOIN invocations i ON i.id = r.invocation_id WHERE r.invocation_id = ?",
                (invocation_id,),
            )
        }
