"""A store whose rows were written before a migration, then opened (so migrated): for tests of
what a migration makes of existing data, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from signoff.store import SQLiteStore, Store
from signoff.store.queries import migration_files
from signoff.store.sqlite_migrations import split_statements

from .conftest import NO_POSTGRES, POSTGRES_DSN, drop_pg_schema, new_pg_schema

Run = Callable[[str, tuple[Any, ...]], object]
"""Runs one statement with its parameters (written with the dialect's `marker`)."""
Fill = Callable[[Run, str], None]
"""Writes the old rows: given `run` and the dialect's parameter marker (`?` or `%s`)."""


@contextmanager
def migrated_store(dialect: str, tmp_path: Path, *, before: int, fill: Fill) -> Iterator[Store]:
    """A database at migration `before`, filled by `fill`, then opened as a store (which applies
    the migrations after it)."""
    if dialect == "sqlite":
        path = tmp_path / "old.db"
        connection = sqlite3.connect(path, isolation_level=None)
        connection.execute(
            "CREATE TABLE signoff_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
        )
        for version, name, script in migration_files("sqlite")[:before]:
            for statement in split_statements(script):
                connection.execute(statement)
            connection.execute("INSERT INTO signoff_migrations VALUES (?, ?, '')", (version, name))
        fill(lambda sql, row: connection.execute(sql, row), "?")
        connection.close()
        store: Store = SQLiteStore(path)
        try:
            yield store
        finally:
            store.close()
        return
    if not POSTGRES_DSN:
        pytest.skip(NO_POSTGRES)
    import psycopg
    from psycopg import sql

    from signoff.store.postgres import PostgresStore

    schema = new_pg_schema()
    try:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as pg:
            pg.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
            pg.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            pg.execute(
                "CREATE TABLE signoff_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
            )
            for version, name, script in migration_files("postgres")[:before]:
                pg.execute(script.encode())
                pg.execute("INSERT INTO signoff_migrations VALUES (%s, %s, now())", (version, name))
            fill(lambda statement, row: pg.execute(statement.encode(), row), "%s")
        store = PostgresStore(POSTGRES_DSN, schema=schema, max_size=2)
        try:
            yield store
        finally:
            store.close()
    finally:
        drop_pg_schema(schema)
