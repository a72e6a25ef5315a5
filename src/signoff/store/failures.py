"""Database drivers' errors, as signoff's: nobody above the store sees a `sqlite3` or `psycopg`
exception.

`StoreUnavailable` (503) when the database cannot be used right now and trying again later may
work: a full disk, a read-only file, a lock held too long, an I/O error, a lost or refused
connection. `StoreError` for the rest (a corrupt file, a constraint the code should have kept).
The message says what failed, why in plain words, and the driver's own words.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import StoreError, StoreUnavailable

SQLITE_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY: "the database is locked by another connection",
    sqlite3.SQLITE_LOCKED: "the database is locked by another connection",
    sqlite3.SQLITE_NOMEM: "SQLite ran out of memory",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_PERM: "access to the database file was denied",
    sqlite3.SQLITE_IOERR: "the disk reported an I/O error",
    sqlite3.SQLITE_FULL: "the disk is full",
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
    sqlite3.SQLITE_PROTOCOL: "the database's locks are contended",
}
"""Primary SQLite result codes that mean "not now", and what they mean in plain words."""

POSTGRES_REASONS = {
    "53100": "the database server's disk is full",
    "53200": "the database server ran out of memory",
    "53300": "the database server has too many connections",
    "25006": "the database is read-only",
    "57P01": "the database server ended the connection",
    "57P02": "the database server ended the connection",
    "57P03": "the database server is not accepting connections yet",
    "57014": "the statement was cancelled",
    "55P03": "a lock could not be taken",
    "40001": "a concurrent transaction conflicted with this one",
    "40P01": "a concurrent transaction deadlocked with this one",
}
"""SQLSTATEs (of errors that make a store unavailable) and what they mean in plain words."""


def sqlite_error(exc: sqlite3.Error, doing: str) -> StoreError:
    """The signoff error for a `sqlite3` error met while `doing` ("the write failed")."""
    code = getattr(exc, "sqlite_errorcode", None)
    reason = SQLITE_UNAVAILABLE.get(code & 0xFF) if isinstance(code, int) else None
    if reason is None:
        return StoreError(f"{doing}: {exc}")
    return StoreUnavailable(f"{doing}: {reason} (SQLite: {exc})")


def postgres_error(exc: Exception, doing: str, *, commit_unknown: bool = False) -> StoreError:
    """The signoff error for a `psycopg` error met while `doing`. `commit_unknown`: the error
    came while committing, so whether the change was made is not known."""
    import psycopg  # only the PostgreSQL store calls this, and it has imported both
    from psycopg_pool import PoolTimeout

    sqlstate: Any = getattr(exc, "sqlstate", None)
    driver = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not isinstance(exc, psycopg.OperationalError | psycopg.errors.ReadOnlySqlTransaction):
        return StoreError(f"{doing}: {driver}")
    reason = POSTGRES_REASONS.get(sqlstate) or (
        "no database connection became free in time"
        if isinstance(exc, PoolTimeout)
        else "the connection to PostgreSQL was lost or refused"
    )
    if commit_unknown:
        reason += "; the change may or may not have been made"
    return StoreUnavailable(f"{doing}: {reason} (PostgreSQL: {driver})")
