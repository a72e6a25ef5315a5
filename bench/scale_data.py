"""The stored requests bench/scale.py lists: a seeded mix of requests, people, groups, agents and
tools over DAYS days, written in the schema's old shape and migrated (as a real deployment's
data is), into SQLite or PostgreSQL, cached under bench/.cache by the mix and the migrations."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core import (
    progress,
)
from signoff import Approve, Edit, Reject, Respond
from signoff._util import _PAIRS, to_iso
from signoff.decisions import decision_to_dict
from signoff.store import SQLiteStore, Store
from signoff.store.queries import migration_files
from signoff.store.sqlite_migrations import split_statements

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
MIX_VERSION = "scale-mix-1"
"""Change it when the generator changes: cached databases are then built again."""
BEFORE_MIGRATION = 2
"""The last migration before listings read index ranges: the data is written in its shape."""


MEMBERS = tuple(f"member-{n:02d}" for n in range(40))
GROUPS = ("ops", "finance", "security", "legal", "data", "support", "infra", "hr")
AGENTS = tuple(f"agent-{n:02d}" for n in range(20))
TOOLS = tuple(f"tool_{n:02d}" for n in range(30))
APPS = ("billing", "crm", "deploy", "mail", "search")
WORDS = ("invoice", "refund", "quarterly report", "deploy", "reminder", "access", "backup", "renewal")
GROUP_MEMBERS = {"ops": ("olga", "member-01"), "finance": ("olga", "member-02"), "security": ("member-03",)}
CLOSED = (
    ("approved", 55),
    ("edited", 5),
    ("rejected", 10),
    ("responded", 3),
    ("expired", 20),
    ("cancelled", 7),
)
DAYS = 180
REQUEST_COLUMNS = (
    "id",
    "thread_id",
    "tool_call_id",
    "kind",
    "tool_name",
    "args",
    "agent",
    "app",
    "status",
    "description",
    "rule",
    "created_at",
    "updated_at",
    "deadline",
    "decided_at",
    "decision",
    "final_args",
    "created_by",
)


def request_id(moment: datetime, randomness: int) -> str:
    """An id as `new_id` makes it at that moment."""
    value = (int(moment.timestamp() * 1000) << 80) | randomness
    return "req_" + "".join(_PAIRS[(value >> shift) & 1023] for shift in range(120, -10, -10))


def said(status: str) -> dict[str, Any] | None:
    decision = {
        "approved": Approve(),
        "edited": Edit(args={"to": "ops@example.com"}),
        "rejected": Reject(message="not now"),
        "responded": Respond(message="done by hand"),
    }.get(status)
    return decision_to_dict(decision) if decision is not None else None


SAID = {status: said(status) for status, _ in CLOSED}


def approvers_for(rng: random.Random, age: float) -> list[str]:
    """Who a request names; `age` is 0 for the oldest request, 1 for the newest."""
    draw = rng.random()
    if draw < 0.08:
        return [] if age < 0.6 else [rng.choice(MEMBERS)]
    if draw < 0.33:
        return ["alice"]
    if draw < 0.63:
        return [rng.choice(MEMBERS)]
    if draw < 0.92:
        return [f"group:{rng.choice(GROUPS)}"]
    return [rng.choice(MEMBERS), f"group:{rng.choice(GROUPS)}"]


def mix(count: int, now: datetime) -> Iterator[tuple[tuple[Any, ...], list[str]]]:
    """(request row in REQUEST_COLUMNS order, its approvers), oldest first."""
    rng = random.Random(29)
    start = now - timedelta(days=DAYS)
    closed = [status for status, weight in CLOSED for _ in range(weight)]
    tool_weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(TOOLS))))
    for number in range(count):
        age = number / count
        created = start + timedelta(days=DAYS * age)
        approvers = approvers_for(rng, age)
        is_open = (age > 0.99 and rng.random() < 0.5) or rng.random() < 0.0003
        if is_open and "alice" in approvers and rng.random() < 0.998:
            is_open = False
        status = ("pending" if rng.random() < 0.85 else "drafting") if is_open else rng.choice(closed)
        tool = rng.choices(TOOLS, cum_weights=tool_weights)[0]
        creator = AGENTS[min(int(rng.paretovariate(1.0)) - 1, len(AGENTS) - 1)]
        deadline = now + timedelta(days=1) if is_open else created + timedelta(hours=1)
        decided = None
        decision = None
        if not is_open:
            decided = (
                deadline if status == "expired" else created + timedelta(seconds=rng.expovariate(1 / 600))
            )
            if SAID[status] is not None:
                decision = {
                    **SAID[status],
                    "id": f"dec_{number}",
                    "actor": approvers[0] if approvers and "group:" not in approvers[0] else "member-01",
                    "channel": "inbox",
                    "at": to_iso(decided),
                }
            elif status == "cancelled":
                decision = {"type": "cancel", "actor": creator, "channel": "api", "at": to_iso(decided)}
        args = {"to": f"user{number}@example.com", "amount": number % 1000}
        row = (
            request_id(created, rng.getrandbits(79)),
            f"run-{number // 7}",
            f"call-{number % 7}",
            "tool",
            tool,
            json.dumps(args),
            creator,
            rng.choice(APPS),
            status,
            f"{tool}: {rng.choice(WORDS)} for user{number}@example.com",
            json.dumps({"approvers": approvers} if approvers else {}),
            to_iso(created),
            to_iso(decided or created),
            to_iso(deadline),
            to_iso(decided) if decided else None,
            json.dumps(decision) if decision else None,
            json.dumps(args) if status in ("approved", "edited") else None,
            creator,
        )
        yield row, approvers


def cache_key(count: int) -> str:
    digest = hashlib.sha256(f"{MIX_VERSION}|{count}".encode())
    for dialect in ("sqlite", "postgres"):
        for _, name, script in migration_files(dialect):  # type: ignore[arg-type]
            digest.update(name.encode() + script.encode())
    return digest.hexdigest()[:10]


@dataclass
class Built:
    """A database ready to measure, and how it was made."""

    store: Store
    described: str
    build_seconds: float | None = None
    migrate_seconds: float | None = None
    notes: list[str] = field(default_factory=list)


# -- SQLite -----------------------------------------------------------------------------------


def build_sqlite(count: int, rebuild: bool) -> Built:
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"scale-sqlite-{count}-{cache_key(count)}.db"
    meta_path = path.with_suffix(".json")
    if rebuild or not meta_path.exists():
        for stale in CACHE.glob(f"scale-sqlite-{count}-*"):
            stale.unlink()
        started = time.monotonic()
        progress(f"SQLite: writing {count:,} requests in the old shape")
        write_sqlite(path, count)
        built = time.monotonic() - started
        progress("SQLite: migrating them")
        started = time.monotonic()
        SQLiteStore(path).close()
        migrated = time.monotonic() - started
        connection = sqlite3.connect(path)  # not analysed: signoff never runs ANALYZE on SQLite
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        meta_path.write_text(json.dumps({"build_seconds": built, "migrate_seconds": migrated}))
    meta = json.loads(meta_path.read_text())
    return Built(
        SQLiteStore(path), f"SQLite, {count:,} requests", meta["build_seconds"], meta["migrate_seconds"]
    )


def write_sqlite(path: Path, count: int) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute(
        "CREATE TABLE signoff_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    connection.execute("BEGIN")
    for version, name, script in migration_files("sqlite")[:BEFORE_MIGRATION]:
        for statement in split_statements(script):
            connection.execute(statement)
        connection.execute(
            "INSERT INTO signoff_migrations VALUES (?, ?, ?)", (version, name, to_iso(datetime.now(UTC)))
        )
    insert = "INSERT INTO requests ({}) VALUES ({})".format(
        ", ".join(REQUEST_COLUMNS), ", ".join("?" * len(REQUEST_COLUMNS))
    )
    rows: list[tuple[Any, ...]] = []
    approvers: list[tuple[str, str]] = []
    for row, named in mix(count, datetime.now(UTC)):
        rows.append(row)
        approvers.extend((row[0], principal) for principal in named)
        if len(rows) == 20_000:
            connection.executemany(insert, rows)
            connection.executemany(
                "INSERT INTO request_approvers (request_id, principal) VALUES (?, ?)", approvers
            )
            rows.clear()
            approvers.clear()
    connection.executemany(insert, rows)
    connection.executemany("INSERT INTO request_approvers (request_id, principal) VALUES (?, ?)", approvers)
    connection.executemany(
        "INSERT INTO group_members (group_name, user_name) VALUES (?, ?)",
        [(group, user) for group, users in GROUP_MEMBERS.items() for user in users],
    )
    connection.execute("COMMIT")
    connection.close()


# -- PostgreSQL -------------------------------------------------------------------------------


def build_postgres(dsn: str, count: int, rebuild: bool) -> Built:
    import psycopg
    from psycopg import sql

    from signoff.store.postgres import PostgresStore

    schema = f"signoff_bench_scale_{count}_{cache_key(count)}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s", (schema,)
        ).fetchone()
        meta = json.loads(row[0]) if row and row[0] else None
        if rebuild or meta is None:
            stale = connection.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (f"signoff_bench_scale_{count}_%",)
            ).fetchall()
            for (name,) in stale:
                connection.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))
            started = time.monotonic()
            progress(f"PostgreSQL: writing {count:,} requests in the old shape")
            write_postgres(connection, schema, count)
            built = time.monotonic() - started
            progress("PostgreSQL: migrating them")
            started = time.monotonic()
            PostgresStore(dsn, schema=schema, max_size=2).close()
            migrated = time.monotonic() - started
            for table in ("requests", "request_approvers"):
                connection.execute(
                    sql.SQL("VACUUM ANALYZE {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
                )
            meta = {"build_seconds": built, "migrate_seconds": migrated}
            connection.execute(
                sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                    sql.Identifier(schema), sql.Literal(json.dumps(meta))
                )
            )
    store = PostgresStore(dsn, schema=schema, max_size=4)
    return Built(store, f"PostgreSQL, {count:,} requests", meta["build_seconds"], meta["migrate_seconds"])


def write_postgres(connection: Any, schema: str, count: int) -> None:
    from psycopg import sql

    connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    connection.execute(
        "CREATE TABLE signoff_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
    )
    for version, name, script in migration_files("postgres")[:BEFORE_MIGRATION]:
        connection.execute(script.encode())
        connection.execute("INSERT INTO signoff_migrations VALUES (%s, %s, now())", (version, name))
    with connection.transaction():
        connection.execute("ALTER TABLE requests DISABLE TRIGGER requests_notify")
        approvers: list[tuple[str, str]] = []
        with connection.cursor().copy(f"COPY requests ({', '.join(REQUEST_COLUMNS)}) FROM STDIN") as copy:
            for row, named in mix(count, datetime.now(UTC)):
                copy.write_row(row)
                approvers.extend((row[0], principal) for principal in named)
        with connection.cursor().copy("COPY request_approvers (request_id, principal) FROM STDIN") as copy:
            for pair in approvers:
                copy.write_row(pair)
        with connection.cursor().copy("COPY group_members (group_name, user_name) FROM STDIN") as copy:
            for group, users in GROUP_MEMBERS.items():
                for user in users:
                    copy.write_row((group, user))
        connection.execute("ALTER TABLE requests ENABLE TRIGGER requests_notify")
    connection.execute("RESET search_path")
