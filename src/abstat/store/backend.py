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

from abstat.errors import InputError

BUSY_TIMEOUT_MS = 30_000
URL_SCHEMES = ("postgresql://", "postgres://")
INSTALL_HINT = "the PostgreSQL store needs psycopg 3: pip install 'abstat[postgres]'"


def is_url(name: str) -> bool:
    return name.startswith(URL_SCHEMES)


_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^\s/@:]*:)[^\s@/]*@")
# a URL's ``?password=`` parameter, or a keyword/value connection string's ``password = 'it''s'``
_PARAM_PASSWORD = re.compile(r"(?i)((?:^|[?&\s])password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)")


def display_name(text: str) -> str:
    """``text`` (a store name, an argument list item) fit to print or record: the
    password of a PostgreSQL URL in it, in the netloc or as a ``password=``
    parameter (of a URL, or of a ``host=... password=...`` connection string),
    is replaced by ``***``."""
    if "postgres" not in text and "password" not in text.lower():
        return text
    return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


def _secret(name: str) -> str | None:
    found = _URL_PASSWORD.search(name)
    if found:
        return name[found.end(1) : found.end() - 1]
    found = _PARAM_PASSWORD.search(name)
    return found.group(2).strip("'") or None if found else None


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

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], types: Sequence[str] = ()
    ) -> None:
        """Bulk insert (``abstat import``): one statement for many rows (PostgreSQL: COPY;
        ``types``, PostgreSQL's names of the columns' types, for its binary form)."""
        self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)

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
        """(recorded schema version, whether the database holds any table); InputError when a schema object
        abstat uses is not abstat's table (:func:`abstat.store.schema.check_objects`)."""
        from abstat.store.schema import check_objects

        version = self.raw.execute("PRAGMA user_version").fetchone()[0]
        objects = self.raw.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        check_objects(objects, self.display)
        return int(version), any(kind == "table" for kind, _, _ in objects)

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

    def stopped(self) -> bool:
        """Whether a stop signal cut this connection's wait on its server (PostgreSQL): the
        user wants abstat to end, not to wait on that server again."""
        return False

    def is_permission(self, err: BaseException) -> bool:
        """The server refused a write this role may not make (SQLite: a read-only file)."""
        return isinstance(err, sqlite3.OperationalError) and "readonly" in str(err).replace(" ", "").lower()

    def is_damage(self, err: BaseException) -> bool:
        """A damaged file (as opposed to a lock, a full disk...): reading around it may save the rest."""
        return isinstance(err, sqlite3.DatabaseError) and (  # a damaged page may read as text that is not UTF-8
            not isinstance(err, sqlite3.OperationalError)
            or "malformed" in str(err)
            or "Could not decode to UTF-8" in str(err)
        )

    def error(self, err: BaseException) -> InputError:
        text = scrub(str(err), self.name)
        if isinstance(err, sqlite3.OperationalError) and "malformed" not in text:
            return InputError(f"store error: {text}", path=self.display)
        if isinstance(err, sqlite3.IntegrityError):  # a write that conflicts with what is stored: no damage
            return InputError(f"store error: {text} (a row conflicts with one the store holds)", path=self.display)
        return InputError(
            f"damaged store ({text}); `sqlite3 {self.display} .recover` may save its contents", path=self.display
        )

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


# -- opening (connect, in abstat.store.connect, picks the back end) -----------


def connect_sqlite(path: str, create: bool, read_only: bool = False) -> Connection:
    mode, read_only = _sqlite_mode(path, create, read_only)
    uri = f"file:{_quote(os.path.abspath(path))}?mode={mode}"
    try:
        raw, immutable = _open_sqlite(uri, read_only)
    except sqlite3.Error as err:
        raise InputError(f"cannot open the store: {err}", path=display_name(path)) from None
    connection = Connection(path, raw)
    connection.read_only = read_only
    connection.immutable = immutable
    return connection


def _sqlite_mode(path: str, create: bool, read_only: bool) -> tuple[str, bool]:
    """SQLite's open mode for ``path`` (rwc, rw or ro) and whether it is read only; InputError for what
    is not a store and cannot become one."""
    exists = os.path.exists(path)
    if exists and not os.path.isfile(path):
        # Refused before SQLite opens it: `--store /dev/null` must not leave /dev/null-journal.
        raise InputError("not a regular file, so not a store", path=display_name(path))
    directory = os.path.dirname(os.path.abspath(path))
    if exists:
        if os.path.getsize(path) == 0 and not create:  # a store has its header page even in WAL mode
            raise InputError(
                "empty file, not a store (run `abstat run` first, or give {store} PATH)",
                path=display_name(path),
                fields=["store"],
            )
        read_only = read_only or (not create and not (os.access(path, os.W_OK) and os.access(directory, os.W_OK)))
        return ("ro" if read_only else "rw"), read_only
    if not create:
        raise InputError(
            "no such store (run `abstat run` first, or give {store} PATH)", path=display_name(path), fields=["store"]
        )
    if not os.path.isdir(directory):
        raise InputError("the store's directory does not exist", path=display_name(path))
    if not os.access(directory, os.W_OK):
        raise InputError(
            "cannot create the store: its directory is read-only (a read-only file system, or no write permission)",
            path=display_name(path),
        )
    return "rwc", read_only


def _open_sqlite(uri: str, read_only: bool) -> tuple[sqlite3.Connection, bool]:
    """The SQLite connection, and whether it had to be opened as an immutable file."""
    raw = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if read_only:
        try:
            raw.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            # A WAL store in a read-only directory without its -shm file:
            # SQLite can read it only as an immutable file.
            raw.close()
            raw = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)
            return raw, True
    return raw, False


@contextmanager
def _signals_deferred(wanted: bool = True) -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends (the runner's one
    mechanism, which also holds those that land on another thread); a held
    signal is delivered, and its handler runs, right after."""
    if not wanted:
        yield
        return
    from abstat.box.runner import signals

    with signals.deferred():
        yield


_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def _quote(path: str) -> str:
    """``path`` percent-encoded for a SQLite URI, as urllib.parse.quote does (without importing
    urllib and ipaddress at every start-up); bytes that are not UTF-8 (surrogateescape) too."""
    return "".join(
        chr(byte) if byte in _URI_SAFE else f"%{byte:02X}" for byte in path.encode("utf-8", "surrogateescape")
    )
