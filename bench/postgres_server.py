"""The PostgreSQL server a bench measures: is it there, its version, a bench schema dropped."""

from __future__ import annotations

LOCAL_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_server_version(dsn: str) -> str:
    """The server's version, or raise if it cannot be reached."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=3) as connection:
        row = connection.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def postgres_unavailable(dsn: str) -> str | None:
    """Why PostgreSQL rows must be skipped, or None if the server answers."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "PostgreSQL skipped: psycopg is not installed (pip install 'signoff[postgres]')"
    try:
        postgres_server_version(dsn)
    except Exception as exc:
        reason = " ".join(str(exc).split())
        return f"PostgreSQL skipped: cannot reach {dsn} ({type(exc).__name__}: {reason})"
    return None
