"""PostgreSQL helpers for fault tests: a DSN whose connections can be told apart, and ending
them from outside as an administrator (or a failover) would."""

from __future__ import annotations

import uuid

from ..conftest import POSTGRES_DSN


def tagged_dsn() -> tuple[str, str]:
    """A DSN whose connections carry their own `application_name`, and that name."""
    assert POSTGRES_DSN is not None
    name = f"signoff-fault-{uuid.uuid4().hex[:10]}"
    separator = "&" if "?" in POSTGRES_DSN else "?"
    return f"{POSTGRES_DSN}{separator}application_name={name}", name


def terminate_backends(application_name: str) -> int:
    """`pg_terminate_backend` every connection of `application_name`, waiting (up to 5 s each) until
    each has ended, as after a restart; how many there were. Without the wait a backend may still be
    exiting when the next call takes its connection, whose write then fails half-done: a different
    fault (the change may or may not have been made), which callers get as a 503."""
    import psycopg

    assert POSTGRES_DSN is not None
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchone()
    assert row is not None
    return int(row[0])
