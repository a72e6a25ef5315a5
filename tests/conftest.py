"""Shared fixtures: a fresh SQLite file or a fresh PostgreSQL schema per test.

PostgreSQL tests need `SIGNOFF_TEST_POSTGRES_DSN` (CI sets it); elsewhere they skip, saying so.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff import Backend, Client
from signoff.store import SQLiteStore, Store

from .live import LiveServer

POSTGRES_DSN = os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")

# The default database lives in the user's data directory; a test that reaches it (a CLI command
# with no --db, a process started without SIGNOFF_DB) gets one of this run's own instead, never
# the machine's (processes the tests start inherit it).
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="signoff-tests-data-")
NO_POSTGRES = (
    "PostgreSQL tests need SIGNOFF_TEST_POSTGRES_DSN (e.g. postgresql://postgres@127.0.0.1:5432/test)"
)


def new_pg_schema() -> str:
    return f"signoff_test_{uuid.uuid4().hex[:12]}"


def drop_pg_schema(schema: str, attempts: int = 5) -> None:
    """Drops a test's schema. A server thread that has not finished its last transaction (a seal, a
    delivery) may hold a table the drop needs while waiting on one it took: PostgreSQL then picks a
    victim, sometimes the drop, which is tried again once that transaction has ended."""
    import psycopg
    from psycopg import errors, sql

    assert POSTGRES_DSN is not None
    for attempt in range(attempts):
        try:
            with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
                connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            return
        except errors.DeadlockDetected:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "signoff.db"


@pytest.fixture
def sqlite_store(sqlite_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(sqlite_path)
    yield store
    store.close()


@pytest.fixture
def pg_schema() -> Iterator[str]:
    if not POSTGRES_DSN:
        pytest.skip(NO_POSTGRES)
    schema = new_pg_schema()
    yield schema
    drop_pg_schema(schema)


@pytest.fixture
def pg_store(pg_schema: str) -> Iterator[Store]:
    from signoff.store.postgres import PostgresStore

    assert POSTGRES_DSN is not None
    store = PostgresStore(POSTGRES_DSN, schema=pg_schema, max_size=4)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Store:
    """The same test against both backends."""
    name = "sqlite_store" if request.param == "sqlite" else "pg_store"
    store: Store = request.getfixturevalue(name)
    return store


def url_for(store: Store) -> str:
    """How another process opens the same database (PostgreSQL: with the test's schema)."""
    from signoff.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        return f"{store.url}?options=-csearch_path%3D{store.schema}"
    return store.url


@pytest.fixture
def live_server(store: Store) -> Iterator[LiveServer]:
    """A real server over the test's store (SQLite and PostgreSQL)."""
    with LiveServer(store) as server:
        yield server


AGENT_USER = "travel-agent"
"""The agent's user when a gate talks to a live server (the `remote` backend)."""


@pytest.fixture(params=["local", "remote"])
def backend(request: pytest.FixtureRequest, store: Store) -> Iterator[Backend]:
    """What a gate runs over: the store itself, or a `Client` of a live server over the store
    (with an agent's token). Either way, people decide on `store`."""
    if request.param == "local":
        yield store
        return
    server: LiveServer = request.getfixturevalue("live_server")
    with Client(server.url, server.user(AGENT_USER, role="agent")) as client:
        yield client


@pytest.fixture
def sqlite_server(sqlite_store: Store) -> Iterator[LiveServer]:
    with LiveServer(sqlite_store) as server:
        yield server
