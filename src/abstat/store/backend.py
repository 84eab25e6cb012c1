"""Connections to the two store back ends and the thin dialect between them.

Every statement is written once, in the SQL both SQLite and PostgreSQL
accept, with ``?`` placeholders.  :class:`Connection` turns it into the
back end's own form (``%s`` placeholders for psycopg; ``BIGINT`` identity
keys and ``DOUBLE PRECISION`` in DDL) and opens transactions the way each
back end needs: ``BEGIN IMMEDIATE`` on SQLite (the writer lock up front, so
two writers never deadlock on an upgrade), ``BEGIN`` on PostgreSQL.

A store is named by a path (SQLite) or a ``postgresql://`` URL.  The URL's
password, if any, never appears in a message: :func:`display_name` masks it.
"""
from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from abstat.errors import InputError

BUSY_TIMEOUT_MS = 30_000
URL_SCHEMES = ("postgresql://", "postgres://")
INSTALL_HINT = "the PostgreSQL store needs psycopg 3: pip install 'abstat[postgres]'"


def is_url(name: str) -> bool:
    return name.startswith(URL_SCHEMES)


_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^\s/@:]*:)[^\s@/]*@")
_PARAM_PASSWORD = re.compile(r"(?i)((?:^|[?&\s])password=)[^&\s]*")


def display_name(text: str) -> str:
    """``text`` (a store name, an argument list item) fit to print or record: the
    password of a PostgreSQL URL in it, in the netloc or as a ``password=``
    parameter, is replaced by ``***``."""
    if "postgres" not in text:
        return text
    return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


def _secret(name: str) -> str | None:
    found = _URL_PASSWORD.search(name)
    if found:
        return name[found.end(1):found.end() - 1]
    found = _PARAM_PASSWORD.search(name) if is_url(name) else None
    return name[found.end(1):found.end()] if found else None


def scrub(text: str, name: str) -> str:
    """``text`` (a driver's error message) without the password of ``name``, on one line."""
    secret = _secret(name)
    if secret:
        from urllib.parse import unquote

        for form in {secret, unquote(secret)}:
            text = text.replace(form, "***")
    return " ".join(text.split())


class Connection:
    """One open connection, SQLite or PostgreSQL, behind one small interface."""

    kind = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, name: str, raw: Any) -> None:
        self.name = name  # path or URL (with its password: never print it)
        self.display = display_name(name)
        self.raw = raw
        self.read_only = False
        self.immutable = False  # SQLite: opened as an immutable file (read-only, no -shm)
        self._sql: dict[str, str] = {}

    # -- statements --------------------------------------------------------

    def sql(self, text: str) -> str:
        return text

    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(self.sql(text), tuple(params))

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.raw.executemany(self.sql(text), rows)

    def reserve_ids(self, table: str, count: int) -> list[int]:
        """``count`` new ids for rows of ``table`` (inside a write transaction; SQLite's
        BEGIN IMMEDIATE holds the store for this writer alone)."""
        start = int(self.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0])
        return list(range(start + 1, start + 1 + count))

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                    types: Sequence[str] = ()) -> None:
        """Bulk insert (``abstat import``): one statement for many rows (PostgreSQL: COPY;
        ``types``, PostgreSQL's names of the columns' types, for its binary form)."""
        self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                         rows)

    def insert(self, text: str, params: Sequence[Any]) -> int:
        """Run an INSERT and return the new row's ``id``."""
        return int(self.execute(text + " RETURNING id", params).fetchone()[0])

    def concat_distinct(self, expression: str) -> str:
        return f"GROUP_CONCAT(DISTINCT {expression})"

    def within(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``, as a condition and its parameters: one
        parameter however many the values (SQLite limits a statement's parameters)."""
        import json

        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def ddl(self, script: str) -> list[str]:
        """A migration script as this back end's statements (ours hold no ';' in literals)."""
        cleaned = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
        return [part.strip() for part in cleaned.split(";") if part.strip()]

    # -- transactions ------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction.  SIGINT, SIGTERM and SIGHUP wait until it has
        committed or rolled back: a Ctrl-C arriving right after BEGIN can no
        longer leave it open (the next BEGIN then failed with "cannot start a
        transaction within a transaction")."""
        with _signals_deferred(self.defer_signals):
            if self.in_transaction():  # left open by an interruption elsewhere
                self.raw.execute("ROLLBACK")
            try:
                self.raw.execute(self._begin)
                yield self
                self.raw.execute("COMMIT")
            except BaseException:
                if self.in_transaction():
                    try:
                        self.raw.execute("ROLLBACK")
                    except self.errors:
                        pass
                raise

    _begin = "BEGIN IMMEDIATE"
    defer_signals = True  # SQLite transactions are short and local

    def in_transaction(self) -> bool:
        return bool(self.raw.in_transaction)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that must agree with each other (SQLite: one read transaction;
        another process may be creating the schema: tables and version come together)."""
        self.raw.execute("BEGIN")
        try:
            yield
        finally:
            if self.raw.in_transaction:
                self.raw.execute("COMMIT")

    # -- schema version ----------------------------------------------------

    def schema_state(self) -> tuple[int, bool]:
        """(recorded schema version, whether the database holds any table)."""
        version = self.raw.execute("PRAGMA user_version").fetchone()[0]
        tables = self.raw.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        return int(version), bool(tables)

    def set_version(self, version: int) -> None:
        self.raw.execute(f"PRAGMA user_version = {int(version)}")

    def lock_schema(self) -> None:
        """Inside a transaction: keep other processes from migrating at the same time
        (SQLite's BEGIN IMMEDIATE already holds the write lock)."""

    def lock_import(self) -> None:
        """Inside a transaction: one import at a time decides what the store lacks and adds it
        (SQLite's BEGIN IMMEDIATE already holds the write lock)."""

    # -- errors ------------------------------------------------------------

    def is_busy(self, err: BaseException) -> bool:
        text = str(err).lower()
        return isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text)

    def is_disconnect(self, err: BaseException) -> bool:
        return False

    def is_damage(self, err: BaseException) -> bool:
        """A damaged file (as opposed to a lock, a full disk...): reading around it may save the rest."""
        return isinstance(err, sqlite3.DatabaseError) and (
            not isinstance(err, sqlite3.OperationalError) or "malformed" in str(err))

    def error(self, err: BaseException) -> InputError:
        text = scrub(str(err), self.name)
        if isinstance(err, sqlite3.OperationalError) and "malformed" not in text:
            return InputError(f"store error: {text}", path=self.display)
        return InputError(f"damaged store ({text}); `sqlite3 {self.display} .recover` may save its contents",
                          path=self.display)

    def close(self) -> None:
        self.raw.close()

    def analyze(self) -> None:
        """Refresh the planner's statistics after a bulk load (PostgreSQL plans
        joins from them; SQLite's plans need none)."""

    def damage_check(self) -> list[str]:
        """Damage the database itself reports (pages, indexes), read only."""
        try:
            rows = [row[0] for row in self.raw.execute("PRAGMA quick_check(20)")]
        except sqlite3.DatabaseError as err:
            return [f"integrity check failed: {err}"]
        if rows == ["ok"]:
            return []
        problems = [line for row in rows for line in str(row).splitlines() if not line.startswith("***")]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return [f"integrity check: {problems[0] if problems else rows[0]}{more}"]


class PostgresConnection(Connection):
    kind = "postgresql"
    _begin = "BEGIN"
    defer_signals = False  # a hung server must not make Ctrl-C wait; psycopg cancels the query

    def __init__(self, name: str, raw: Any, psycopg: Any) -> None:
        super().__init__(name, raw)
        self.psycopg = psycopg
        self.errors = (psycopg.Error,)

    def sql(self, text: str) -> str:
        converted = self._sql.get(text)
        if converted is None:
            converted = self._sql[text] = text.replace("%", "%%").replace("?", "%s")
        return converted


    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        # Binary results: numbers arrive without text parsing (~15% faster reads).
        return self.raw.cursor(binary=True).execute(self.sql(text), tuple(params))

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.raw.cursor() as cursor:
                cursor.executemany(self.sql(text), rows)

    def concat_distinct(self, expression: str) -> str:
        return f"STRING_AGG(DISTINCT {expression}, ',')"

    def within(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    def ddl(self, script: str) -> list[str]:
        statements = []
        for statement in super().ddl(script):
            statement = statement.replace("INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
            statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
            statement = re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)
            statement = re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', statement)  # byte order, as SQLite sorts
            statements.append(statement.replace("WITHOUT ROWID", ""))
        return statements

    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != self.psycopg.pq.TransactionStatus.IDLE

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        yield  # the schema is created in one transaction: no reader sees half of it

    def schema_state(self) -> tuple[int, bool]:
        tables = self.raw.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        names = {row[0] for row in tables}
        if "abstat_schema" not in names:
            return 0, bool(names)
        row = self.raw.execute("SELECT version FROM abstat_schema").fetchone()
        return (int(row[0]) if row else 0), True

    def set_version(self, version: int) -> None:
        self.raw.execute("CREATE TABLE IF NOT EXISTS abstat_schema (version INTEGER NOT NULL)")
        self.raw.execute("DELETE FROM abstat_schema")
        self.raw.execute("INSERT INTO abstat_schema (version) VALUES (%s)", (int(version),))

    def lock_schema(self) -> None:
        self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (0x61627374,))  # 'abst'

    def lock_import(self) -> None:
        self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (0x61627369,))  # 'absi'
        # The rows an import adds reference rows that exist or that it adds in the same
        # transaction, so their foreign-key checks (one query per row: half the import's
        # time) may be skipped, as pg_restore --disable-triggers does, when the role may
        # (a superuser, or GRANT SET ON PARAMETER session_replication_role); else they run.
        self.raw.execute("SAVEPOINT abstat_import")
        try:
            self.raw.execute("SET LOCAL session_replication_role = replica")
        except self.psycopg.errors.InsufficientPrivilege:
            self.raw.execute("ROLLBACK TO SAVEPOINT abstat_import")
        else:
            self.raw.execute("RELEASE SAVEPOINT abstat_import")

    def reserve_ids(self, table: str, count: int) -> list[int]:
        # from the identity's sequence, as concurrent writers draw theirs
        found = self.raw.execute("SELECT array_agg(nextval(pg_get_serial_sequence(%s, 'id')))"
                                 " FROM generate_series(1, %s)", (table, count)).fetchone()[0]
        return [int(key) for key in found or ()]

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                    types: Sequence[str] = ()) -> None:
        """COPY in binary when the column ``types`` are given (psycopg writes such rows in C,
        4x faster than as text); in text when a value does not fit its type (a damaged source)."""
        if not rows:
            return
        target = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        if types:
            self.raw.execute("SAVEPOINT abstat_copy")
            try:
                with self.raw.cursor() as cursor, cursor.copy(target + " (FORMAT BINARY)") as copy:
                    copy.set_types(list(types))
                    for row in rows:
                        copy.write_row(row)
            except (TypeError, ValueError, OverflowError, self.psycopg.DataError):
                self.raw.execute("ROLLBACK TO SAVEPOINT abstat_copy")
            else:
                self.raw.execute("RELEASE SAVEPOINT abstat_copy")
                return
        with self.raw.cursor() as cursor, cursor.copy(target) as copy:
            for start in range(0, len(rows), 50_000):
                copy.write(_copy_text(rows[start:start + 50_000]))

    def is_busy(self, err: BaseException) -> bool:
        return False

    def is_damage(self, err: BaseException) -> bool:
        return False

    def is_disconnect(self, err: BaseException) -> bool:
        return isinstance(err, self.psycopg.OperationalError) and (
            self.raw.closed or self.raw.broken or isinstance(err, self.psycopg.errors.AdminShutdown)
        )

    def error(self, err: BaseException) -> InputError:
        text = scrub(str(err), self.name) or type(err).__name__
        if self.is_disconnect(err):
            return InputError(f"the store server went away ({text})", path=self.display)
        return InputError(f"store error: {text}", path=self.display)

    def close(self) -> None:
        try:
            self.raw.close()
        except self.psycopg.Error:
            pass

    def damage_check(self) -> list[str]:
        return []

    def analyze(self) -> None:
        self.raw.execute("ANALYZE")


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field(value: Any) -> str:
    """A field of COPY's text format."""
    if value is None:
        return "\\N"
    if value.__class__ is float or value.__class__ is int:
        return repr(value)  # repr round-trips a double; float8in reads it back exactly
    return str(value).translate(_COPY_ESCAPES)


def _copy_text(rows: Sequence[Sequence[Any]]) -> str:
    """Rows in COPY's text format, column by column: numbers through ``repr``, other
    values (text, None) through one conversion per distinct value."""
    columns = []
    for column in zip(*rows):
        if set(map(type, column)) <= {int, float}:
            columns.append(map(repr, column))
        else:
            fields = {value: _copy_field(value) for value in set(column)}
            columns.append(map(fields.__getitem__, column))
    return "\n".join(map("\t".join, zip(*columns))) + "\n"


# -- opening -----------------------------------------------------------------

def connect(name: str, *, create: bool, read_only: bool = False) -> Connection:
    """Open the store ``name`` (path or URL).  InputError names it (masked) when it cannot be opened.
    ``read_only``: never write to it (not even a migration)."""
    if is_url(name):
        connection = _connect_postgres(name)
        connection.read_only = read_only
        return connection
    return _connect_sqlite(name, create and not read_only, read_only)


def _connect_postgres(url: str) -> Connection:
    try:
        import psycopg
    except ImportError:
        raise InputError(INSTALL_HINT, path=display_name(url)) from None
    try:
        # Credentials come from the URL, PGPASSFILE / ~/.pgpass or the PG* environment, as for psql.
        # A default bound on the wait, unless the user chose one (URL or PGCONNECT_TIMEOUT).
        bound = {} if "connect_timeout" in url or os.environ.get("PGCONNECT_TIMEOUT") else {"connect_timeout": 10}
        raw = psycopg.connect(url, autocommit=True, **bound)
    except psycopg.Error as err:
        raise InputError(f"cannot connect to the store: {scrub(str(err), url)}", path=display_name(url)) from None
    except Exception as err:  # a malformed URL: psycopg raises ProgrammingError or ValueError
        raise InputError(f"bad store URL: {scrub(str(err), url)}", path=display_name(url)) from None
    return PostgresConnection(url, raw, psycopg)


def _connect_sqlite(path: str, create: bool, read_only: bool = False) -> Connection:
    exists = os.path.exists(path)
    if exists and not os.path.isfile(path):
        # Refused before SQLite opens it: `--store /dev/null` must not leave /dev/null-journal.
        raise InputError("not a regular file, so not a store", path=path)
    if not exists:
        if not create:
            raise InputError("no such store (run `abstat run` first, or give --store PATH)", path=path)
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise InputError("the store's directory does not exist", path=path)
        if not os.access(directory, os.W_OK):
            raise InputError("cannot create the store: its directory is read-only (a read-only file system, "
                             "or no write permission)", path=path)
        mode = "rwc"
    else:
        if os.path.getsize(path) == 0 and not create:  # a store has its header page even in WAL mode
            raise InputError("empty file, not a store (run `abstat run` first, or give --store PATH)", path=path)
        directory = os.path.dirname(os.path.abspath(path))
        read_only = read_only or (not create and not (os.access(path, os.W_OK) and os.access(directory, os.W_OK)))
        mode = "ro" if read_only else "rw"
    uri = f"file:{quote(os.path.abspath(path))}?mode={mode}"
    immutable = False
    try:
        raw = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                              check_same_thread=False)
        raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if read_only:
            try:
                raw.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                # A WAL store in a read-only directory without its -shm file:
                # SQLite can read it only as an immutable file.
                raw.close()
                raw = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None,
                                      check_same_thread=False)
                immutable = True
    except sqlite3.Error as err:
        raise InputError(f"cannot open the store: {err}", path=path) from None
    connection = Connection(path, raw)
    connection.read_only = read_only
    connection.immutable = immutable
    return connection


@contextmanager
def _signals_deferred(wanted: bool = True) -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends (the runner's one
    mechanism, which also holds those that land on another thread); a held
    signal is delivered, and its handler runs, right after."""
    if not wanted:
        yield
        return
    from abstat.runner import signals

    with signals.deferred():
        yield
