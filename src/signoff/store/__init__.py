"""Durable storage: SQLite (the embedded default) and PostgreSQL behind one contract."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

from ..environment import DB_ENV
from ..errors import ConfigError
from .base import Store
from .sqlite import SQLiteStore


def default_db_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("signoff")) / "signoff.db"


def default_db_url() -> str:
    return os.environ.get(DB_ENV) or f"sqlite:///{default_db_path()}"


def open_store(url: str | None = None) -> Store:
    """Open (and migrate) the store at `url`: `sqlite:///path`, `postgresql://…`, or a file path.

    With no url: `$SIGNOFF_DB`, else a SQLite file under the user's data directory.
    """
    url = url or default_db_url()
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(url)
    if url.startswith("sqlite://"):
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        path = unquote(url[len("sqlite://") :].split("?", 1)[0])
        path = path[1:] if path.startswith("/") else path
        if not path:
            raise ConfigError(f"no file in SQLite url {url!r}; use sqlite:///path/to/signoff.db")
        return SQLiteStore(path)
    if "://" in url:
        raise ConfigError(f"unknown database url {url!r}; use sqlite:///path or postgresql://…")
    return SQLiteStore(url)


__all__ = ["DB_ENV", "SQLiteStore", "Store", "default_db_path", "default_db_url", "open_store"]
