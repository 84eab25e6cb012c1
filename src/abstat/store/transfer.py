"""Copying runs between stores (``abstat import``): merging stores recorded
on several machines, moving SQLite to PostgreSQL and back, and bringing a
spool file home after the server went away.

Invocations and runs are matched by their stable identities (``uid``), so an
import is idempotent: importing a store twice adds nothing, and importing a
store that holds more runs of an invocation already present adds only those.
Labels, run groups (invocations) and machine records travel with the runs.

Invocations are copied in batches of about ``BATCH_RUNS`` runs, each batch
in one transaction: an interrupted import keeps whole invocations, and
running it again completes it.  Rows go in as bulk statements (``COPY`` on
PostgreSQL), not one statement per run: round trips bounded the import to
~400 runs/s over a network.  Each batch decides what the target lacks inside
its transaction, under the import lock (PostgreSQL: an advisory lock;
SQLite: the write lock), so two imports of one file at once add everything
once and neither fails on the other's rows.  The source is only read
(opened read-only; an old one is not migrated).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from abstat.store.read_runs import and_in
from abstat.store.schema import INVOCATION_IDENTITY, RUN_IDENTITY, invocation_uid, run_uid
from abstat.store.transfer_sqlite import attach, copy_batch, detach

BATCH_RUNS = 20_000
RUN_COLUMNS = (
    "uid",
    "invocation_id",
    "variant_id",
    "command",
    "iteration",
    "position",
    "status",
    "exit_code",
    "started_at",
    "wall",
    "notes",
)
RUN_TYPES = ("int8", "text", "int8", "int8", "text", "int8", "int8", "text", "int8", "float8", "float8", "text")
SAMPLE_TYPES = ("int8", "text", "int8", "float8", "text")


@dataclass
class ImportResult:
    source: str
    invocations_added: int = 0
    invocations_updated: int = 0
    runs_added: int = 0
    runs_present: int = 0
    damage: list[str] = field(default_factory=list)


def import_store(source: Any, target: Any, experiments: Sequence[str] | None = None) -> ImportResult:
    """Copy what ``source`` holds and ``target`` lacks into ``target`` (both open Stores); only the
    experiments named in ``experiments`` when given (the caller decides which may be taken)."""
    result = ImportResult(source.display)
    attached = attach(source, target)  # SQLite to SQLite: in SQL, no row through Python
    try:
        _import(source, target, result, attached, None if experiments is None else set(experiments))
    finally:
        if attached:
            detach(target)
    result.damage = list(source.damage)
    if result.runs_added:
        target.db.analyze()
    return result


def _import(source: Any, target: Any, result: ImportResult, attached: bool, chosen: set[str] | None) -> None:
    has_uids = source.version >= 2
    experiments = source.db.execute("SELECT id, name, created_at FROM experiments ORDER BY id").fetchall()
    for experiment_id, experiment, created_at in experiments:
        if chosen is not None and experiment not in chosen:
            continue
        variants = [
            row[0]
            for row in source.db.execute(
                "SELECT name FROM variants WHERE experiment_id = ? ORDER BY id", (experiment_id,)
            )
        ]
        uid_column = "i.uid" if has_uids else "NULL"
        invocations = [
            (uid or invocation_uid(experiment, tuple(identity)), ended_at, status, notes, *identity)
            for uid, ended_at, status, notes, *identity in source.db.execute(
                f"SELECT {uid_column}, i.ended_at, i.status, i.notes, {INVOCATION_IDENTITY} FROM invocations i"
                " WHERE i.experiment_id = ? ORDER BY i.id",
                (experiment_id,),
            ).fetchall()
        ]
        counts = dict(
            source.db.execute(
                "SELECT r.invocation_id, COUNT(*) FROM runs r JOIN invocations i ON i.id = r.invocation_id"
                " WHERE i.experiment_id = ? GROUP BY r.invocation_id",
                (experiment_id,),
            ).fetchall()
        )
        _refuse_collisions(target, experiment, [row[0] for row in invocations], source.display)
        with target.db.transaction():  # the experiment and its variants, in the source's order
            target_experiment = target._ensure_experiment(experiment, created_at)
            variant_ids = {name: target._ensure_variant(target_experiment, name) for name in variants}
        for batch in _batches(invocations, counts):
            if attached:
                copy_batch(source, target, experiment_id, target_experiment, batch[0][4], batch[-1][4], result)
            else:
                _Batch(source, target, experiment, target_experiment, variant_ids, has_uids, result).copy(batch)


def _refuse_collisions(target: Any, experiment: str, uids: list[str], source: str) -> None:
    """An invocation of ``experiment`` whose identity the target holds under another experiment is
    refused (its runs would join that experiment's, and a later ``baseline save`` of either would
    take or drop them): InputError naming both."""
    from abstat.errors import InputError

    params: list[Any] = [experiment]
    sql = and_in(
        "SELECT i.uid, e.name FROM invocations i JOIN experiments e ON e.id = i.experiment_id WHERE e.name != ?",
        params,
        "i.uid",
        uids,
        target.db,
    )
    clash = target.db.execute(sql + " LIMIT 1", params).fetchone()
    if clash is not None:
        raise InputError(
            f"invocation {clash[0]} of experiment {experiment!r} is already in the target as one of "
            f"experiment {clash[1]!r}: not imported (a forged or copied store?)",
            path=source,
        )


def _batches(invocations: list[tuple[Any, ...]], counts: dict[int, int]) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    runs = 0
    for invocation in invocations:
        batch.append(invocation)
        runs += counts.get(invocation[4], 0)
        if runs >= BATCH_RUNS or len(batch) >= 2000:
            yield batch
            batch, runs = [], 0
    if batch:
        yield batch


Row = tuple[Any, ...]


class _Batch:
    """One transaction's worth of whole invocations."""

    def __init__(
        self,
        source: Any,
        target: Any,
        experiment: str,
        target_experiment: int,
        variant_ids: dict[str, int],
        has_uids: bool,
        result: ImportResult,
    ) -> None:
        self.source, self.target, self.experiment = source, target, experiment
        self.target_experiment, self.variant_ids = target_experiment, variant_ids
        self.has_uids, self.result = has_uids, result
        self.read: set[int] = set()  # source invocations whose samples are read

    def copy(self, batch: list[tuple[Any, ...]]) -> None:
        source = self.source
        keys = [row[4] for row in batch]
        runs = _runs(source, keys, {row[4]: row[0] for row in batch}, self.has_uids)
        # Read before the write transaction what the target seems to lack (checked again inside).
        present, present_runs = self._present(batch)
        wanted = [
            row[4]
            for row in batch
            if row[0] not in present or any(run["uid"] not in present_runs for run in runs.get(row[4], []))
        ]
        samples = _samples(source, wanted)
        self.read = set(wanted)
        new_invocations, finished, missing = self._write(batch, runs, samples)
        self.result.invocations_added += len(new_invocations)
        self.result.invocations_updated += len(finished)
        self.result.runs_added += len(missing)
        self.result.runs_present += sum(len(runs.get(row[4], [])) for row in batch) - len(missing)

    def _write(
        self, batch: list[tuple[Any, ...]], runs: dict[Any, list[dict[str, Any]]], samples: list[tuple[Any, ...]]
    ) -> tuple[list[Row], list[Row], list[tuple[int, dict[str, Any]]]]:
        """In one transaction, what the target lacks: the new invocations, the end of those it has as
        running, the missing runs (with their samples); returns them."""
        target = self.target
        with target.db.transaction():
            target.db.lock_import()
            present, present_runs = self._present(batch)
            new_invocations = [row for row in batch if row[0] not in present]
            ids = self._insert_invocations(new_invocations, present)
            finished = [
                (row[1], row[2], row[3], present[row[0]][0])
                for row in batch
                if row[0] in present and present[row[0]][1] == "running" and row[2] != "running"
            ]
            target.db.executemany("UPDATE invocations SET ended_at = ?, status = ?, notes = ? WHERE id = ?", finished)
            missing = [
                (ids[row[0]], run) for row in batch for run in runs.get(row[4], []) if run["uid"] not in present_runs
            ]
            self._insert_runs(missing, samples)
        return new_invocations, finished, missing

    def _present(self, batch: Sequence[tuple[Any, ...]]) -> tuple[dict[str, tuple[int, str]], set[str]]:
        """The batch's invocations the target has (uid -> (id, status)), and their runs' uids."""
        db = self.target.db
        params: list[Any] = []
        sql = and_in(
            "SELECT uid, id, status FROM invocations WHERE 1 = 1", params, "uid", [row[0] for row in batch], db
        )
        present = {uid: (key, status) for uid, key, status in db.execute(sql, params).fetchall()}
        if not present:
            return present, set()
        params = []
        sql = and_in("SELECT uid FROM runs WHERE 1 = 1", params, "invocation_id", [v[0] for v in present.values()], db)
        return present, {row[0] for row in db.execute(sql, params).fetchall()}

    def _insert_invocations(self, rows: list[tuple[Any, ...]], present: dict[str, tuple[int, str]]) -> dict[str, int]:
        """Insert the invocations (and their labels); every batch uid -> its id in the target."""
        db = self.target.db
        ids = {uid: value[0] for uid, value in present.items()}
        if not rows:
            return ids
        db.executemany(
            "INSERT INTO invocations (uid, experiment_id, started_at, ended_at, status, hostname, boot_id, machine,"
            " argv, settings, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING",
            [
                (
                    uid,
                    self.target_experiment,
                    started_at,
                    ended_at,
                    status,
                    hostname,
                    boot_id,
                    machine,
                    argv,
                    settings,
                    notes,
                )
                for uid, ended_at, status, notes, _key, started_at, hostname, boot_id, machine, argv, settings in rows
            ],
        )
        params: list[Any] = []
        sql = and_in("SELECT uid, id FROM invocations WHERE 1 = 1", params, "uid", [row[0] for row in rows], db)
        ids.update(db.execute(sql, params).fetchall())
        labels = _labels(self.source, [row[4] for row in rows])
        db.executemany(
            "INSERT INTO labels (invocation_id, key, value) VALUES (?, ?, ?)",
            [(ids[row[0]], key, value) for row in rows for key, value in labels.get(row[4], [])],
        )
        return ids

    def _insert_runs(self, missing: list[tuple[int, dict[str, Any]]], samples: list[tuple[Any, ...]]) -> None:
        if not missing:
            return
        db = self.target.db
        for _, run in missing:
            if run["variant"] not in self.variant_ids:
                self.variant_ids[run["variant"]] = self.target._ensure_variant(self.target_experiment, run["variant"])
        ids = db.reserve_ids("runs", len(missing))  # the samples name their runs without reading them back
        db.insert_rows(
            "runs",
            ("id", *RUN_COLUMNS),
            [
                (
                    key,
                    run["uid"],
                    invocation,
                    self.variant_ids[run["variant"]],
                    run["command"],
                    run["iteration"],
                    run["position"],
                    run["status"],
                    run["exit_code"],
                    run["started_at"],
                    run["wall"],
                    run["notes"],
                )
                for key, (invocation, run) in zip(ids, missing)
            ],
            RUN_TYPES,
        )
        target_of = {run["id"]: key for key, (_, run) in zip(ids, missing)}  # source run id -> target run id
        unread = sorted({run["invocation"] for _, run in missing} - self.read)  # stored in the source meanwhile
        if unread:
            samples = samples + _samples(self.source, unread)
        rows = [
            (target_of[run_id], metric, index, value, unit)
            for run_id, metric, index, value, unit, _ in samples
            if run_id in target_of
        ]
        if not set(map(type, map(itemgetter(3), rows))) <= {float}:  # a damaged source
            rows = [
                (run_id, metric, index, number, unit)
                for (run_id, metric, index, value, unit), (*_, invocation) in zip(
                    rows, (sample for sample in samples if sample[0] in target_of)
                )
                if (number := self.source._number(value, metric, invocation)) is not None
            ]
        db.insert_rows("samples", ("run_id", "metric", "idx", "value", "unit"), rows, SAMPLE_TYPES)


def _labels(store: Any, invocations: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
    params: list[Any] = []
    sql = and_in(
        "SELECT invocation_id, key, value FROM labels WHERE 1 = 1", params, "invocation_id", list(invocations), store.db
    )
    found: dict[int, list[tuple[str, str]]] = {}
    for invocation, key, value in store.db.execute(sql + " ORDER BY invocation_id, key", params).fetchall():
        found.setdefault(invocation, []).append((key, value))
    return found


def _runs(
    source: Any, invocations: Sequence[int], uids: dict[int, str], has_uids: bool
) -> dict[int, list[dict[str, Any]]]:
    """Source invocation id -> its runs, in the order they were stored."""
    uid_column = "r.uid" if has_uids else "NULL"
    params: list[Any] = []
    sql = and_in(
        f"SELECT r.invocation_id, {uid_column}, r.command, r.status, r.exit_code, r.wall, r.notes,"
        f" {RUN_IDENTITY} FROM runs r JOIN variants v ON v.id = r.variant_id WHERE 1 = 1",
        params,
        "r.invocation_id",
        list(invocations),
        source.db,
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for invocation, uid, command, status, exit_code, wall, notes, *identity in source.db.execute(
        sql + " ORDER BY r.id", params
    ).fetchall():
        key, variant, iteration, position, started_at = identity
        found.setdefault(invocation, []).append(
            {
                "uid": uid or run_uid(uids[invocation], tuple(identity)),
                "id": key,
                "invocation": invocation,
                "variant": variant,
                "command": command,
                "iteration": iteration,
                "position": position,
                "status": status,
                "exit_code": exit_code,
                "started_at": started_at,
                "wall": wall,
                "notes": notes,
            }
        )
    return found


def _samples(source: Any, invocations: Sequence[int]) -> list[tuple[Any, ...]]:
    """``(run id, metric, index, value, unit, invocation)`` of the source's samples of ``invocations``,
    as stored (a value that is not a number is left behind when copied, and named)."""
    if not invocations:
        return []
    params: list[Any] = []
    sql = and_in(
        "SELECT s.run_id, s.metric, s.idx, s.value, s.unit, r.invocation_id FROM samples s"
        " JOIN runs r ON r.id = s.run_id WHERE 1 = 1",
        params,
        "r.invocation_id",
        list(invocations),
        source.db,
    )
    return source.db.execute(sql + " ORDER BY s.run_id, s.metric, s.idx", params).fetchall()
