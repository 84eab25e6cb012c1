"""SQLite to SQLite import in SQL: the source file is attached to the target's
connection and each batch of invocations is copied by ``INSERT ... SELECT``
statements, joined on the stable identities (``uid``), so no row passes
through Python.  Same guarantees as :mod:`abstat.store.transfer` (whose
generic path reads rows into Python): idempotent, whole invocations per
transaction, damaged samples left behind and named, the source only read.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

ALIAS = "abstat_import_source"
MAP = "temp.abstat_import_runs"


def attach(source: Any, target: Any) -> bool:
    """Attach ``source``'s file to ``target``'s connection, read-only; False when this path
    does not apply (another back end, a store without identities, the same file)."""
    import sqlite3

    if (
        source.kind != "sqlite"
        or target.kind != "sqlite"
        or source.version < 2
        or sqlite3.sqlite_version_info < (3, 25)
    ):  # window functions
        return False
    try:
        if os.path.samefile(source.db.name, target.db.name):
            return False
    except OSError:
        return False
    uri = f"file:{quote(os.path.abspath(source.db.name))}?mode=ro"
    if getattr(source.db, "immutable", False):
        uri += "&immutable=1"
    try:
        target.db.raw.execute(f"ATTACH DATABASE ? AS {ALIAS}", (uri,))
        # 64 MiB of page cache while importing: inserting random uids into the indexes
        # otherwise rereads their pages for every row.  The rows added reference rows that
        # exist or are added in the same transaction: no foreign-key check per row (20%).
        target.db.raw.execute("PRAGMA cache_size = -65536")
        target.db.raw.execute("PRAGMA foreign_keys = OFF")
        source.attached_damage = (
            target.db.raw.execute(
                f"SELECT 1 FROM {ALIAS}.samples WHERE typeof(value) NOT IN ('real', 'integer') LIMIT 1"
            ).fetchone()
            is not None
        )
    except target.db.errors:
        return False
    return True


def detach(target: Any) -> None:
    try:
        target.db.raw.execute(f"DROP TABLE IF EXISTS {MAP}")
        target.db.raw.execute(f"DETACH DATABASE {ALIAS}")
        target.db.raw.execute("PRAGMA cache_size = -2000")
        target.db.raw.execute("PRAGMA foreign_keys = ON")
    except target.db.errors:
        pass


def copy_batch(
    source: Any, target: Any, experiment_id: int, target_experiment: int, first: int, last: int, result: Any
) -> None:
    """Copy the source's invocations ``first..last`` (ids) of ``experiment_id``, what the
    target lacks of them, in one transaction."""
    s = ALIAS
    where = "si.experiment_id = ? AND si.id BETWEEN ? AND ?"
    bounds = (experiment_id, first, last)
    db = target.db
    with db.transaction():
        before = db.execute("SELECT COALESCE(MAX(id), 0) FROM invocations").fetchone()[0]
        finished = db.execute(
            f"SELECT ti.id, si.ended_at, si.status, si.notes FROM {s}.invocations si JOIN invocations ti"
            f" ON ti.uid = si.uid WHERE {where} AND ti.status = 'running' AND si.status != 'running'",
            bounds,
        ).fetchall()
        db.executemany(
            "UPDATE invocations SET ended_at = ?, status = ?, notes = ? WHERE id = ?",
            [(ended, status, notes, key) for key, ended, status, notes in finished],
        )
        added = db.execute(
            "INSERT INTO invocations (uid, experiment_id, started_at, ended_at, status, hostname, boot_id, machine,"
            " argv, settings, notes) SELECT si.uid, ?, si.started_at, si.ended_at, si.status, si.hostname,"
            f" si.boot_id, si.machine, si.argv, si.settings, si.notes FROM {s}.invocations si WHERE {where}"
            " AND si.uid NOT IN (SELECT uid FROM invocations) ORDER BY si.id",
            (target_experiment, *bounds),
        ).rowcount
        db.execute(
            f"INSERT INTO labels (invocation_id, key, value) SELECT ti.id, l.key, l.value FROM {s}.labels l"
            f" JOIN {s}.invocations si ON si.id = l.invocation_id JOIN invocations ti ON ti.uid = si.uid"
            f" WHERE {where} AND ti.id > ?",
            (*bounds, before),
        )
        for (name,) in db.execute(
            f"SELECT DISTINCT sv.name FROM {s}.runs r JOIN {s}.invocations si"
            f" ON si.id = r.invocation_id JOIN {s}.variants sv ON sv.id = r.variant_id"
            f" WHERE {where}",
            bounds,
        ).fetchall():
            target._ensure_variant(target_experiment, name)  # a variant the source did not declare
        stored = db.execute(
            f"SELECT COUNT(*) FROM {s}.runs r JOIN {s}.invocations si ON si.id = r.invocation_id WHERE {where}", bounds
        ).fetchone()[0]
        # The runs the target lacks, each with its new id (numbered in the source's order): the
        # runs and their samples are then copied by id, without looking a uid up per row.
        db.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {MAP} (src INTEGER PRIMARY KEY, dst INTEGER, inv INTEGER, var INTEGER)"
        )
        db.execute(f"DELETE FROM {MAP}")
        base = db.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0]
        runs = db.execute(
            f"INSERT INTO {MAP} (src, dst, inv, var) SELECT r.id, ? + ROW_NUMBER() OVER (ORDER BY r.id), ti.id,"
            f" tv.id FROM {s}.runs r JOIN {s}.invocations si ON si.id = r.invocation_id JOIN invocations ti"
            f" ON ti.uid = si.uid JOIN {s}.variants sv ON sv.id = r.variant_id JOIN variants tv"
            f" ON tv.experiment_id = ? AND tv.name = sv.name WHERE {where} AND r.uid NOT IN (SELECT uid FROM runs)",
            (base, target_experiment, *bounds),
        ).rowcount
        if runs:
            db.execute(
                "INSERT INTO runs (id, uid, invocation_id, variant_id, command, iteration, position, status,"
                " exit_code, started_at, wall, notes) SELECT m.dst, r.uid, m.inv, m.var, r.command, r.iteration,"
                f" r.position, r.status, r.exit_code, r.started_at, r.wall, r.notes FROM {MAP} m JOIN {s}.runs r"
                " ON r.id = m.src ORDER BY m.src"
            )
            copied = f" FROM {MAP} m JOIN {s}.samples s ON s.run_id = m.src JOIN {s}.runs r ON r.id = m.src"
            db.execute(
                "INSERT INTO samples (run_id, metric, idx, value, unit) SELECT m.dst, s.metric, s.idx, s.value,"
                f" s.unit FROM {MAP} m JOIN {s}.samples s ON s.run_id = m.src"
                " WHERE typeof(s.value) IN ('real', 'integer') ORDER BY m.src"
            )
            # (``attached_damage``: some sample of the source is not a number)
            odd = (
                db.execute(
                    f"SELECT m.dst, s.metric, s.idx, s.value, s.unit, r.invocation_id{copied}"
                    " WHERE typeof(s.value) NOT IN ('real', 'integer')"
                ).fetchall()
                if getattr(source, "attached_damage", True)
                else []
            )
            readable = []  # what the generic path does: a number in text is read, the rest left behind and named
            for run_id, metric, index, value, unit, invocation in odd:
                number = source._number(value, metric, invocation)
                if number is not None:
                    readable.append((run_id, metric, index, number, unit))
            db.executemany("INSERT INTO samples (run_id, metric, idx, value, unit) VALUES (?, ?, ?, ?, ?)", readable)
    result.invocations_added += added
    result.invocations_updated += len(finished)
    result.runs_added += runs
    result.runs_present += stored - runs
