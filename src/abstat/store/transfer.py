"""Copying runs between stores (``abstat import``): merging stores recorded
on several machines, moving SQLite to PostgreSQL and back, and bringing a
spool file home after the server went away.

Invocations and runs are matched by their stable identities (``uid``), so an
import is idempotent: importing a store twice adds nothing, and importing a
store that holds more runs of an invocation already present adds only those.
Labels, run groups (invocations) and machine records travel with the runs.
Each invocation is copied in one transaction: an interrupted import keeps
whole invocations, and running it again completes it.  The source is only
read (opened read-only; an old one is not migrated).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from abstat.store.schema import INVOCATION_IDENTITY, RUN_IDENTITY, invocation_uid, run_uid


@dataclass
class ImportResult:
    source: str
    invocations_added: int = 0
    invocations_updated: int = 0
    runs_added: int = 0
    runs_present: int = 0
    damage: list[str] = field(default_factory=list)


def import_store(source: Any, target: Any) -> ImportResult:
    """Copy what ``source`` holds and ``target`` lacks into ``target`` (both open Stores)."""
    result = ImportResult(source.display)
    has_uids = source.version >= 2
    known_invocations = {uid: (key, status) for uid, key, status in
                         target.db.execute("SELECT uid, id, status FROM invocations").fetchall()}
    known_runs = {row[0] for row in target.db.execute("SELECT uid FROM runs").fetchall()}
    experiments = source.db.execute("SELECT id, name, created_at FROM experiments ORDER BY id").fetchall()
    for experiment_id, experiment, created_at in experiments:
        variants = [row[0] for row in source.db.execute(
            "SELECT name FROM variants WHERE experiment_id = ? ORDER BY id", (experiment_id,))]
        uid_column = "i.uid" if has_uids else "NULL"
        invocations = source.db.execute(
            f"SELECT {uid_column}, i.ended_at, i.status, i.notes, {INVOCATION_IDENTITY} FROM invocations i"
            " WHERE i.experiment_id = ? ORDER BY i.id", (experiment_id,)).fetchall()
        with target.db.transaction():  # the experiment and its variants, in the source's order
            target_experiment = target._ensure_experiment(experiment, created_at)
            variant_ids = {name: target._ensure_variant(target_experiment, name) for name in variants}
        for uid, ended_at, status, notes, *identity in invocations:
            uid = uid or invocation_uid(experiment, tuple(identity))
            key, started_at, hostname, boot_id, machine, argv, settings = identity
            runs = _runs(source, key, uid, has_uids)
            missing = [run for run in runs if run["uid"] not in known_runs]
            present = known_invocations.get(uid)
            result.runs_present += len(runs) - len(missing)
            finished = present is not None and present[1] == "running" and status != "running"
            if present is not None and not missing and not finished:
                continue
            samples = _samples(source, key, result) if missing else {}
            with target.db.transaction():
                if present is None:
                    labels = dict(target_labels(source, key))
                    target_id = target._insert_invocation(target_experiment, {
                        "uid": uid, "started_at": started_at, "ended_at": ended_at, "status": status,
                        "hostname": hostname, "boot_id": boot_id, "machine": machine, "argv": argv,
                        "settings": settings, "notes": notes, "labels": labels,
                    })
                    result.invocations_added += 1
                else:
                    target_id = present[0]
                    if finished:  # the spool (or a later copy) saw the end of an invocation
                        target.db.execute("UPDATE invocations SET ended_at = ?, status = ?, notes = ? WHERE id = ?",
                                          (ended_at, status, notes, target_id))
                        result.invocations_updated += 1
                for run in missing:
                    if run["variant"] not in variant_ids:
                        variant_ids[run["variant"]] = target._ensure_variant(target_experiment, run["variant"])
                    target._insert_run(target_id, variant_ids[run["variant"]], run, samples.get(run["id"], []))
            known_invocations[uid] = (target_id, status if present is None or finished else present[1])
            known_runs.update(run["uid"] for run in missing)
            result.runs_added += len(missing)
    if result.runs_added:
        target.db.analyze()
    return result


def target_labels(store: Any, invocation_id: int) -> list[tuple[str, str]]:
    return store.db.execute("SELECT key, value FROM labels WHERE invocation_id = ? ORDER BY key",
                            (invocation_id,)).fetchall()


def _runs(source: Any, invocation_id: int, invocation: str, has_uids: bool) -> list[dict[str, Any]]:
    uid_column = "r.uid" if has_uids else "NULL"
    rows = source.db.execute(
        f"SELECT {uid_column}, r.command, r.status, r.exit_code, r.wall, r.notes, {RUN_IDENTITY} FROM runs r"
        " JOIN variants v ON v.id = r.variant_id WHERE r.invocation_id = ? ORDER BY r.id", (invocation_id,)
    ).fetchall()
    runs = []
    for uid, command, status, exit_code, wall, notes, *identity in rows:
        key, variant, iteration, position, started_at = identity
        runs.append({
            "uid": uid or run_uid(invocation, tuple(identity)), "id": key, "variant": variant, "command": command,
            "iteration": iteration, "position": position, "status": status, "exit_code": exit_code,
            "started_at": started_at, "wall": wall, "notes": notes,
        })
    return runs


def _samples(source: Any, invocation_id: int, result: ImportResult) -> dict[int, list[tuple[str, int, float, Any]]]:
    samples: dict[int, list[tuple[str, int, float, Any]]] = {}
    for run_id, metric, index, value, unit in source.db.execute(
        "SELECT s.run_id, s.metric, s.idx, s.value, s.unit FROM samples s JOIN runs r ON r.id = s.run_id"
        " WHERE r.invocation_id = ? ORDER BY s.run_id, s.metric, s.idx", (invocation_id,)
    ):
        number = source._number(value, metric, invocation_id)
        if number is not None:  # a damaged sample is left behind (and named)
            samples.setdefault(run_id, []).append((metric, index, number, unit))
    result.damage = list(source.damage)
    return samples
