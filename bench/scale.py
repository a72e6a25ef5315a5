"""Listings at scale: the inbox, the history and the nav badge with 1,000,000 stored requests.

    .venv/bin/python bench/scale.py [--quick] [--no-postgres] [--dsn DSN] [--requests N] [--rebuild]

Prints one table (each listing for each kind of viewer: p50 and p99 now, and the query from
before on the same data) and writes bench/results/scale.json.

The database: N requests (1,000,000; --quick 100,000) over 180 days, written in the shape the
store had before listings read index ranges, then opened by the store, which migrates it (the
migration's time is reported); PostgreSQL's is analysed (as autovacuum would), SQLite's is
left without statistics (as signoff leaves it). The mix: 30 tools, 20 agents, 8 groups, 40
members; 8% of requests name no approver (the older ones, from before rules named approvers),
a quarter name alice, the rest one member, one group or both; 0.5% are open (pending or
drafting), nearly all among the newest, and alice has only a handful of them. The built
database is kept for the next run: SQLite in bench/.cache/, PostgreSQL as a schema of its own
(`--rebuild` makes them again; they are remade by themselves when the generator or the
migrations change). PostgreSQL: the DSN defaults to $SIGNOFF_BENCH_POSTGRES_DSN, then
$SIGNOFF_TEST_POSTGRES_DSN, then the local test server.

Who asks: an admin (sees everything); newbie, a member named on no request and in no group
(sees what names nobody); alice, named on 250,000 requests, nearly all decided; olga, in two
groups; agent-07, an agent (sees only what it created: the `created_by` filter). What is
asked, through the store as the server asks it (`Store.list_requests`, rows decoded into
requests): the inbox's first page (open requests, 51 rows: a page and one to know there is
more), the nav badge (`count_waiting`), the history's first page, a later page (the cursor
half way back in time) and the history of one status. Beside them, without targets: a text
search, and the overview's open counts. Every sample set is taken in rounds (each query once
per round) so that the machine's noise falls on all of them alike.

"Before" runs the query this version replaced, on the same database and through the same
connection and row decoding: warm, a few times each (it takes up to seconds).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core import (
    LOCAL_DSN,
    Metric,
    Report,
    Target,
    machine_info,
    percentile,
    postgres_unavailable,
    progress,
)
from signoff import Approve, Edit, Reject, Respond
from signoff._util import _PAIRS, to_iso
from signoff.decisions import decision_to_dict
from signoff.identity import User
from signoff.server.inbox.rendering import OPEN_STATUSES, PAGE_SIZE, count_waiting
from signoff.store import SQLiteStore, Store
from signoff.store.queries import _PARAM, migration_files
from signoff.store.sqlite_migrations import split_statements

HERE = Path(__file__).resolve().parent
RESULTS_PATH = HERE / "results" / "scale.json"
CACHE = HERE / ".cache"
MIX_VERSION = "scale-mix-1"
"""Change it when the generator changes: cached databases are then built again."""
P99_TARGET_MS = 20.0
BEFORE_MIGRATION = 2
"""The last migration before listings read index ranges: the data is written in its shape."""
TABLE_WIDTH = 140


@dataclass(frozen=True)
class Sizes:
    requests: int
    samples: int
    extra_samples: int
    before_samples: int


FULL = Sizes(requests=1_000_000, samples=200, extra_samples=30, before_samples=5)
QUICK = Sizes(requests=100_000, samples=30, extra_samples=5, before_samples=2)


# -- the mix ----------------------------------------------------------------------------------

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


# -- the query from before --------------------------------------------------------------------

BEFORE_SQL = {
    "sqlite": r"""
SELECT r.* FROM requests r
WHERE (:status IS NULL OR r.status IN (SELECT value FROM json_each(:status)))
  AND (:tool IS NULL OR r.tool_name = :tool)
  AND (:agent IS NULL OR r.agent = :agent)
  AND (:app IS NULL OR r.app = :app)
  AND (:created_by IS NULL OR r.created_by = :created_by)
  AND (:cursor IS NULL OR r.id < :cursor)
  AND (:search IS NULL OR r.tool_name LIKE :search ESCAPE '\' OR r.description LIKE :search ESCAPE '\'
       OR r.thread_id LIKE :search ESCAPE '\' OR r.agent LIKE :search ESCAPE '\')
  AND (:principals IS NULL
       OR r.created_by = :viewer
       OR NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = r.id)
       OR EXISTS (SELECT 1 FROM request_approvers a
                  WHERE a.request_id = r.id AND a.principal IN (SELECT value FROM json_each(:principals))))
ORDER BY r.id DESC
LIMIT :limit""",
    "postgres": r"""
SELECT r.* FROM requests r
WHERE (CAST(:status AS text[]) IS NULL OR r.status = ANY(CAST(:status AS text[])))
  AND (CAST(:tool AS text) IS NULL OR r.tool_name = :tool)
  AND (CAST(:agent AS text) IS NULL OR r.agent = :agent)
  AND (CAST(:app AS text) IS NULL OR r.app = :app)
  AND (CAST(:created_by AS text) IS NULL OR r.created_by = :created_by)
  AND (CAST(:cursor AS text) IS NULL OR r.id < :cursor)
  AND (CAST(:search AS text) IS NULL OR r.tool_name ILIKE :search OR r.description ILIKE :search
       OR r.thread_id ILIKE :search OR r.agent ILIKE :search)
  AND (CAST(:principals AS text[]) IS NULL
       OR r.created_by = :viewer
       OR NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = r.id)
       OR EXISTS (SELECT 1 FROM request_approvers a
                  WHERE a.request_id = r.id AND a.principal = ANY(CAST(:principals AS text[]))))
ORDER BY r.id DESC
LIMIT :limit""",
}
"""`list_requests` as it was (with the access package's `created_by` filter), reduced to the
filters measured here."""


def install_before(store: Store) -> None:
    """Give the store the old query under a name of its own."""
    dialect = "sqlite" if isinstance(store, SQLiteStore) else "postgres"
    text = BEFORE_SQL[dialect].strip()
    if dialect == "postgres":
        text = _PARAM.sub(r"%(\1)s", text.replace("%", "%%"))
    store._queries = {**store._queries, "list_requests_before": text}  # type: ignore[attr-defined]


def list_before(store: Store, ask: Ask) -> int:
    principals = None
    if ask.viewer is not None:
        principals = [ask.viewer, *(f"group:{group}" for group in store.groups_of(ask.viewer))]
    with store._read() as tx:
        rows = tx.all(
            "list_requests_before",
            status=list(ask.statuses) if ask.statuses is not None else None,
            tool=None,
            agent=None,
            app=None,
            created_by=ask.created_by,
            cursor=ask.cursor,
            search=None,
            principals=principals,
            viewer=ask.viewer,
            limit=PAGE_SIZE + 1,
        )
        return len([store._request(row) for row in rows])


# -- what is asked ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Viewer:
    key: str
    label: str
    user: User
    created_by: str | None = None

    @property
    def visible_to(self) -> str | None:
        return None if self.user.is_admin else self.user.name


VIEWERS = (
    Viewer("admin", "admin (sees everything)", User(name="admin", role="admin")),
    Viewer("newbie", "member named on no request", User(name="newbie", role="member")),
    Viewer("alice", "alice, named on 250k mostly decided", User(name="alice", role="member")),
    Viewer("olga", "olga, in two groups", User(name="olga", role="member")),
    Viewer(
        "agent", "agent-07 (its own requests)", User(name="agent-07", role="agent"), created_by="agent-07"
    ),
)


@dataclass(frozen=True)
class Ask:
    """One listing as a page asks for it."""

    viewer: str | None
    statuses: tuple[str, ...] | None = None
    cursor: str | None = None
    created_by: str | None = None
    search: str | None = None

    def run(self, store: Store) -> int:
        by_creator = {"created_by": self.created_by} if self.created_by is not None else {}
        return len(
            store.list_requests(
                status=list(self.statuses) if self.statuses is not None else None,
                visible_to=self.viewer,
                cursor=self.cursor,
                search=self.search,
                limit=PAGE_SIZE + 1,
                **by_creator,
            )
        )


@dataclass(frozen=True)
class Query:
    key: str
    label: str
    run: Callable[[Store], object]
    before: Callable[[Store], object] | None = None
    target: bool = True


def queries_for(viewer: Viewer, middle: str) -> list[Query]:
    def ask(**fields: Any) -> Ask:
        return Ask(viewer=viewer.visible_to, created_by=viewer.created_by, **fields)

    inbox = ask(statuses=tuple(OPEN_STATUSES))
    first = ask()
    later = ask(cursor=middle)
    rejected = ask(statuses=("rejected",))
    found = [
        Query("inbox", "inbox, first page", inbox.run, lambda store: list_before(store, inbox)),
        Query("history", "history, first page", first.run, lambda store: list_before(store, first)),
        Query("later", "history, a page 90 days back", later.run, lambda store: list_before(store, later)),
        Query("status", "history of one status", rejected.run, lambda store: list_before(store, rejected)),
    ]
    if not viewer.user.is_agent:
        found.insert(1, Query("badge", "nav badge", lambda store: count_waiting(store, viewer.user)))
    return found


def extras_for(viewer: Viewer) -> list[Query]:
    search = Ask(viewer=viewer.visible_to, created_by=viewer.created_by, search="quarterly")
    found = [Query("search", "text search (newest 10,000)", search.run, target=False)]
    if not viewer.user.is_agent:
        found.append(
            Query(
                "open_counts",
                "overview: open by tool and agent",
                lambda store: store.open_counts(visible_to=viewer.visible_to),
                target=False,
            )
        )
    return found


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Timings:
    now_ms: list[float] = field(default_factory=list)
    now_cpu_ms: list[float] = field(default_factory=list)
    before_ms: list[float] = field(default_factory=list)


def timed(run: Callable[[Store], object], store: Store) -> float:
    started = time.perf_counter()
    run(store)
    return (time.perf_counter() - started) * 1000


def timed_both(run: Callable[[Store], object], store: Store) -> tuple[float, float]:
    """Wall and this thread's CPU time (SQLite's work is all in this thread: what the listing
    costs, whatever else the shared machine runs meanwhile), in ms."""
    started, started_cpu = time.perf_counter(), time.thread_time()
    run(store)
    return (time.perf_counter() - started) * 1000, (time.thread_time() - started_cpu) * 1000


def in_rounds(
    store: Store, queries: dict[tuple[str, str], Query], samples: int
) -> dict[tuple[str, str], Timings]:
    timings = {key: Timings() for key in queries}
    for query in queries.values():  # warm-up
        query.run(store)
    for _ in range(samples):
        for key, query in queries.items():
            wall, cpu = timed_both(query.run, store)
            timings[key].now_ms.append(wall)
            timings[key].now_cpu_ms.append(cpu)
    return timings


def measure(
    built: Built, sizes: Sizes
) -> tuple[dict[tuple[str, str], Query], dict[tuple[str, str], Timings]]:
    store = built.store
    install_before(store)
    middle = request_id(datetime.now(UTC) - timedelta(days=DAYS / 2), 0)
    main = {(viewer.key, query.key): query for viewer in VIEWERS for query in queries_for(viewer, middle)}
    extras = {(viewer.key, query.key): query for viewer in VIEWERS for query in extras_for(viewer)}
    progress(f"{built.described}: {len(main)} listings x {sizes.samples} rounds")
    timings = in_rounds(store, main, sizes.samples)
    progress(f"{built.described}: {len(extras)} more x {sizes.extra_samples} rounds")
    timings.update(in_rounds(store, extras, sizes.extra_samples))
    progress(f"{built.described}: the query from before, {sizes.before_samples} rounds")
    before = {key: query for key, query in main.items() if query.before is not None}
    for _ in range(sizes.before_samples):
        for key, query in before.items():
            assert query.before is not None
            timings[key].before_ms.append(timed(query.before, store))
    return {**main, **extras}, timings


# -- reporting --------------------------------------------------------------------------------


def report_dialect(
    report: Report,
    built: Built,
    dialect: str,
    queries: dict[tuple[str, str], Query],
    timings: dict[tuple[str, str], Timings],
) -> None:
    section = built.described
    for (viewer_key, query_key), query in queries.items():
        viewer = next(viewer for viewer in VIEWERS if viewer.key == viewer_key)
        found = timings[(viewer_key, query_key)]
        details: dict[str, Any] = {
            "samples": len(found.now_ms),
            "p50_ms": percentile(found.now_ms, 0.5),
            "max_ms": max(found.now_ms),
        }
        if dialect == "sqlite":
            details.update(
                cpu_p50_ms=percentile(found.now_cpu_ms, 0.5), cpu_p99_ms=percentile(found.now_cpu_ms, 0.99)
            )
        if found.before_ms:
            details.update(
                before_samples=len(found.before_ms),
                before_p50_ms=percentile(found.before_ms, 0.5),
                before_max_ms=max(found.before_ms),
            )
        report.add(
            Metric(
                section,
                f"{dialect}_{viewer_key}_{query_key}_p99",
                f"{viewer.label}: {query.label}",
                percentile(found.now_ms, 0.99),
                "ms",
                Target("<=", P99_TARGET_MS) if query.target else None,
                details,
            )
        )
    if built.migrate_seconds is not None:
        report.add(
            Metric(
                section,
                f"{dialect}_migration_seconds",
                "the listing migration on these requests (once, when built)",
                built.migrate_seconds,
                "s",
            )
        )


def print_table(report: Report, title: str) -> None:
    rows = []
    for metric in report.metrics:
        details = metric.details
        if metric.unit != "ms":
            rows.append((metric.section, metric.label, f"{metric.value:.0f} s", "", "", "", "", ""))
            continue
        before = f"{details['before_p50_ms']:,.1f} ms" if "before_p50_ms" in details else ""
        target = f"≤ {metric.target.value:g} ms" if metric.target else ""
        met = {None: "", True: "met", False: "MISSED"}[metric.met]
        rows.append(
            (
                metric.section,
                metric.label,
                f"{details['p50_ms']:.2f} ms",
                f"{metric.value:.2f} ms",
                f"{details['cpu_p99_ms']:.2f} ms" if "cpu_p99_ms" in details else "",
                target,
                met,
                before,
            )
        )
    header = ("Database", "Who: what", "p50", "p99", "CPU p99", "Target", "Met", "Before (p50)")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
        print(title)
        for row in [header, *rows]:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        for note in report.notes:
            print(f"* {note}")
        return
    table = Table(title=title)
    for column in header:
        table.add_column(column, justify="left" if column in ("Database", "Who: what") else "right")
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            table.add_section()
        cells = list(row)
        if cells[6] == "MISSED":
            cells[6] = "[bold red]MISSED[/]"
        elif cells[6] == "met":
            cells[6] = "[green]met[/]"
        table.add_row(row[0] if row[0] != previous else "", *cells[1:])
        previous = row[0]
    console = Console()
    if not console.is_terminal:
        console = Console(width=TABLE_WIDTH)
    console.print(table)
    for note in report.notes:
        console.print(f"• {note}", highlight=False)


def write_results(report: Report, machine: dict[str, Any], quick: bool, count: int, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "quick": quick,
        "requests": count,
        "machine": machine,
        "metrics": [metric.to_dict() for metric in report.metrics],
        "notes": report.notes,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100,000 requests and fewer rounds: a smoke run")
    parser.add_argument("--requests", type=int, help="how many requests to store (default 1,000,000)")
    parser.add_argument(
        "--rebuild", action="store_true", help="build the databases again, not from the cache"
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument(
        "--dsn",
        default=os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or LOCAL_DSN,
        help="PostgreSQL to measure (a schema of its own is made and kept for the next run)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    sizes = QUICK if options.quick else FULL
    count = options.requests or sizes.requests
    skipped = (
        "PostgreSQL skipped: --no-postgres" if options.no_postgres else postgres_unavailable(options.dsn)
    )
    machine = machine_info(None if skipped else options.dsn)
    started = time.monotonic()
    report = Report()
    builders: list[tuple[str, Callable[[], Built]]] = [
        ("sqlite", lambda: build_sqlite(count, options.rebuild))
    ]
    if not skipped:
        builders.append(("postgres", lambda: build_postgres(options.dsn, count, options.rebuild)))
    for dialect, build in builders:
        built = build()
        try:
            queries, timings = measure(built, sizes)
        finally:
            built.store.close()
        report_dialect(report, built, dialect, queries, timings)
    if skipped:
        report.notes.append(skipped)
    report.notes.append(
        f"p50/p99 over {sizes.samples} rounds ({sizes.extra_samples} for the rows without a target), "
        "through Store.list_requests with rows decoded, wall time; on SQLite also the thread's CPU time "
        "(all of SQLite's work: what a listing costs when the shared machine's load is set aside); "
        "'before' is the query this version replaced, "
        f"on the same data, warm, {sizes.before_samples} rounds."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    mode = "quick" if options.quick else "full"
    print_table(report, f"signoff listings at scale ({mode} run, {machine['cpu_count']} cores)")
    write_results(report, machine, options.quick, count, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
