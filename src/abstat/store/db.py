"""The result store: a SQLite file (``./abstat.db`` by default) or a
PostgreSQL database (``postgresql://user@host/db``), behind one API.

SQLite uses write-ahead logging and a busy timeout so several ``abstat
run`` processes can write one store at once; PostgreSQL serves a team's
writers on many machines.  Connections and the SQL dialect live in
``backend``, the schema and its migrations in ``schema``, the queries in
``read`` and ``write``.
"""

from __future__ import annotations

import functools
import inspect
import os
import time
from typing import Any

from abstat.errors import InputError
from abstat.store.backend import BUSY_TIMEOUT_MS, Connection, display_name
from abstat.store.connect import connect
from abstat.store.read import StoreReader
from abstat.store.schema import migrate
from abstat.store.write import StoreWriter

DEFAULT_STORE = "abstat.db"
STORE_ENV = "ABSTAT_STORE"


def resolve_store_path(given: str | None = None) -> str:
    """The store a command uses: ``--store PATH|URL``, else ``$ABSTAT_STORE``, else ``./abstat.db``."""
    return given or os.environ.get(STORE_ENV) or DEFAULT_STORE


class Store(StoreReader, StoreWriter):
    """An open result store (use :func:`open_store`).

    ``damage`` lists what the readers met that could not be decoded (rows
    with invalid JSON, samples that are not numbers); what was readable was
    returned."""

    def __init__(self, connection: Connection, version: int) -> None:
        StoreWriter.__init__(self)
        self.db = connection
        self.path = connection.display  # a file's path, or the URL without its password
        self.display = connection.display
        self.kind = connection.kind
        self.version = version
        self.damage: list[str] = []

    def close(self) -> None:
        self.db.close()
        if self.spool is not None:
            self.spool.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def import_from(self, source: Store, experiments: Any = None) -> Any:
        """Copy into this store the runs of ``source`` it lacks (see ``transfer``), of the
        ``experiments`` named when given; an ImportResult."""
        from abstat.store.transfer import import_store

        try:
            return import_store(source, self, experiments)
        except source.db.errors as err:
            raise _error(source, err) from None

    def _open_spool(self, path: str) -> Store:
        return open_store(path)

    def check_damage(self) -> list[str]:
        """Everything known to be damaged: what the readers met so far, and what
        the database reports of itself (SQLite: ``PRAGMA quick_check``)."""
        return [*self.damage, *self.db.damage_check()]


def open_store(path: str = DEFAULT_STORE, *, create: bool = True, read_only: bool = False) -> Store:
    """Open (and create or migrate) the store ``path``: a file or a ``postgresql://`` URL.

    Raises InputError naming the store (its password masked) when it is not
    a store, is from a newer abstat (left untouched), cannot be reached, or
    (with ``create=False``) does not exist.  A SQLite store the user may not
    write (read-only file or directory) opens read-only with ``create=False``;
    ``read_only=True`` never writes (an older store is read as it is).
    """
    connection = connect(path, create=create, read_only=read_only)
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    attempt = 0
    while True:
        try:
            if connection.kind == "sqlite" and not connection.read_only:
                _check_then_wal(connection)
            version = migrate(connection)
            return Store(connection, version)
        except connection.errors as err:
            # Two processes opening a new SQLite store at once: switching it to
            # WAL can answer "locked" at once, without waiting for busy_timeout.
            attempt += 1
            if connection.is_busy(err) and time.monotonic() < deadline:
                time.sleep(min(0.01 * attempt, 0.2))
                continue
            connection.close()
            if connection.kind == "sqlite":
                if not connection.read_only and not _writable(path):  # a store, on a read-only disk
                    raise InputError(
                        f"cannot write to the store ({err}): {_READ_ONLY}", path=connection.display
                    ) from None
                if _foreign(err):
                    raise InputError(f"not an abstat store ({err})", path=connection.display) from None
                raise InputError(f"cannot open the store ({err})", path=connection.display) from None  # disk full...
            raise connection.error(err) from None
        except BaseException:
            connection.close()
            raise


_READ_ONLY = "the file or its directory is read-only (a read-only file system, or no write permission)"


def _foreign(err: BaseException) -> bool:
    """Whether SQLite's error says the file is not a database (or a damaged one), rather than
    that it cannot be written (a full disk, an I/O error)."""
    name = getattr(err, "sqlite_errorname", "")
    if name:
        return name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT"))
    text = str(err).lower()
    return "not a database" in text or "malformed" in text or "encrypted" in text


def _writable(path: str) -> bool:
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


def _check_then_wal(connection: Connection) -> None:
    """Refuse a foreign or newer file by reading only, then switch to WAL."""
    from abstat.store.schema import check_version

    with connection.snapshot():
        version, has_tables = connection.schema_state()
    check_version(version, has_tables, connection.display)  # before anything is written to the file
    raw = connection.raw
    if str(raw.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        raw.execute("PRAGMA journal_mode = WAL")
    raw.execute("PRAGMA synchronous = NORMAL")
    raw.execute("PRAGMA foreign_keys = ON")


# A store that opens fine can still fail later: a damaged page met by a query
# ("database disk image is malformed"), a full disk, a lock held too long, a
# server that went away.  Every public Store method turns such a driver error
# into an InputError naming the store, so no command shows it as an internal
# error; runs already committed stay.


def _guarded(method: Any) -> Any:
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generator(self: Store, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, *args, **kwargs)
            except self.db.errors as err:
                raise _error(self, err) from None

        return generator

    @functools.wraps(method)
    def call(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self.db.errors as err:
            raise _error(self, err) from None

    return call


def _error(store: Store, err: BaseException) -> InputError:
    error = store.db.error(err)
    if store.spool is not None:
        return InputError(
            f"{error}; this run's results since then are in {store.spool.display}"
            f" (abstat import {store.spool.display} --store {store.display})"
        )
    return error


_own = set(vars(Store))
for _class in Store.__mro__[1:-1]:  # every reader and writer mixin (RowReader, RunReader too), most derived first
    for _name, _member in list(vars(_class).items()):
        if not _name.startswith("_") and inspect.isfunction(_member) and _name not in _own:
            setattr(Store, _name, _guarded(_member))
            _own.add(_name)
for _name in ("check_damage", "import_from"):
    setattr(Store, _name, _guarded(getattr(Store, _name)))
del _class, _name, _member, _own

__all__ = ["DEFAULT_STORE", "STORE_ENV", "Store", "display_name", "open_store", "resolve_store_path"]
