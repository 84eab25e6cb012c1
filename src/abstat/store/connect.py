"""Opening a store's connection: a path is a SQLite file, a ``postgresql://`` URL
a PostgreSQL database (:mod:`abstat.store.postgres`, imported only then)."""

from __future__ import annotations

from abstat.store.backend import Connection, connect_sqlite, is_url


def connect(name: str, *, create: bool, read_only: bool = False) -> Connection:
    """Open the store ``name`` (path or URL).  InputError names it (masked) when it cannot be opened.
    ``read_only``: never write to it (not even a migration)."""
    if is_url(name):
        from abstat.store.postgres import connect_postgres

        connection = connect_postgres(name)
        connection.read_only = read_only
        return connection
    return connect_sqlite(name, create and not read_only, read_only)
