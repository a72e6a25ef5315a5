"""Running the store's named statements on PostgreSQL: in a write's transaction on one
connection, or as reads that run again on another connection when theirs is lost (see
`signoff.store.postgres`), and counting the rows they return."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Any

from .core import Json

try:
    import psycopg
    from psycopg.types.json import Json as PgJson
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("PostgreSQL support needs the extra: pip install 'signoff[postgres]'") from exc

__all__ = ["READ_ATTEMPTS", "Connection", "PostgresReads", "PostgresTx", "RowCount", "pg_param"]

log = logging.getLogger("signoff.store")
READ_ATTEMPTS = 3
"""A read statement whose connection is lost is tried on this many connections in all."""


def pg_param(value: Any) -> Any:
    """A statement's parameter as psycopg takes it (JSON wrapped, tuples as arrays)."""
    if isinstance(value, Json):
        return PgJson(value.value)
    if isinstance(value, tuple):
        return list(value)
    return value


Connection = psycopg.Connection[dict[str, Any]]


class RowCount:
    """The rows a store's statements returned, by query (tests and benchmarks read them)."""

    def __init__(self) -> None:
        self.by_query: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, query: str, rows: int) -> None:
        with self._lock:
            self.by_query[query] += rows

    @property
    def rows(self) -> int:
        with self._lock:
            return self.by_query.total()

    def of(self, *queries: str) -> int:
        with self._lock:
            return sum(self.by_query[query] for query in queries)


class PostgresTx:
    """Statements on one connection (inside a transaction for a write), by query name."""

    def __init__(self, connection: Connection, queries: dict[str, str], counted: RowCount) -> None:
        self._connection = connection
        self._queries = queries
        self._counted = counted

    def _execute(self, query: str, params: dict[str, Any]) -> psycopg.Cursor[dict[str, Any]]:
        return self._connection.execute(
            self._queries[query],
            {key: pg_param(value) for key, value in params.items()},
        )

    def one(self, query: str, /, **params: Any) -> dict[str, Any] | None:
        row = self._execute(query, params).fetchone()
        self._counted.add(query, row is not None)
        return row

    def all(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        rows = self._execute(query, params).fetchall()
        self._counted.add(query, len(rows))
        return rows

    def run(self, query: str, /, **params: Any) -> int:
        return self._execute(query, params).rowcount

    def send(self, query: str, /, **params: Any) -> None:
        self._execute(query, params)


class PostgresReads(PostgresTx):
    """Reads, each statement on its own (autocommit), on a connection taken from the pool at the
    first; a statement whose connection is lost runs again on another one."""

    def __init__(self, pool: ConnectionPool[Connection], queries: dict[str, str], counted: RowCount) -> None:
        self._pool = pool
        self._queries = queries
        self._counted = counted
        self._held: Connection | None = None

    def _execute(self, query: str, params: dict[str, Any]) -> psycopg.Cursor[dict[str, Any]]:
        for attempt in range(1, READ_ATTEMPTS + 1):
            if self._held is None:
                self._held = self._pool.getconn()
            connection = self._held
            try:
                return connection.execute(
                    self._queries[query], {key: pg_param(value) for key, value in params.items()}
                )
            except psycopg.OperationalError as exc:
                if not connection.closed or attempt == READ_ATTEMPTS:
                    raise
                log.info("a read's connection was lost (%s); reading again on another one", exc)
                self.release()
        raise AssertionError("unreachable")

    def release(self) -> None:
        """Give the connection back to the pool (which discards it if it is broken)."""
        if self._held is not None:
            held, self._held = self._held, None
            self._pool.putconn(held)
