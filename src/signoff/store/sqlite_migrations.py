"""The SQLite schema's migrations: applied in order, each in its own transaction, with foreign
keys off while they run and checked before each commits."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from .._util import to_iso
from ..errors import MigrationError, StoreUnavailable
from .failures import sqlite_error
from .queries import migration_files


def apply_migrations(connection: sqlite3.Connection, roll_back: Callable[[], None]) -> list[str]:
    """Apply the migrations the database lacks, in order; returns their names. `roll_back` ends
    the transaction of one that failed. Foreign keys are off meanwhile: a migration that rebuilds
    a table must not cascade its drop into the tables that reference it."""
    applied: list[str] = []
    connection.execute(
        "CREATE TABLE IF NOT EXISTS signoff_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    connection.execute("PRAGMA foreign_keys = OFF")
    try:
        _apply_missing(connection, roll_back, applied)
    finally:
        connection.execute("PRAGMA foreign_keys = ON")
    return applied


def _apply_missing(connection: sqlite3.Connection, roll_back: Callable[[], None], applied: list[str]) -> None:
    for version, name, sql in migration_files("sqlite"):
        connection.execute("BEGIN IMMEDIATE")
        try:
            done = connection.execute(
                "SELECT 1 FROM signoff_migrations WHERE version = ?", (version,)
            ).fetchone()
            if done is None:
                for statement in split_statements(sql):
                    connection.execute(statement)
                broken = connection.execute("PRAGMA foreign_key_check").fetchone()
                if broken is not None:
                    raise sqlite3.IntegrityError(f"it leaves a broken reference from table {broken[0]}")
                connection.execute(
                    "INSERT INTO signoff_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, to_iso(datetime.now().astimezone())),
                )
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            roll_back()
            error = sqlite_error(exc, f"migration {name} failed")
            if isinstance(error, StoreUnavailable):
                raise error from exc
            raise MigrationError(f"migration {name} failed: {exc}") from None
        if done is None:
            applied.append(name)


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers' inner `;` included)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("--")):
            continue
        current.append(line)
        text = "\n".join(current)
        if sqlite3.complete_statement(text):
            statements.append(text.strip())
            current = []
    if current and "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
