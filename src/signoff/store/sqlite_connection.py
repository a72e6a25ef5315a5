"""Opening a SQLite connection the way the store needs it (WAL, `synchronous=FULL`, foreign
keys, a busy timeout, the `signoff_sha256` function the audit chain's SQL uses), and its driver
errors turned into signoff's."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .failures import sqlite_error

BUSY_TIMEOUT_MS = 10_000


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def connect(path: str, *, writer: bool = True) -> sqlite3.Connection:
    connection = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )
    connection.create_function("signoff_sha256", 1, _sha256_hex, deterministic=True)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not writer:
        connection.execute("PRAGMA foreign_keys = ON")
        return connection
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


@contextmanager
def translated(doing: str) -> Iterator[None]:
    """sqlite3 errors raised inside become `StoreUnavailable` or `StoreError`, saying `doing`."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sqlite_error(exc, doing) from exc
