"""The event feed of one replica while other replicas write to the same PostgreSQL: events arrive
once, in order per request, also after the listening connection was cut off; and a replica that
nobody follows reads nothing for the others' changes, however many replicas write."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from signoff import Approve
from signoff.identity import User
from signoff.server import events
from signoff.server.events import EventFeed
from signoff.store import Store, postgres
from signoff.store.postgres import PostgresStore
from signoff.store.wakeup import ANY, Changes

from .conftest import POSTGRES_DSN
from .test_store_requests import new_request

ADMIN = User(name="root", role="admin")
AGENT = User(name="followed-agent", role="agent")
Seen = list[tuple[int, str, str]]
"""(seq, event type, request id) in the order a stream gave them."""


@pytest.fixture
def replicas(pg_store: Store) -> Iterator[Callable[[], PostgresStore]]:
    """Opens more stores on `pg_store`'s schema, as other replicas would; closes them after."""
    opened: list[PostgresStore] = []

    def open_one() -> PostgresStore:
        assert POSTGRES_DSN is not None and isinstance(pg_store, PostgresStore)
        store = PostgresStore(POSTGRES_DSN, schema=pg_store.schema, max_size=2, migrate=False)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


class FeedThread:
    """An `EventFeed` on its own event loop in a thread, as a server runs it."""

    def __init__(self, store: Store) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.feed = EventFeed(store)
        self.call(self.feed.start())

    def call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def follow(self, user: User, *, after: int | None = None) -> tuple[Seen, threading.Event]:
        """Open a stream (resuming after `after`); its events gather in the list, and the event
        is set once it has named its start point."""
        seen: Seen = []
        started = threading.Event()

        async def read() -> None:
            async for text in self.feed.stream(user, after=after):
                fields = dict(line.split(": ", 1) for line in text.strip().splitlines() if ": " in line)
                if "data" in fields:
                    request_id = json.loads(fields["data"])["request"]["id"]
                    seen.append((int(fields["id"]), fields["event"], request_id))
                elif "id" in fields:
                    started.set()

        asyncio.run_coroutine_threadsafe(read(), self.loop)
        assert started.wait(10), "the stream named its start point"
        return seen, started

    def close(self) -> None:
        self.call(self.feed.stop())
        self.call(_cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


async def _cancel_the_rest() -> None:
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


@contextmanager
def feed_of(store: Store) -> Iterator[FeedThread]:
    running = FeedThread(store)
    try:
        yield running
    finally:
        running.close()


def write(writers: list[PostgresStore], each: int, *, agent: str | None = None) -> list[str]:
    """Every writer creates and decides `each` requests, all at once (as `agent`, or an agent
    of its own); the ids, in no order."""

    def one_writer(store: PostgresStore) -> list[str]:
        ids = []
        actor = agent or f"agent-{id(store)}"
        for _ in range(each):
            request, _ = store.create_request(
                new_request(tool_call_id=f"call-{uuid.uuid4().hex}", actor=actor)
            )
            store.decide(request.id, Approve(), actor="alice")
            ids.append(request.id)
        return ids

    with ThreadPoolExecutor(len(writers)) as pool:
        return [rid for ids in pool.map(one_writer, writers) for rid in ids]


def wait_for(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def arrived(seen: Seen, ids: list[str]) -> Callable[[], bool]:
    """Whether the stream has as many events of `ids` as a create and a decide of each make."""
    return lambda: sum(rid in ids for _, _, rid in seen) >= 2 * len(ids)


def assert_once_in_order(seen: Seen, ids: list[str]) -> None:
    """Each request's created then decided event, each once; seqs rising along the stream."""
    by_request: dict[str, list[str]] = {}
    for _, kind, rid in seen:
        by_request.setdefault(rid, []).append(kind)
    assert {rid: by_request.get(rid) for rid in ids} == {rid: ["created", "decided"] for rid in ids}
    seqs = [seq for seq, _, _ in seen]
    assert seqs == sorted(set(seqs))


LOOKS = ("seal_audit", "audit_last_seq")
"""A look at the log's end: a row from each statement, however much is read after it. Other runs
on the same database send NOTIFYs on the same channel, naming no creator: each costs a look."""


def rows_beyond_looks(store: PostgresStore) -> int:
    return store.rows_read.rows - store.rows_read.of(*LOOKS)


def settled(store: PostgresStore, replicas: Callable[[], PostgresStore]) -> None:
    """Wait until `store`'s listener has heard everything written so far: a change made after it
    reaches a waiter of `store`, and the feed's wake-up pause has passed."""
    request, _ = store.create_request(new_request(tool_call_id=f"mark-{uuid.uuid4().hex}"))
    waiter = store.subscribe(request.id)
    try:
        replicas().decide(request.id, Approve(), actor="alice")
        assert waiter.wait(10), "the mark's NOTIFY arrived"
    finally:
        store.unsubscribe(waiter)
    time.sleep(0.2)  # the feed, woken by the same NOTIFYs, has had its turn to read (or not)


def test_events_from_three_replicas_arrive_once_and_in_order(
    pg_store: Store, replicas: Callable[[], PostgresStore]
) -> None:
    reader = replicas()
    writers = [replicas() for _ in range(3)]
    with feed_of(reader) as running:
        seen, _ = running.follow(ADMIN)
        ids = write(writers, 8)
        wait_for(arrived(seen, ids), "every event arrived")
        settled(reader, replicas)
    assert_once_in_order([item for item in seen if item[2] in ids], ids)


def test_a_replica_nobody_follows_reads_nothing_for_other_replicas_writes(
    pg_store: Store, replicas: Callable[[], PostgresStore]
) -> None:
    """The rows the reader's statements return, counted, while one writer and then three write
    (each the same number of requests): none for the feed, none more with more writers."""
    reader = replicas()
    writers = [replicas() for _ in range(3)]
    with feed_of(reader):
        watched, _ = reader.create_request(new_request(tool_call_id="watched"))
        waiter = reader.subscribe(watched.id)  # its listener runs, and the feed is woken by every change
        try:
            settled(reader, replicas)
            read = []
            for count in (1, 3):
                before = reader.rows_read.rows
                write(writers[:count], 6)
                settled(reader, replicas)
                read.append(reader.rows_read.rows - before)
        finally:
            reader.unsubscribe(waiter)
    marks = 1  # `settled` creates one request on the reader: its insert returns a row
    assert read == [marks, marks]


def test_an_agents_stream_costs_its_replica_no_reads_of_other_agents_requests(
    pg_store: Store, replicas: Callable[[], PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's only stream is an agent's: the NOTIFYs of other agents' requests name their
    creators, and the reader reads no entry and no request for them, with one writer or three;
    its own agent's requests still arrive, once each. (The feed's periodic look at the log is put
    off here: it reads once a second however many replicas write.)"""
    monkeypatch.setattr(events, "RECHECK_SECONDS", 3600.0)
    reader = replicas()
    writers = [replicas() for _ in range(3)]
    with feed_of(reader) as running:
        seen, _ = running.follow(AGENT)
        settled(reader, replicas)
        read = []
        for count in (1, 3):
            before = rows_beyond_looks(reader)
            write(writers[:count], 6)
            settled(reader, replicas)
            read.append(rows_beyond_looks(reader) - before)
        own = write(writers[:2], 2, agent=AGENT.name)
        wait_for(arrived(seen, own), "the agent's own requests arrived")
        settled(reader, replicas)
    marks = 1  # `settled` creates one request on the reader: its insert returns a row
    assert read == [marks, marks]
    assert_once_in_order(seen, own)


def test_a_stream_opened_after_a_pause_starts_at_the_head_and_resumes_from_the_log(
    pg_store: Store, replicas: Callable[[], PostgresStore]
) -> None:
    """Changes made while nobody followed this replica were not read by its feed; a stream opened
    afterwards starts at the log's head (none of them live), and one that resumes from before
    them gets each from the log, once, then the live ones."""
    reader = replicas()
    writers = [replicas() for _ in range(2)]
    with feed_of(reader) as running:
        before = reader.audit_head_seq()
        missed = write(writers, 4)
        settled(reader, replicas)
        fresh, _ = running.follow(ADMIN)
        resumed, _ = running.follow(ADMIN, after=before)
        live = write(writers, 3)
        wait_for(arrived(fresh, live), "the live events arrived")
        wait_for(arrived(resumed, live), "the resumed stream's too")
        settled(reader, replicas)
    assert not [item for item in fresh if item[2] in missed]
    assert_once_in_order([item for item in fresh if item[2] in live], live)
    assert_once_in_order([item for item in resumed if item[2] in missed + live], missed + live)


def test_an_agent_resuming_its_stream_reads_only_its_own_requests_entries(
    pg_store: Store, replicas: Callable[[], PostgresStore]
) -> None:
    """An agent that comes back with `Last-Event-ID` after other agents' work gets its own
    events from the log; the reader reads its entries alone, not the others'."""
    reader = replicas()
    writers = [replicas() for _ in range(2)]
    with feed_of(reader) as running:
        before = reader.audit_head_seq()
        write(writers, 5)
        own = write(writers[:1], 2, agent=AGENT.name)
        settled(reader, replicas)
        entries_read = reader.rows_read.of("audit_events_upto")
        seen, _ = running.follow(AGENT, after=before)
        entries_read = reader.rows_read.of("audit_events_upto") - entries_read
    assert_once_in_order(seen, own)
    assert entries_read == 2 * len(own)


def test_a_feed_whose_listener_was_cut_off_catches_up_from_its_cursor(
    pg_store: Store, replicas: Callable[[], PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's listening connection is terminated and kept away while two replicas write
    (their NOTIFYs reach nobody); once it is back, the stream has every event, once, in order."""
    name = f"signoff-listen-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(postgres, "LISTENER_NAME", name)
    may_connect = threading.Event()
    may_connect.set()
    reconnecting = threading.Event()
    connect = psycopg.connect

    def gated(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("application_name") == name and not may_connect.is_set():
            reconnecting.set()
            may_connect.wait(20)
        return connect(*args, **kwargs)

    monkeypatch.setattr(postgres.psycopg, "connect", gated)
    reader = replicas()
    writers = [replicas() for _ in range(2)]
    assert POSTGRES_DSN is not None
    with feed_of(reader) as running:
        seen, _ = running.follow(ADMIN)
        first = write(writers, 3)
        wait_for(arrived(seen, first), "the first events arrived")
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            listener = admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchall()
            assert listener, "the reader listens"
            may_connect.clear()
            admin.execute("SELECT pg_terminate_backend(%s)", (listener[0][0],))
        try:
            assert reconnecting.wait(10), "the listener tries again after its backend was terminated"
            unheard = write(writers, 3)
        finally:
            may_connect.set()
        later = write(writers, 2)
        ids = first + unheard + later
        wait_for(arrived(seen, ids), "every event arrived")
        settled(reader, replicas)
    assert_once_in_order([item for item in seen if item[2] in ids], ids)


def test_the_feed_looks_at_the_log_only_for_changes_its_followers_may_see(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the NOTIFYs named decides whether the feed reads at all: not for another agent's
    request; for its follower's own, for one whose creator was not named, and when anything may
    have changed (a listener that reconnected)."""
    looks: list[dict[str, Any]] = []

    def audit_events(**where: Any) -> tuple[list[Any], int]:
        looks.append(where)
        return [], where["after"]

    monkeypatch.setattr(sqlite_store, "audit_events", audit_events)
    feed = EventFeed(sqlite_store)
    changes = Changes()

    async def follow() -> list[int]:
        feed.subscribe(AGENT)
        await feed.start_point()
        feed._last_read = time.monotonic()  # the periodic look is not due
        counted = []
        for request_ids, creators in (
            (["r1", "r2"], {"r1": "another-agent", "r2": "a-third"}),
            (["r3"], {"r3": AGENT.name}),
            (["r4"], {}),
            ([ANY], {}),
        ):
            changes.note(request_ids, creators)
            await feed._catch_up(changes)
            counted.append(len(looks))
        return counted

    assert asyncio.run(follow()) == [0, 1, 2, 3]
    assert {where["creators"] for where in looks} == {frozenset({AGENT.name})}
