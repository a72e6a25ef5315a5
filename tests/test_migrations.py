"""Applying migrations/ in order gives exactly schema.sql (procrastinate's test)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from signoff.store import SQLiteStore
from signoff.store.queries import load_queries, migration_files, sql_file
from signoff.store.sqlite_migrations import split_statements
from tests.conftest import POSTGRES_DSN, drop_pg_schema, new_pg_schema


def sqlite_schema(path: Path) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(path)
    rows = connection.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE name NOT LIKE 'sqlite_%' AND name != 'signoff_migrations' ORDER BY type, name"
    ).fetchall()
    columns = []
    tables = (
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'signoff_migrations' ORDER BY name"
    )
    for (table,) in connection.execute(tables):
        columns.extend((table, *info) for info in connection.execute(f"PRAGMA table_info({table})"))
    connection.close()
    return [*rows, *columns]


def test_sqlite_migrations_equal_the_fresh_schema(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    SQLiteStore(migrated).close()
    fresh = tmp_path / "fresh.db"
    connection = sqlite3.connect(fresh)
    for statement in split_statements(sql_file("sqlite", "schema.sql")):
        connection.execute(statement)
    connection.commit()
    connection.close()
    assert sqlite_schema(migrated) == sqlite_schema(fresh)


def test_migrating_twice_applies_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "twice.db")
    try:
        assert store.migrate() == []
    finally:
        store.close()


def test_migrations_are_numbered_without_gaps() -> None:
    for dialect in ("sqlite", "postgres"):
        versions = [version for version, _, _ in migration_files(dialect)]  # type: ignore[arg-type]
        assert versions == list(range(1, len(versions) + 1))


def test_both_dialects_have_the_same_named_queries() -> None:
    fused_in_postgres = {
        "insert_request_audited",
        "finish_request_audited",
        "decide_at_once",
        "reclaim_execution_audited",
    }
    sealed_later_in_postgres = {"seal_audit"}  # SQLite seals each entry as it commits
    only_postgres = fused_in_postgres | sealed_later_in_postgres
    assert set(load_queries("sqlite")) == set(load_queries("postgres")) - only_postgres


PG_CATALOG = """
SELECT 'column', table_name,
       column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
FROM information_schema.columns WHERE table_schema = %(schema)s AND table_name != 'signoff_migrations'
UNION ALL
SELECT 'index', tablename, indexdef FROM pg_indexes WHERE schemaname = %(schema)s
  AND tablename != 'signoff_migrations'
UNION ALL
SELECT 'constraint', conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
WHERE connamespace = %(schema)s::regnamespace AND conrelid::regclass::text NOT LIKE '%%signoff_migrations%%'
UNION ALL
SELECT 'trigger', event_object_table, trigger_name || ' ' || action_timing || ' ' || event_manipulation
FROM information_schema.triggers WHERE trigger_schema = %(schema)s
"""


def pg_schema_rows(schema: str) -> list[tuple[Any, ...]]:
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN) as connection:
        rows = connection.execute(PG_CATALOG, {"schema": schema}).fetchall()
    return sorted(tuple(str(value).replace(schema + ".", "") for value in row) for row in rows)


@pytest.mark.postgres
def test_postgres_migrations_equal_the_fresh_schema(pg_schema: str) -> None:
    import psycopg
    from psycopg import sql

    from signoff.store.postgres import PostgresStore

    assert POSTGRES_DSN is not None
    PostgresStore(POSTGRES_DSN, schema=pg_schema, max_size=2).close()
    fresh = new_pg_schema()
    try:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(fresh)))
            connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(fresh)))
            connection.execute(sql_file("postgres", "schema.sql").encode())
        migrated_rows = pg_schema_rows(pg_schema)
        assert migrated_rows
        assert migrated_rows == pg_schema_rows(fresh)
    finally:
        drop_pg_schema(fresh)
