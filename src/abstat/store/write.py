"""Writing the store: one short transaction per invocation start, per run (or
per batch of short runs, which the engine journals first: abstat.store.journal)
and per invocation end, so a SIGKILL loses at most the run in progress.

Experiments and variants are created with ``INSERT ... ON CONFLICT DO
NOTHING`` and read back, so concurrent writers (processes on several hosts
writing one experiment) never create one twice.  Every invocation and run
gets a random UUID: its identity across stores, for ``abstat import``.

On PostgreSQL a server that goes away can be survived: after
:meth:`StoreWriter.spool_on_disconnect`, the invocation in progress moves to
a local SQLite file (same identities) that ``abstat import`` merges later.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from abstat.errors import InputError
from abstat.store.backend import display_name
from abstat.store.records import Invocation
from abstat.store.schema import new_uid
from abstat.store.write_rows import (  # noqa: F401 (check_experiment_name: re-exported)
    _check_invocation,
    _dumps_list,
    _run_row,
    _samples,
    check_experiment_name,
    check_run,
    now,
)


class StoreWriter:
    db: Any
    display: str

    def __init__(self) -> None:
        self._spool_notify: Callable[[str], None] | None = None
        self._spool_directory = "."
        self.spool: Any = None  # the SQLite store runs go to once the server went away
        self._spooled: dict[int, Invocation] = {}  # invocation id here -> the spool's
        self._begun: dict[int, dict[str, Any]] = {}  # invocation id -> what started it (to replay)
        self._committed: dict[int, int] = {}  # invocation id -> runs committed here
        self._known_variants: dict[tuple[int, str], int] = {}  # (experiment id, variant) -> id, once known

    # -- rows shared by writing and importing ------------------------------

    def _ensure_experiment(self, name: str, created_at: str | None = None) -> int:
        self.db.execute(
            "INSERT INTO experiments (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (name, created_at or now()),
        )
        return int(self.db.execute("SELECT id FROM experiments WHERE name = ?", (name,)).fetchone()[0])

    def _ensure_variant(self, experiment_id: int, name: str) -> int:
        self.db.execute(
            "INSERT INTO variants (experiment_id, name) VALUES (?, ?) ON CONFLICT (experiment_id, name) DO NOTHING",
            (experiment_id, name),
        )
        return int(
            self.db.execute(
                "SELECT id FROM variants WHERE experiment_id = ? AND name = ?", (experiment_id, name)
            ).fetchone()[0]
        )

    def _insert_invocation(self, experiment_id: int, row: Mapping[str, Any]) -> int:
        invocation_id = self.db.insert(
            "INSERT INTO invocations (uid, experiment_id, started_at, ended_at, status, hostname, boot_id, machine,"
            " argv, settings, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row["uid"],
                experiment_id,
                row["started_at"],
                row.get("ended_at"),
                row.get("status", "running"),
                row.get("hostname"),
                row.get("boot_id"),
                row["machine"],
                row.get("argv"),
                row.get("settings"),
                row.get("notes"),
            ),
        )
        self.db.executemany(
            "INSERT INTO labels (invocation_id, key, value) VALUES (?, ?, ?)",
            [(invocation_id, key, value) for key, value in row.get("labels", {}).items()],
        )
        return invocation_id

    def _insert_run(
        self,
        invocation_id: int,
        variant_id: int,
        row: Mapping[str, Any],
        samples: Sequence[tuple[str, int, float, str | None]],
    ) -> int:
        run_id = self.db.insert(
            "INSERT INTO runs (uid, invocation_id, variant_id, command, iteration, position, status, exit_code,"
            " started_at, wall, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row["uid"],
                invocation_id,
                variant_id,
                row["command"],
                row["iteration"],
                row["position"],
                row["status"],
                row.get("exit_code"),
                row["started_at"],
                row.get("wall"),
                row.get("notes"),
            ),
        )
        self.db.executemany(
            "INSERT INTO samples (run_id, metric, idx, value, unit) VALUES (?, ?, ?, ?, ?)",
            [(run_id, *sample) for sample in samples],
        )
        return run_id

    # -- one `abstat run` ----------------------------------------------------

    def start_invocation(
        self,
        experiment: str,
        machine: Mapping[str, Any],
        *,
        argv: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        variants: Sequence[str] = (),
        uid: str | None = None,
        started_at: str | None = None,
    ) -> Invocation:
        """Record the start of one ``abstat run`` (creating the experiment)."""
        _check_invocation(experiment, machine, labels)
        uid = uid or new_uid()
        row = {
            "uid": uid,
            "started_at": started_at or now(),
            "hostname": machine.get("hostname"),
            "boot_id": machine.get("boot_id"),
            "machine": json.dumps(dict(machine), sort_keys=True),
            "argv": json.dumps([display_name(str(item)) for item in argv]),  # no password in the store
            "settings": json.dumps(dict(settings or {}), sort_keys=True),
            "labels": dict(labels or {}),
        }
        begun = {
            "experiment": experiment,
            "machine": dict(machine),
            "argv": list(argv),
            "settings": dict(settings or {}),
            "labels": dict(labels or {}),
            "variants": list(variants),
            "uid": row["uid"],
            "started_at": row["started_at"],
        }
        try:
            with self.db.transaction():
                experiment_id = self._ensure_experiment(experiment)
                invocation_id = self._insert_invocation(experiment_id, row)
                for name in variants:
                    self._ensure_variant(experiment_id, name)
        except self.db.errors as err:  # the server went away between two boots: the new one starts spooled
            if self._spool_notify is None or not self.db.is_disconnect(err):
                raise
            invocation = Invocation(-1 - len(self._begun), -1, experiment, uid)  # an id no row has
            self._begun[invocation.id], self._committed[invocation.id] = begun, 0
            self._fail_over(invocation, err)
            return invocation
        invocation = Invocation(invocation_id, experiment_id, experiment, uid)
        self._begun[invocation_id], self._committed[invocation_id] = begun, 0
        return invocation

    def add_run(
        self,
        invocation: Invocation,
        *,
        variant: str,
        command: str,
        iteration: int,
        position: int,
        status: str,
        exit_code: int | None,
        started_at: float,
        wall: float | None,
        values: Mapping[str, Sequence[float]],
        units: Mapping[str, str] | None = None,
        notes: Sequence[str] = (),
        uid: str | None = None,
    ) -> int:
        """Commit one completed run and, if it succeeded, its samples (InputError, nothing stored, when
        a field has the wrong type: a number that is not finite, a text for a list...).  ``uid``: the
        run's identity (a new one when None)."""
        arguments = check_run(
            variant=variant,
            command=command,
            iteration=iteration,
            position=position,
            status=status,
            exit_code=exit_code,
            started_at=started_at,
            wall=wall,
            values=values,
            units=units,
            notes=notes,
            uid=uid,
        )
        return self.add_checked_runs(invocation, [arguments])[0]

    def add_checked_runs(self, invocation: Invocation, runs: Sequence[Mapping[str, Any]]) -> list[int]:
        """Commit runs checked by :func:`check_run` (each with its ``uid``) in one transaction; their ids.
        (The engine commits a batch of short runs at once: see abstat.engine.buffer.)"""
        if invocation.id in self._spooled:
            return [int(self.spool.add_run(self._spooled[invocation.id], **run)) for run in runs]
        ids: list[int] = []
        known = dict(self._known_variants)
        try:
            with self.db.transaction():
                for run in runs:
                    key = (invocation.experiment_id, run["variant"])
                    variant_id = known.get(key)
                    if variant_id is None:  # two statements, once per variant
                        variant_id = known[key] = self._ensure_variant(*key)
                    ids.append(self._insert_run(invocation.id, variant_id, _run_row(run), _samples(run)))
        except self.db.errors as err:
            if not self._fail_over(invocation, err):
                raise
            return [int(self.spool.add_run(self._spooled[invocation.id], **run)) for run in runs]
        self._known_variants = known  # once committed: a rolled-back variant row is not remembered
        self._committed[invocation.id] = self._committed.get(invocation.id, 0) + len(ids)
        return ids

    def add_missing_runs(self, invocation: Invocation, runs: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
        """Add the checked ``runs`` the store lacks, in one transaction concurrent adders of the same runs
        wait for (journal replays at once add each run once); (added, already in this invocation).
        InputError, nothing added, when one is stored in another invocation (a forged identity)."""
        with self.db.transaction():
            self.db.lock_import()
            clause, params = self.db.within("uid", [run["uid"] for run in runs])
            stored = dict(self.db.execute(f"SELECT uid, invocation_id FROM runs WHERE {clause}", params).fetchall())
            for run in runs:
                if stored.get(run["uid"], invocation.id) != invocation.id:
                    raise InputError(
                        f"run {run['uid']} has the identity of a run another invocation of the store"
                        " holds: refused, nothing added"
                    )
            wanted = [run for run in runs if run["uid"] not in stored]
            variants: dict[str, int] = {}
            for run in wanted:
                if run["variant"] not in variants:
                    variants[run["variant"]] = self._ensure_variant(invocation.experiment_id, run["variant"])
                self._insert_run(invocation.id, variants[run["variant"]], _run_row(run), _samples(run))
        return len(wanted), len(runs) - len(wanted)

    def finish_invocation(self, invocation: Invocation, status: str, notes: Sequence[str] = ()) -> None:
        if invocation.id in self._spooled:
            self.spool.finish_invocation(self._spooled[invocation.id], status, notes)
            self._bring_home()
            return
        try:
            with self.db.transaction():
                self.db.execute(
                    "UPDATE invocations SET ended_at = ?, status = ?, notes = ? WHERE id = ?",
                    (now(), status, _dumps_list(notes), invocation.id),
                )
        except self.db.errors as err:
            if not self._fail_over(invocation, err):
                raise
            self.spool.finish_invocation(self._spooled[invocation.id], status, notes)
            self._bring_home()

    # -- surviving a server that goes away -----------------------------------

    def spool_on_disconnect(self, notify: Callable[[str], None], directory: str = ".") -> None:
        """If the server goes away, keep the invocation going in a local SQLite
        file and call ``notify`` once with a line naming it.  (No effect on SQLite.)"""
        self._spool_notify = notify
        self._spool_directory = directory

    def _fail_over(self, invocation: Invocation, err: BaseException) -> bool:
        if self._spool_notify is None or not self.db.is_disconnect(err) or invocation.id not in self._begun:
            return False
        begun = self._begun[invocation.id]
        reason = self.db.error(err)
        kept = f"the {self._committed.get(invocation.id, 0)} run(s) already committed there are kept"
        path = os.path.join(self._spool_directory, f"abstat-spool-{begun['uid'][:8]}.db")
        try:
            if self.spool is None:
                self.spool = self._open_spool(path)
            self._spooled[invocation.id] = self.spool.start_invocation(
                begun["experiment"],
                begun["machine"],
                argv=begun["argv"],
                settings=begun["settings"],
                labels=begun["labels"],
                variants=begun["variants"],
                uid=begun["uid"],
                started_at=begun["started_at"],
            )
        except (InputError, OSError, sqlite3.Error) as spool_error:  # a full disk, a read-only directory: say both
            raise InputError(
                f"{reason}; {kept}; the next runs cannot go to a spool file either ({spool_error})"
            ) from None
        self._spool_notify(
            f"abstat run: {reason}; {kept}; the next runs go to {self.spool.display}: `abstat import"
            f" {self.spool.display} --store {self.display}` once the server is back"
        )
        return True

    def _open_spool(self, path: str) -> Any:
        """The local SQLite store a spooled invocation goes to (the Store opens it)."""
        raise NotImplementedError

    def _bring_home(self) -> None:
        """At the end of a spooled invocation: if the server answers again, import
        the spool into it (so the report sees every run); else leave it for later."""
        from abstat.store.connect import connect
        from abstat.store.schema import migrate

        if self.db.stopped():  # Ctrl-C cut a wait on the server: it is not asked again
            return
        try:
            connection = connect(self.db.name, create=False)
        except InputError:
            return
        errors: tuple[type[BaseException], ...] = (InputError, *connection.errors)
        try:
            migrate(connection)
        except errors:
            connection.close()
            return
        self.db.close()
        self.db = connection
        try:
            result = self.import_from(self.spool)  # type: ignore[attr-defined]
        except InputError:
            return
        assert self._spool_notify is not None
        self._spool_notify(
            f"abstat run: the store server answers again: {result.runs_added} spooled run(s) imported into"
            f" {self.display}; {self.spool.display} is no longer needed"
        )
