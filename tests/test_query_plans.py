"""Every inbox, history, badge and overview query reads index ranges, never a whole table
(issue 8, item 29), for every shape of viewer and filter, on SQLite and PostgreSQL.

The store holds the mix of tests/requests_mix.py grown to some 40,000 requests and analysed,
so that the planners choose as they would on a real database. Each listing is asked through
the store (so the parameters are the ones it really passes) and explained instead of run:
SQLite's plan may SEARCH `requests` and `request_approvers` (an index range or lookup) but
never SCAN them, with or without an index; PostgreSQL's may not Seq Scan them, nor walk a
whole index (an index scan without an index condition).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

import pytest

from signoff._util import utcnow
from signoff.identity import User
from signoff.server.inbox.rendering import count_waiting
from signoff.store import SQLiteStore, Store
from signoff.store.listing import VISIBLE_PAGE, VISIBLE_PRINCIPALS, listing_params, listing_query

from .requests_mix import Listing, make_mix

TABLES = ("requests", "request_approvers")
EXPLAINED = frozenset(
    {
        "list_requests",
        "list_newest",
        "list_by_status",
        "list_newest_narrowed",
        "list_visible",
        "open_counts_by",
        "recent_tool_requests",
    }
)
OPEN = ("pending", "drafting")
SEED_REQUESTS = 250
DOUBLINGS = 8
"""250 requests made through the store, the decided ones copied until there are some 40,000."""


def listings(cursor: str) -> dict[str, Listing]:
    """The shapes of viewer and filter the inbox, the history, the API and the CLI ask for."""
    shapes: dict[str, Listing] = {}
    for viewer, who in ((None, "admin"), ("newbie", "member named nowhere"), ("alice", "busy approver")):
        shapes[f"{who}: inbox"] = Listing(viewer=viewer, statuses=OPEN, limit=51)
        shapes[f"{who}: history"] = Listing(viewer=viewer, limit=51)
        shapes[f"{who}: history, later page"] = Listing(viewer=viewer, cursor=cursor, limit=51)
        shapes[f"{who}: history by status"] = Listing(viewer=viewer, statuses=("rejected",), limit=51)
    shapes["group member: inbox"] = Listing(viewer="olga", statuses=OPEN, limit=51)
    shapes["group member: history"] = Listing(viewer="olga", limit=51)
    shapes["agent: its requests"] = Listing(viewer="agent-1", created_by="agent-1", limit=51)
    shapes["agent: its open requests"] = Listing(viewer="agent-1", created_by="agent-1", statuses=OPEN)
    shapes["agent: one thread"] = Listing(viewer="agent-1", created_by="agent-1", thread_id="thread-3.5")
    for viewer, who in ((None, "admin"), ("bob", "member")):
        shapes[f"{who}: by tool"] = Listing(viewer=viewer, tool="deploy", limit=51)
        shapes[f"{who}: by agent and app"] = Listing(viewer=viewer, agent="travel", app="crm", limit=51)
        shapes[f"{who}: by thread"] = Listing(viewer=viewer, thread_id="thread-4.2.3")
        shapes[f"{who}: by approver"] = Listing(viewer=viewer, approver="group:ops", statuses=OPEN)
        shapes[f"{who}: text search"] = Listing(viewer=viewer, search="report", limit=51)
        shapes[f"{who}: text search, later page"] = Listing(viewer=viewer, search="report", cursor=cursor)
    return shapes


# -- the store, grown and analysed ------------------------------------------------------------


@pytest.fixture(params=["sqlite", "sqlite analysed", "postgres"], scope="module")
def grown(request: pytest.FixtureRequest) -> Iterator[tuple[Store, str]]:
    """The store, and a cursor half way down its history (where a later page starts: each
    seed request's copies sort right after it). SQLite as signoff leaves it (no statistics),
    and analysed; PostgreSQL analysed (as autovacuum does)."""
    if request.param.startswith("sqlite"):
        folder = request.getfixturevalue("tmp_path_factory").mktemp("plans")
        store = SQLiteStore(folder / "plans.db")
        try:
            seeds = make_mix(store, SEED_REQUESTS)
            grow_sqlite(store, analyse=request.param == "sqlite analysed")
            yield store, sorted(seeds)[len(seeds) // 2]
        finally:
            store.close()
        return
    from signoff.store.postgres import PostgresStore
    from tests.conftest import NO_POSTGRES, POSTGRES_DSN, drop_pg_schema, new_pg_schema

    if not POSTGRES_DSN:
        pytest.skip(NO_POSTGRES)
    schema = new_pg_schema()
    pg_store = PostgresStore(POSTGRES_DSN, schema=schema, max_size=2)
    try:
        seeds = make_mix(pg_store, SEED_REQUESTS)
        grow_postgres(POSTGRES_DSN, schema)
        yield pg_store, sorted(seeds)[len(seeds) // 2]
    finally:
        pg_store.close()
        drop_pg_schema(schema)


def copy_statements(columns: dict[str, list[str]], round_number: int) -> list[str]:
    """Copy every decided request (and its approvers) under new ids and thread ids: the history
    doubles while the requests waiting stay as few as in a real store."""
    changed = {
        "id": f"id || '.{round_number}'",
        "thread_id": f"thread_id || '.{round_number}'",
        "request_id": f"request_id || '.{round_number}'",
    }
    closed = "status NOT IN ('pending', 'drafting')"
    decided = {
        "requests": closed,
        "request_approvers": f"request_id IN (SELECT id FROM requests WHERE {closed})",
    }
    statements = []
    for table in TABLES:
        names = columns[table]
        values = ", ".join(changed.get(name, name) for name in names)
        statements.append(
            f"INSERT INTO {table} ({', '.join(names)}) SELECT {values} FROM {table} WHERE {decided[table]}"
        )
    return statements


def grow_sqlite(store: SQLiteStore, *, analyse: bool) -> None:
    import sqlite3

    connection = sqlite3.connect(store.path, isolation_level=None)
    try:
        columns = {
            table: [row[1] for row in connection.execute(f"PRAGMA table_info({table})")] for table in TABLES
        }
        connection.execute("BEGIN IMMEDIATE")
        for round_number in range(DOUBLINGS):
            for statement in copy_statements(columns, round_number):
                connection.execute(statement)
        connection.execute("COMMIT")
        if analyse:
            connection.execute("ANALYZE")
    finally:
        connection.close()


def grow_postgres(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as connection:
        columns = {
            table: [
                row[0]
                for row in connection.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
                    (schema, table),
                )
            ]
            for table in TABLES
        }
        with connection.transaction():
            for round_number in range(DOUBLINGS):
                for statement in copy_statements(columns, round_number):
                    connection.execute(statement.encode())
        for table in TABLES:
            connection.execute(f"VACUUM ANALYZE {table}".encode())


# -- explaining what the store asks -----------------------------------------------------------


class Explaining:
    """A transaction that explains the listing queries instead of running them."""

    def __init__(self, tx: Any, explain: Callable[[Any, str, dict[str, Any]], Any], plans: list[Any]) -> None:
        self._tx = tx
        self._explain = explain
        self._plans = plans

    def all(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        if query not in EXPLAINED and not query.startswith("list_visible"):
            return list(self._tx.all(query, **params))
        self._plans.append((query, self._explain(self._tx, query, params)))
        return []

    def one(self, query: str, /, **params: Any) -> dict[str, Any] | None:
        return self._tx.one(query, **params)  # type: ignore[no-any-return]


def explain_sqlite(tx: Any, query: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    """Each step of the plan, with the step it is part of."""
    from signoff.store.sqlite_tx import _param

    rows = tx._connection.execute(
        "EXPLAIN QUERY PLAN " + tx._queries[query], {key: _param(value) for key, value in params.items()}
    ).fetchall()
    steps = {row[0]: row[3] for row in rows}
    return [(row[3], steps.get(row[1], "")) for row in rows]


def explain_postgres(tx: Any, query: str, params: dict[str, Any]) -> Any:
    from signoff.store.postgres_tx import pg_param

    with tx._pool.connection() as connection:  # reads run on pooled connections (see PostgresStore)
        row = connection.execute(
            "EXPLAIN (FORMAT JSON) " + tx._queries[query],
            {key: pg_param(value) for key, value in params.items()},
        ).fetchone()
    plan = row["QUERY PLAN"]
    return json.loads(plan)[0]["Plan"] if isinstance(plan, str) else plan[0]["Plan"]


@contextmanager
def explaining(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    explain: Callable[[Any, str, dict[str, Any]], Any] | None = None,
) -> Iterator[list[tuple[str, Any]]]:
    plans: list[tuple[str, Any]] = []
    if explain is None:
        explain = explain_sqlite if isinstance(store, SQLiteStore) else explain_postgres
    real_read: Callable[[], AbstractContextManager[Any]] = store._read

    @contextmanager
    def read() -> Iterator[Explaining]:
        with real_read() as tx:
            yield Explaining(tx, explain, plans)

    with monkeypatch.context() as patch:
        patch.setattr(store, "_read", read)
        yield plans


PAGES = {
    "admin: nav badge": lambda store: count_waiting(store, User(name="admin", role="admin")),
    "member: nav badge": lambda store: count_waiting(store, User(name="olga", role="member")),
    "admin: overview, open by tool and agent": lambda store: store.open_counts(),
    "member: overview, open by tool and agent": lambda store: store.open_counts(visible_to="olga"),
    # the mix was made just now: a minute ahead is a range at the index's end, as a preview's
    # week is in a store keeping months
    "admin: rules preview's recorded calls": lambda store: list(
        store.recent_tool_calls(utcnow() + timedelta(minutes=1))
    ),
}


def ask(store: Store, shape: str, cursor: str) -> None:
    if shape in PAGES:
        PAGES[shape](store)
    else:
        listings(cursor)[shape].run(store)


# -- what a plan may do -----------------------------------------------------------------------

_TABLE_ALIAS = re.compile(
    r"\b(?:FROM|JOIN)\s+(requests|request_approvers)\b(?:\s+(?:AS\s+)?"
    r"(?!(?:WHERE|JOIN|ON|ORDER|GROUP|LIMIT|UNION|USING|LEFT|INNER|CROSS)\b)(\w+))?",
    re.IGNORECASE,
)


def table_aliases(sql: str) -> set[str]:
    """The names under which the query reads `requests` and `request_approvers`."""
    return {alias or table for table, alias in _TABLE_ALIAS.findall(sql)}


def sqlite_full_reads(query: str, plan: list[tuple[str, str]]) -> list[str]:
    """SCANs of the two tables; and a range read whole to be sorted, in a branch that should
    stop at a page (a correlated subquery of `candidates`)."""
    from signoff.store.queries import load_queries

    aliases = table_aliases(load_queries("sqlite")[query])
    found = []
    for step, part_of in plan:
        scan = re.match(r"SCAN (\w+)", step)
        if scan and scan.group(1) in aliases:
            found.append(step)
        if step.startswith("USE TEMP B-TREE FOR ORDER BY") and part_of.startswith("CORRELATED LIST SUBQUERY"):
            found.append(f"{step} in {part_of}")
    return found


def postgres_full_reads(plan: dict[str, Any], parent: dict[str, Any] | None = None) -> list[str]:
    """Seq Scans of the two tables, and index scans without a condition (a whole index) unless
    they stop at a limit having skipped nothing (the text search's window)."""
    found = []
    if plan.get("Relation Name") in TABLES:
        node = plan["Node Type"]
        whole_index = node in ("Index Scan", "Index Only Scan") and "Index Cond" not in plan
        bounded = parent is not None and parent["Node Type"] == "Limit" and "Filter" not in plan
        if node == "Seq Scan" or (whole_index and not bounded):
            found.append(f"{node} on {plan['Relation Name']} {plan.get('Index Name', '')}".rstrip())
    for child in plan.get("Plans", []):
        found.extend(postgres_full_reads(child, plan))
    return found


def full_reads(store: Store, query: str, plan: Any) -> list[str]:
    return sqlite_full_reads(query, plan) if isinstance(store, SQLiteStore) else postgres_full_reads(plan)


# -- the tests --------------------------------------------------------------------------------


SHAPES = [*listings(""), *PAGES]


def test_the_store_is_big_enough_to_plan_for(grown: tuple[Store, str]) -> None:
    store, cursor = grown
    assert len(store.list_requests(limit=1000)) == 1000
    assert len(store.list_requests(visible_to="newbie", limit=1000)) == 1000
    assert len(store.list_requests(cursor=cursor, limit=1000)) == 1000


@pytest.mark.parametrize("shape", SHAPES)
def test_listings_read_index_ranges_only(
    grown: tuple[Store, str], shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, cursor = grown
    with explaining(store, monkeypatch) as plans:
        ask(store, shape, cursor)
    assert plans, f"{shape}: the store asked no listing query"
    for query, plan in plans:
        assert full_reads(store, query, plan) == [], f"{shape}: {query} reads a whole table:\n{plan}"


@pytest.mark.parametrize("query", ["count_auto_decisions", "count_auto_rounds"])
def test_an_unattended_cap_reads_one_threads_rows_not_all_of_its_agents(
    sqlite_store: SQLiteStore, query: str
) -> None:
    from signoff.store.queries import load_queries

    sql = load_queries("sqlite")[query]
    params = {"created_by": "agent-07", "thread_id": "cron", "besides": None}
    with sqlite_store._read() as tx:
        plan = [row[3] for row in tx._connection.execute(f"EXPLAIN QUERY PLAN {sql}", params)]  # type: ignore[attr-defined]
    assert any("(thread_id=?" in step for step in plan), plan


ADMIN_SHAPES = {
    "admin: inbox": "list_by_status",
    "admin: history": "list_newest",
    "admin: history, later page": "list_newest",
    "admin: history by status": "list_by_status",
    "admin: by tool": "list_newest_narrowed",
    "admin: by agent and app": "list_newest_narrowed",
}


@pytest.mark.parametrize("generic", [False, True], ids=["custom plans", "generic plans"])
@pytest.mark.parametrize("shape", list(ADMIN_SHAPES))
def test_an_admins_unfiltered_listings_read_the_key_or_the_status_ranges(
    grown: tuple[Store, str], shape: str, generic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They skip the visibility union (one of every status that a tool, an agent or an app
    narrows reads the key, checking each row), and stay on index ranges under a prepared statement's
    generic plan too (PostgreSQL settles on one after a connection has run a statement a few times)."""
    store, cursor = grown
    if generic and isinstance(store, SQLiteStore):
        pytest.skip("SQLite has no generic plans")
    with explaining(store, monkeypatch, explain_postgres_generic if generic else None) as plans:
        ask(store, shape, cursor)
    assert [query for query, _ in plans] == [ADMIN_SHAPES[shape]]
    for query, plan in plans:
        assert full_reads(store, query, plan) == [], f"{shape}: {query} reads a whole table:\n{plan}"


def explain_postgres_generic(tx: Any, query: str, params: dict[str, Any]) -> Any:
    """The plan a prepared statement gets once PostgreSQL settles on a generic one."""
    from psycopg import sql

    from signoff.store.postgres_tx import pg_param

    names: list[str] = []
    for name in re.findall(r"%\((\w+)\)s", tx._queries[query]):
        if name not in names:
            names.append(name)
    prepared = re.sub(r"%\((\w+)\)s", lambda match: f"${names.index(match.group(1)) + 1}", tx._queries[query])
    with tx._pool.connection() as connection:
        connection.execute("SET plan_cache_mode = force_generic_plan")
        connection.execute(f"PREPARE generic_listing AS {prepared}".replace("%%", "%"))
        try:
            values = sql.SQL(", ").join(sql.Literal(pg_param(params[name])) for name in names)
            row = connection.execute(
                sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE generic_listing ({})").format(values)
            ).fetchone()
        finally:
            connection.execute("DEALLOCATE generic_listing")
            connection.execute("RESET plan_cache_mode")
    plan = row["QUERY PLAN"]
    return json.loads(plan)[0]["Plan"] if isinstance(plan, str) else plan[0]["Plan"]


LATER_PAGES = {
    "admin: history, later page": Listing(cursor="", limit=51),
    "member: history, later page": Listing(viewer="olga", cursor="", limit=51),
    "member: by tool, later page": Listing(viewer="bob", tool="deploy", cursor="", limit=51),
    "member: by approver, later page": Listing(viewer="bob", approver="group:ops", cursor="", limit=51),
    "agent: its requests, later page": Listing(viewer="agent-1", created_by="agent-1", cursor="", limit=51),
    "member: text search, later page": Listing(viewer="bob", search="report", cursor="", limit=51),
}


RANGE_INDEXES = frozenset({"requests_by_audience", "requests_by_creator", "request_approvers_by_principal"})


def postgres_ranges_past_the_cursor(plan: dict[str, Any]) -> list[str]:
    """Reads of the listings' ranges that the cursor does not bound: from the range's newest
    entry (the cursor only filtering what is read), or into a bitmap (the range read whole).
    A lookup of one request's row (`request_id = r.id`) is no range."""
    found = []
    if plan.get("Index Name") in RANGE_INDEXES:
        condition = plan.get("Index Cond", "")
        if plan["Node Type"] == "Bitmap Index Scan" or not re.search(
            r"\b(?:request_)?id (?:<|<=|=) ", condition
        ):
            found.append(f"{plan['Node Type']} on {plan['Index Name']}: {condition}")
    for child in plan.get("Plans", []):
        found.extend(postgres_ranges_past_the_cursor(child))
    return found


@pytest.mark.parametrize("generic", [False, True], ids=["custom plans", "generic plans"])
@pytest.mark.parametrize("shape", list(LATER_PAGES))
def test_a_later_page_reads_its_ranges_from_the_cursor(
    grown: tuple[Store, str], shape: str, generic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a later page's ranges start at the cursor, under a prepared statement's
    generic plan too (where `cursor IS NULL OR id < cursor` cannot bound an index range)."""
    store, cursor = grown
    if isinstance(store, SQLiteStore):
        pytest.skip("SQLite has no generic plans; its cursor bounds are checked by the plans above")
    listing = dataclasses.replace(LATER_PAGES[shape], cursor=cursor)
    with explaining(store, monkeypatch, explain_postgres_generic if generic else None) as plans:
        listing.run(store)
    assert plans, f"{shape}: the store asked no listing query"
    for query, plan in plans:
        assert postgres_ranges_past_the_cursor(plan) == [], f"{shape}: {query} reads past the cursor:\n{plan}"


@pytest.mark.parametrize("shape", SHAPES)
def test_listings_read_index_ranges_only_in_generic_plans_too(
    grown: tuple[Store, str], shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL settles on a prepared statement's generic plan after a connection has run it a
    few times: planned without the parameters' values, each listing still reads index ranges."""
    store, cursor = grown
    if isinstance(store, SQLiteStore):
        pytest.skip("SQLite has no generic plans")
    with explaining(store, monkeypatch, explain_postgres_generic) as plans:
        ask(store, shape, cursor)
    assert plans, f"{shape}: the store asked no listing query"
    for query, plan in plans:
        assert full_reads(store, query, plan) == [], f"{shape}: {query} reads a whole table:\n{plan}"


PERSON_SHAPES = [
    "member named nowhere: history",
    "busy approver: inbox",
    "busy approver: history",
    "busy approver: history, later page",
    "busy approver: history by status",
    "group member: inbox",
    "group member: history",
    "member: nav badge",
    "member: by tool",
    "member: by agent and app",
]


def postgres_merges(plan: dict[str, Any]) -> bool:
    """The ranges merged newest first (a Merge Append, not a sort of them all), each arm an index
    range: read backward; or, where the planner expects a row or two, found through another
    index and sorted; or none at all (a status not asked, a principal slot left empty)."""

    def arm_reads_a_range(arm: dict[str, Any]) -> bool:
        if arm["Node Type"] in ("Result", "Sort") and arm.get("Plans"):
            return arm_reads_a_range(arm["Plans"][0])
        if arm["Node Type"] == "Result":
            return True
        if arm["Node Type"] not in ("Index Scan", "Index Only Scan") or "Index Cond" not in arm:
            return False
        return arm["Scan Direction"] == "Backward" or arm["Plan Rows"] <= 2

    if plan["Node Type"] == "Merge Append":
        return all(arm_reads_a_range(arm) for arm in plan["Plans"])
    return any(postgres_merges(child) for child in plan.get("Plans", []))


@pytest.mark.parametrize("generic", [False, True], ids=["custom plans", "generic plans"])
@pytest.mark.parametrize("shape", PERSON_SHAPES)
def test_a_persons_listing_merges_their_ranges(
    grown: tuple[Store, str], shape: str, generic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's listing that nothing narrows but what they may see, a tool, an agent or an
    app reads their ranges through `list_visible` (a variant for their number of principals):
    each range from its index, all merged newest first (nothing sorted, no page read per
    range), and the page's rows by their key. On SQLite the ranges are read from the indexes
    alone when nothing narrows them."""
    store, cursor = grown
    if generic and isinstance(store, SQLiteStore):
        pytest.skip("SQLite has no generic plans")
    with explaining(store, monkeypatch, explain_postgres_generic if generic else None) as plans:
        ask(store, shape, cursor)
    assert len(plans) == 1 and plans[0][0].startswith("list_visible"), plans
    query, plan = plans[0]
    assert full_reads(store, query, plan) == [], plan
    if not isinstance(store, SQLiteStore):
        assert postgres_merges(plan), plan
        return
    steps = [step for step, _ in plan]
    assert not [step for step in steps if "TEMP B-TREE" in step], steps
    assert any(step.startswith("MERGE (UNION)") for step in steps), steps
    ranges = [step for step in steps if step.startswith("SEARCH") and "(id=?)" not in step]
    assert ranges, steps
    if "narrowed" not in query:
        assert all("USING COVERING INDEX" in step for step in ranges), ranges


def test_a_person_in_many_groups_is_listed_through_the_union() -> None:
    params = listing_params(statuses=None, viewer="olga", principals=["olga", "group:a"])
    assert listing_query(params) == "list_visible_2"
    many = ["olga", *(f"group:{n}" for n in range(VISIBLE_PRINCIPALS))]
    assert listing_query(listing_params(statuses=None, viewer="olga", principals=many)) == "list_requests"
    narrowed = listing_params(statuses=None, viewer="olga", principals=["olga"], tool="deploy")
    assert listing_query(narrowed) == "list_visible_narrowed_1"
    by_thread = listing_params(statuses=None, viewer="olga", principals=["olga"], thread_id="t")
    assert listing_query(by_thread) == "list_requests"
    nobody = listing_params(statuses=None, viewer="olga", principals=[])
    assert listing_query(nobody) == "list_visible_1"
    long_page = listing_params(statuses=None, viewer="olga", principals=["olga"], limit=VISIBLE_PAGE + 1)
    assert listing_query(long_page) == "list_requests"


def vm_steps(store: SQLiteStore, listing: Listing) -> int:
    """SQLite's virtual machine steps (in thousands) to run a listing: what it reads, counted."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    with store._read() as tx:
        tx._connection.set_progress_handler(count, 1000)  # type: ignore[attr-defined]
        try:
            listing.run(store)
        finally:
            tx._connection.set_progress_handler(None, 0)  # type: ignore[attr-defined]
    return steps


def test_sqlite_reads_no_range_of_a_status_not_asked(grown: tuple[Store, str]) -> None:
    """`list_visible`'s arm of a status not asked stops before reading (its `:status_mask` test
    is constant, made once): one status costs no more than every status merged, where it would
    cost a whole range per status if the test were made on each row (some 15 times as much)."""
    store, _ = grown
    if not isinstance(store, SQLiteStore):
        pytest.skip("SQLite's statement")
    one = vm_steps(store, Listing(viewer="alice", statuses=("rejected",), limit=51))
    every = vm_steps(store, Listing(viewer="alice", limit=51))
    assert one <= every
