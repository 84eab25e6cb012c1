"""The SQLite result store.

Write-ahead logging and a busy timeout let two ``abstat run`` processes
write to one store at once; every write is a short ``BEGIN IMMEDIATE``
transaction, and each run is committed as soon as it completes, so a
SIGKILL loses at most the run in progress.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.store.schema import MIGRATIONS, SCHEMA_VERSION

DEFAULT_STORE = "abstat.db"
STORE_ENV = "ABSTAT_STORE"
BUSY_TIMEOUT_MS = 30_000


def resolve_store_path(given: str | None = None) -> str:
    """The store a command uses: ``--store PATH``, else ``$ABSTAT_STORE``, else ``./abstat.db``."""
    return given or os.environ.get(STORE_ENV) or DEFAULT_STORE


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_experiment_name(name: str) -> str:
    if not name or ":" in name or name.strip() != name or "\n" in name:
        raise UsageError(
            f"bad experiment name {name!r}: it must be non-empty, without ':' or surrounding spaces"
        )
    return name


@dataclass(frozen=True)
class Invocation:
    id: int
    experiment_id: int
    experiment: str


@dataclass
class ExperimentSummary:
    name: str
    created_at: str
    last_run_at: str | None
    invocations: int
    boots: int
    hosts: list[str]
    variants: list[str]
    runs_ok: int
    runs_failed: int


@dataclass
class SampleSet:
    """Samples of one metric of one variant under one set of labels.

    ``runs`` holds one list of values per run group (each ``abstat run``
    invocation, hence each boot, is its own group); ``invocations`` the ids
    of those invocations, in the same order.
    """

    labels: dict[str, str]
    runs: list[list[float]]
    machine: dict[str, Any] = field(default_factory=dict)
    unit: str | None = None
    invocations: list[int] = field(default_factory=list)


class Store:
    """An open result store (use :func:`open_store`)."""

    def __init__(self, path: str, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection

    # -- connection ------------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing ---------------------------------------------------------

    def _experiment_id(self, name: str, create: bool) -> int | None:
        row = self.db.execute("SELECT id FROM experiments WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        if not create:
            return None
        cursor = self.db.execute(
            "INSERT INTO experiments (name, created_at) VALUES (?, ?)", (name, _now())
        )
        return int(cursor.lastrowid)

    def start_invocation(
        self,
        experiment: str,
        machine: Mapping[str, Any],
        *,
        argv: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        variants: Sequence[str] = (),
    ) -> Invocation:
        """Record the start of one ``abstat run`` (creating the experiment)."""
        check_experiment_name(experiment)
        with self._write() as db:
            experiment_id = self._experiment_id(experiment, create=True)
            assert experiment_id is not None
            cursor = db.execute(
                "INSERT INTO invocations (experiment_id, started_at, hostname, boot_id, machine, argv, settings)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    experiment_id, _now(), machine.get("hostname"), machine.get("boot_id"),
                    json.dumps(dict(machine), sort_keys=True), json.dumps(list(argv)),
                    json.dumps(dict(settings or {}), sort_keys=True),
                ),
            )
            invocation_id = int(cursor.lastrowid)
            for key, value in (labels or {}).items():
                db.execute(
                    "INSERT INTO labels (invocation_id, key, value) VALUES (?, ?, ?)",
                    (invocation_id, key, value),
                )
            for name in variants:
                db.execute(
                    "INSERT OR IGNORE INTO variants (experiment_id, name) VALUES (?, ?)", (experiment_id, name)
                )
        return Invocation(invocation_id, experiment_id, experiment)

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
    ) -> int:
        """Commit one completed run and, if it succeeded, its samples."""
        units = units or {}
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO variants (experiment_id, name) VALUES (?, ?)",
                (invocation.experiment_id, variant),
            )
            variant_id = db.execute(
                "SELECT id FROM variants WHERE experiment_id = ? AND name = ?",
                (invocation.experiment_id, variant),
            ).fetchone()[0]
            cursor = db.execute(
                "INSERT INTO runs (invocation_id, variant_id, command, iteration, position, status,"
                " exit_code, started_at, wall, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    invocation.id, variant_id, command, iteration, position, status, exit_code,
                    started_at, wall, json.dumps(list(notes)) if notes else None,
                ),
            )
            run_id = int(cursor.lastrowid)
            if status == "ok":
                db.executemany(
                    "INSERT INTO samples (run_id, metric, idx, value, unit) VALUES (?, ?, ?, ?, ?)",
                    [
                        (run_id, metric, index, float(value), units.get(metric))
                        for metric, numbers in values.items()
                        for index, value in enumerate(numbers)
                    ],
                )
        return run_id

    def finish_invocation(self, invocation: Invocation, status: str, notes: Sequence[str] = ()) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE invocations SET ended_at = ?, status = ?, notes = ? WHERE id = ?",
                (_now(), status, json.dumps(list(notes)) if notes else None, invocation.id),
            )

    # -- reading ---------------------------------------------------------

    def experiment_names(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM experiments ORDER BY id")]

    def has_experiment(self, name: str) -> bool:
        return self._experiment_id(name, create=False) is not None

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
        if variant is not None:
            sql += " AND v.name = ?"
            params.append(variant)
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
        if invocations is not None:
            sql += f" AND r.invocation_id IN ({','.join('?' * len(invocations))})"
            params.extend(invocations)
        sql += " ORDER BY s.metric, v.id, r.invocation_id, r.position, s.idx"
        found: dict[str, dict[str, dict[int, list[float]]]] = {}
        for metric, variant, invocation_id, value in self.db.execute(sql, params):
            found.setdefault(metric, {}).setdefault(variant, {}).setdefault(invocation_id, []).append(float(value))
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
        if variant is not None:
            sql += " AND v.name = ?"
            params.append(variant)
        if invocations is not None:
            sql += f" AND i.id IN ({','.join('?' * len(invocations))})"
            params.extend(invocations)
        sql += " ORDER BY i.id"
        return [json.loads(row[1]) for row in self.db.execute(sql, params)]

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
            "SELECT r.invocation_id, v.name, r.status, COUNT(*), GROUP_CONCAT(DISTINCT r.command) FROM runs r"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? GROUP BY r.invocation_id, v.name, r.status ORDER BY v.id, r.status",
            (experiment,),
        ):
            if invocation_id in run_counts:
                run_counts[invocation_id].append(tuple(count))
        result = []
        for row in rows:
            result.append(
                {
                    "id": row[0], "started_at": row[1], "ended_at": row[2], "status": row[3],
                    "hostname": row[4], "boot_id": row[5], "argv": json.loads(row[6] or "[]"),
                    "settings": json.loads(row[7] or "{}"), "notes": json.loads(row[8] or "[]"),
                    "machine": json.loads(row[9]), "labels": labels[row[0]],
                    "runs": [
                        {"variant": c[0], "status": c[1], "count": c[2], "command": c[3]} for c in run_counts[row[0]]
                    ],
                }
            )
        return result

    def failed_runs(self, experiment: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT r.invocation_id, v.name, r.iteration, r.status, r.exit_code, r.notes FROM runs r"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? AND r.status != 'ok' ORDER BY r.id",
            (experiment,),
        ).fetchall()
        return [
            {"invocation": r[0], "variant": r[1], "run": r[2] + 1, "status": r[3], "exit_code": r[4],
             "notes": json.loads(r[5] or "[]")}
            for r in rows
        ]

    def run_notes(self, experiment: str, invocations: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """Distinct notes of the experiment's successful runs (``{"note", "runs"}``, first seen first)."""
        rows = self.db.execute(
            "SELECT r.invocation_id, r.notes FROM runs r JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND r.status = 'ok'"
            " AND r.notes IS NOT NULL ORDER BY r.id", (experiment,)).fetchall()
        counts: dict[str, int] = {}
        for invocation_id, notes in rows:
            if invocations is None or invocation_id in invocations:
                for note in json.loads(notes or "[]"):
                    counts[note] = counts.get(note, 0) + 1
        return [{"note": note, "runs": count} for note, count in counts.items()]

    def sample_rows(self, experiment: str | None = None) -> Iterator[dict[str, Any]]:
        """One row per stored sample (export): experiment, variant, metric, value, run..."""
        sql = (
            "SELECT e.name, v.name, s.metric, s.value, s.unit, r.id, r.iteration, s.idx, i.id, i.boot_id,"
            " i.hostname, r.started_at, r.command, i.machine, r.notes FROM samples s JOIN runs r ON r.id = s.run_id"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " JOIN invocations i ON i.id = r.invocation_id WHERE r.status = 'ok'"
        )
        params: list[Any] = []
        if experiment is not None:
            sql += " AND e.name = ?"
            params.append(experiment)
        sql += " ORDER BY e.id, i.id, r.position, s.metric, s.idx"
        machines: dict[int, dict[str, Any]] = {}
        label_cache: dict[int, dict[str, str]] = {}
        for row in self.db.execute(sql, params):
            invocation_id = row[8]
            if invocation_id not in machines:
                machines[invocation_id] = json.loads(row[13])
                label_cache[invocation_id] = dict(
                    self.db.execute(
                        "SELECT key, value FROM labels WHERE invocation_id = ? ORDER BY key", (invocation_id,)
                    ).fetchall()
                )
            yield {
                "experiment": row[0], "variant": row[1], "metric": row[2], "value": row[3],
                "unit": row[4], "run": row[5], "iteration": row[6] + 1, "index": row[7],
                "invocation": invocation_id, "boot_id": row[9], "host": row[10],
                "started_at": row[11], "command": row[12], "labels": label_cache[invocation_id],
                "notes": json.loads(row[14] or "[]"), "machine": machines[invocation_id],
            }

    def sample_sets(self, where: Mapping[str, Any] | None = None) -> Iterator[SampleSet]:
        """Group samples by (experiment, variant, metric, host, labels); runs by invocation."""
        sql = (
            "SELECT e.name, v.name, s.metric, i.hostname, i.id, s.value, s.unit FROM samples s"
            " JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id JOIN invocations i ON i.id = r.invocation_id"
            " WHERE r.status = 'ok'"
        )
        accepted = {key: _accepted(wanted) for key, wanted in (where or {}).items()}
        params: list[str] = []
        for key, column in (("experiment", "e.name"), ("variant", "v.name"), ("metric", "s.metric")):
            if key in accepted:  # these labels are columns: let SQLite skip the other rows
                sql += f" AND {column} IN ({','.join('?' * len(accepted[key]))})"
                params.extend(sorted(accepted[key]))
        rows = self.db.execute(sql + " ORDER BY e.id, v.id, s.metric, i.id, r.position, s.idx", params)
        label_cache: dict[int, dict[str, str]] = {}
        sets: dict[tuple, dict[str, Any]] = {}
        for experiment, variant, metric, host, invocation_id, value, unit in rows:
            if invocation_id not in label_cache:
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
            entry["groups"][invocation_id].append(float(value))
        machines: dict[int, str] = {}  # invocation id -> machine record (JSON)
        for entry in sets.values():
            last = entry["invocations"][-1]
            if last not in machines:
                machine_row = self.db.execute("SELECT machine FROM invocations WHERE id = ?", (last,)).fetchone()
                machines[last] = machine_row[0] if machine_row else "{}"
            yield SampleSet(
                labels=entry["labels"],
                runs=[entry["groups"][i] for i in entry["invocations"]],
                machine=json.loads(machines[last]),
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


def _connect(path: str, create: bool) -> sqlite3.Connection:
    if create:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise InputError("the store's directory does not exist", path=path)
        uri = f"file:{_quote(path)}?mode=rwc"
    else:
        if not os.path.exists(path):
            raise InputError("no such store (run `abstat run` first, or give --store PATH)", path=path)
        if os.path.isfile(path) and os.path.getsize(path) == 0:  # a store has its header page even in WAL mode
            raise InputError("empty file, not a store (run `abstat run` first, or give --store PATH)", path=path)
        uri = f"file:{_quote(path)}?mode=rw"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return connection


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def open_store(path: str = DEFAULT_STORE, *, create: bool = True) -> Store:
    """Open (and create or migrate) the store at ``path``.

    Raises InputError naming the path when it is not a store, is from a
    newer abstat, or (with ``create=False``) does not exist.
    """
    try:
        connection = _connect(path, create)
    except sqlite3.Error as err:
        raise InputError(f"cannot open the store: {err}", path=path) from None
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    attempt = 0
    while True:
        try:
            _prepare(connection, path)
            return Store(path, connection)
        except sqlite3.OperationalError as err:
            # Two processes opening a new store at once: switching it to WAL
            # can answer "locked" at once, without waiting for busy_timeout.
            # Retry until the busy timeout is used up.
            attempt += 1
            if _is_busy(err) and time.monotonic() < deadline:
                time.sleep(min(0.01 * attempt, 0.2))
                continue
            connection.close()
            raise InputError(f"not an abstat store ({err})", path=path) from None
        except sqlite3.DatabaseError as err:
            connection.close()
            raise InputError(f"not an abstat store ({err})", path=path) from None
        except InputError:
            connection.close()
            raise


def _prepare(connection: sqlite3.Connection, path: str) -> None:
    """Check, switch to WAL and migrate a freshly opened store."""
    _check_foreign(connection, path)  # before anything is written to the file
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("PRAGMA foreign_keys = ON")
    _migrate(connection, path)


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _check_foreign(connection: sqlite3.Connection, path: str) -> None:
    """InputError for an SQLite file that is not (or not yet readable as) a
    store, found by reading only: someone else's database stays untouched.

    Both reads happen in one read transaction: another process may be
    creating the schema at this moment (tables and version come together).
    """
    connection.execute("BEGIN")
    try:
        version, has_tables = _schema_state(connection)
    finally:
        connection.execute("COMMIT")
    _check_version(version, has_tables, path)


def _schema_state(connection: sqlite3.Connection) -> tuple[int, bool]:
    """(schema version, whether the file has any table)."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    has_tables = connection.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
    return int(version), bool(has_tables)


def _check_version(version: int, has_tables: bool, path: str) -> None:
    if version > SCHEMA_VERSION:
        raise InputError(
            f"store has schema version {version}, newer than this abstat understands ({SCHEMA_VERSION})", path=path
        )
    if version == 0 and has_tables:
        raise InputError("not an abstat store (it has tables but no abstat schema version)", path=path)


def _migrate(connection: sqlite3.Connection, path: str) -> None:
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        version, has_tables = _schema_state(connection)  # another writer may have migrated
        _check_version(version, has_tables, path)
        for step in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[step]):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {step + 1}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (none of ours contain ';' in literals)."""
    cleaned = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return [part.strip() for part in cleaned.split(";") if part.strip()]


# A store that opens fine can still fail later: a damaged page met by a query
# ("database disk image is malformed"), a full disk, a lock held too long.
# Every public Store method turns such an sqlite3 error into an InputError
# naming the store, so no command shows it as an internal error; runs already
# committed stay in the file.

def _store_error(path: str, err: sqlite3.DatabaseError) -> InputError:
    if isinstance(err, sqlite3.OperationalError) and "malformed" not in str(err):
        return InputError(f"store error: {err}", path=path)
    return InputError(f"damaged store ({err}); `sqlite3 {path} .recover` may save its contents", path=path)


def _guarded(method: Any) -> Any:
    import functools
    import inspect

    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generator(self: Store, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, *args, **kwargs)
            except sqlite3.DatabaseError as err:
                raise _store_error(self.path, err) from None

        return generator

    @functools.wraps(method)
    def call(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as err:
            raise _store_error(self.path, err) from None

    return call


for _name, _member in list(vars(Store).items()):
    if not _name.startswith("_") and callable(_member):
        setattr(Store, _name, _guarded(_member))
del _name, _member
