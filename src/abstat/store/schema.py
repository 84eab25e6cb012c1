"""The one logical schema of the result store and its migrations.

Both back ends run the same migrations (``backend.Connection.ddl`` adapts
the types); the version is recorded in the store (``PRAGMA user_version``
on SQLite, table ``abstat_schema`` on PostgreSQL).  ``MIGRATIONS[i]`` takes
a store from version ``i`` to ``i + 1``: a new schema change is a new entry
at the end, never an edit of an old one.  A step is a DDL script or a tuple
of scripts and Python functions (for backfills).  A store from a newer
abstat is refused and left untouched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Union

from abstat.errors import InputError

UID_NAMESPACE = "6b3f0c4e-7a51-4d0e-9a57-0b7a3b5c2d11"  # of uuid5 (the uuid module is imported when needed)


def new_uid() -> str:
    """A random identity: ``str(uuid.uuid4())``, without importing uuid (and platform) at every start-up."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _uuid5(text: str) -> str:
    import uuid

    return str(uuid.uuid5(uuid.UUID(UID_NAMESPACE), text))


def invocation_uid(experiment: str, row: tuple[Any, ...]) -> str:
    """The identity of an invocation stored before identities existed: derived
    from what it recorded (and its id in that file), so every copy of an old
    store backfills the same uid and importing any two of them adds nothing twice."""
    return _uuid5(json.dumps([experiment, *row], default=str))


def run_uid(invocation: str, row: tuple[Any, ...]) -> str:
    return _uuid5(json.dumps([invocation, *row], default=str))


# The columns an old invocation / run identity is derived from (in this order).
INVOCATION_IDENTITY = "i.id, i.started_at, i.hostname, i.boot_id, i.machine, i.argv, i.settings"
RUN_IDENTITY = "r.id, v.name, r.iteration, r.position, r.started_at"


def _backfill_uids(db: Any) -> None:
    invocation_uids: dict[int, str] = {}
    for experiment, *row in db.execute(
        f"SELECT e.name, {INVOCATION_IDENTITY} FROM invocations i JOIN experiments e ON e.id = i.experiment_id"
        " ORDER BY i.id"
    ).fetchall():
        invocation_uids[row[0]] = invocation_uid(experiment, tuple(row))
    db.executemany("UPDATE invocations SET uid = ? WHERE id = ?", [(uid, key) for key, uid in invocation_uids.items()])
    runs = db.execute(
        f"SELECT r.invocation_id, {RUN_IDENTITY} FROM runs r JOIN variants v ON v.id = r.variant_id ORDER BY r.id"
    ).fetchall()
    db.executemany(
        "UPDATE runs SET uid = ? WHERE id = ?",
        [(run_uid(invocation_uids[row[0]], tuple(row[1:])), row[1]) for row in runs],
    )


def _create_views(db: Any) -> None:
    """Views a dashboard (Grafana, Metabase) queries directly, on either back end (docs/store.md):
    runs with their labels, their samples, and per-revision medians.  Only the time conversion and the
    label list differ between SQLite and PostgreSQL."""
    postgres = db.kind == "postgresql"
    time = "to_timestamp(r.started_at)" if postgres else "datetime(r.started_at, 'unixepoch')"
    labels = (
        (
            "(SELECT string_agg(l.key || '=' || l.value, ',' ORDER BY l.key) FROM labels l"
            " WHERE l.invocation_id = r.invocation_id)"
        )
        if postgres
        else (
            "(SELECT group_concat(kv, ',') FROM (SELECT l.key || '=' || l.value AS kv FROM labels l"
            " WHERE l.invocation_id = r.invocation_id ORDER BY l.key))"
        )
    )
    db.execute(f"""
        CREATE VIEW abstat_runs AS
        SELECT e.name AS experiment, v.name AS variant, r.invocation_id, r.id AS run_id, r.iteration,
               r.position, r.status, r.exit_code, r.started_at, {time} AS time, r.wall, r.command,
               i.hostname, COALESCE(host.value, i.hostname) AS host, rev.value AS rev,
               commit_time.value AS commit_time, {labels} AS labels
        FROM runs r
        JOIN variants v ON v.id = r.variant_id
        JOIN experiments e ON e.id = v.experiment_id
        JOIN invocations i ON i.id = r.invocation_id
        LEFT JOIN labels host ON host.invocation_id = r.invocation_id AND host.key = 'host'
        LEFT JOIN labels rev ON rev.invocation_id = r.invocation_id AND rev.key = 'rev'
        LEFT JOIN labels commit_time ON commit_time.invocation_id = r.invocation_id AND commit_time.key = 'commit_time'
    """)
    db.execute("""
        CREATE VIEW abstat_samples AS
        SELECT r.experiment, r.variant, r.invocation_id, r.run_id, r.status, r.started_at, r.time, r.host,
               r.rev, r.commit_time, r.labels, s.metric, s.idx, s.value, s.unit
        FROM abstat_runs r JOIN samples s ON s.run_id = r.run_id
    """)
    # the median of a revision's samples (of runs that succeeded), per experiment, variant, metric and
    # host: the middle value, or the mean of the two middle ones
    db.execute("""
        CREATE VIEW abstat_revision_medians AS
        SELECT experiment, variant, metric, host, rev, MAX(commit_time) AS commit_time,
               MIN(first_run) AS first_run, MAX(unit) AS unit, MAX(n) AS n, AVG(value) AS median
        FROM (SELECT experiment, variant, metric, host, rev, commit_time, unit, value,
                     MIN(started_at) OVER (PARTITION BY experiment, variant, metric, host, rev) AS first_run,
                     ROW_NUMBER() OVER (PARTITION BY experiment, variant, metric, host, rev ORDER BY value) AS k,
                     COUNT(*) OVER (PARTITION BY experiment, variant, metric, host, rev) AS n
              FROM abstat_samples WHERE rev IS NOT NULL AND status = 'ok') ranked
        WHERE k = (n + 1) / 2 OR k = (n + 2) / 2
        GROUP BY experiment, variant, metric, host, rev
    """)


Step = Union[str, Callable[[Any], None]]

MIGRATIONS: tuple[Union[str, tuple[Step, ...]], ...] = (
    # 0 -> 1: experiments, invocations (one per `abstat run`), runs, samples.
    """
    CREATE TABLE experiments (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE invocations (
        id            INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        started_at    TEXT NOT NULL,
        ended_at      TEXT,
        status        TEXT NOT NULL DEFAULT 'running',
        hostname      TEXT,
        boot_id       TEXT,
        machine       TEXT NOT NULL,      -- JSON machine record
        argv          TEXT,               -- JSON list
        settings      TEXT,               -- JSON object (order, seed, runs...)
        notes         TEXT                -- JSON list of strings
    );
    CREATE TABLE labels (
        invocation_id INTEGER NOT NULL REFERENCES invocations(id),
        key           TEXT NOT NULL,
        value         TEXT NOT NULL,
        PRIMARY KEY (invocation_id, key)
    );
    CREATE TABLE variants (
        id            INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        name          TEXT NOT NULL,
        UNIQUE (experiment_id, name)
    );
    CREATE TABLE runs (
        id            INTEGER PRIMARY KEY,
        invocation_id INTEGER NOT NULL REFERENCES invocations(id),
        variant_id    INTEGER NOT NULL REFERENCES variants(id),
        command       TEXT NOT NULL,
        iteration     INTEGER NOT NULL,
        position      INTEGER NOT NULL,
        status        TEXT NOT NULL,      -- ok | failed | timeout
        exit_code     INTEGER,
        started_at    REAL NOT NULL,
        wall          REAL,
        notes         TEXT                -- JSON list of strings
    );
    CREATE INDEX runs_by_variant ON runs (variant_id, status);
    CREATE INDEX runs_by_invocation ON runs (invocation_id);
    CREATE TABLE samples (
        run_id  INTEGER NOT NULL REFERENCES runs(id),
        metric  TEXT NOT NULL,
        idx     INTEGER NOT NULL,
        value   REAL NOT NULL,
        unit    TEXT,
        PRIMARY KEY (run_id, metric, idx)
    ) WITHOUT ROWID;
    """,
    # 1 -> 2: stable identities, so that `abstat import` merges stores idempotently.
    (
        """
        ALTER TABLE invocations ADD COLUMN uid TEXT;
        ALTER TABLE runs ADD COLUMN uid TEXT;
        """,
        _backfill_uids,
        """
        CREATE UNIQUE INDEX invocations_by_uid ON invocations (uid);
        CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
        CREATE INDEX invocations_by_experiment ON invocations (experiment_id);
        """,
    ),
    # 2 -> 3: views for dashboards (abstat_runs, abstat_samples, abstat_revision_medians; docs/store.md).
    (_create_views,),
)

SCHEMA_VERSION = len(MIGRATIONS)


OWN_TABLES = frozenset({"experiments", "invocations", "labels", "variants", "runs", "samples"})


def check_objects(objects: list[tuple[Any, ...]], display: str) -> None:
    """Refuse a store whose schema objects (SQLite's ``(type, name, sql)`` rows) abstat reads or writes through
    are not the plain tables abstat made: a view named ``samples`` (over an endless recursive CTE, it hung
    ``show``), a virtual table, or any trigger (abstat makes none; it would run inside abstat's writes)."""
    from abstat.terminal_text import terminal

    for kind, name, sql in objects:
        shown = terminal(str(name)[:80])
        if kind == "trigger":
            raise InputError(f"not an abstat store: {shown} is a trigger (abstat makes none)", path=display)
        if name in OWN_TABLES and (kind != "table" or str(sql or "").lstrip()[:12].upper() != "CREATE TABLE"):
            what = f"is a {terminal(str(kind)[:20])}" if kind != "table" else "is not a table abstat made"
            raise InputError(f"not an abstat store: {shown} {what}", path=display)


def check_version(version: Any, has_tables: bool, display: str) -> int:
    """The store's schema version as a number; InputError when this abstat must not use it
    (newer, damaged, or someone else's tables)."""
    if isinstance(version, bool) or not isinstance(version, int):
        try:
            version = int(str(version).strip())
        except ValueError:
            raise InputError(
                f"damaged store: its schema version {str(version)[:40]!r} is not a number; it is left untouched",
                path=display,
            ) from None
    if version < 0:
        raise InputError(f"damaged store: its schema version {version} is negative; it is left untouched", path=display)
    if version > SCHEMA_VERSION:
        raise InputError(
            f"store has schema version {version}, newer than this abstat understands ({SCHEMA_VERSION});"
            " it is left untouched: use a newer abstat",
            path=display,
        )
    if version == 0 and has_tables:
        raise InputError("not an abstat store (it has tables but no abstat schema version)", path=display)
    return version


def migrate(db: Any) -> int:
    """Bring the store up to SCHEMA_VERSION; returns the version it has now.

    Reads first: a current store is not written to, a newer or foreign one
    is refused before anything is written.  A read-only SQLite store is
    left at its version (readers cope with every older one).  A role that may
    not create the tables (an empty database) or upgrade them gets one line
    saying so, not the server's refusal of a CREATE TABLE."""
    with db.snapshot():
        version, has_tables = db.schema_state()
    version = check_version(version, has_tables, db.display)
    if version == SCHEMA_VERSION or db.read_only:
        return version
    try:
        with db.transaction():
            db.lock_schema()
            version, has_tables = db.schema_state()  # another writer may have migrated meanwhile
            version = check_version(version, has_tables, db.display)
            for step in range(version, SCHEMA_VERSION):
                parts = MIGRATIONS[step]
                for part in parts if isinstance(parts, tuple) else (parts,):
                    if callable(part):
                        part(db)
                    else:
                        for statement in db.ddl(part):
                            db.execute(statement)
                db.set_version(step + 1)
    except db.errors as err:
        if not db.is_permission(err):
            raise
        if version == 0 and not has_tables:
            raise InputError(
                "the store is empty, and read-only for this role: it may not create abstat's tables"
                " (run `abstat run` or `abstat import` as a role that may, once)",
                path=db.display,
            ) from None
        raise InputError(
            f"the store has schema version {version}, older than this abstat's {SCHEMA_VERSION},"
            " and is read-only for this role: it may not upgrade it (open it once as a role that may)",
            path=db.display,
        ) from None
    return SCHEMA_VERSION
