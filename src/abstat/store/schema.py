"""Schema of the result store, versioned with ``PRAGMA user_version``.

``MIGRATIONS[i]`` takes a store from version ``i`` to ``i + 1``; a new
schema change is a new entry at the end, never an edit of an old one.
"""
from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
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
)

SCHEMA_VERSION = len(MIGRATIONS)
