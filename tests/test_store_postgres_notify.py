"""PostgreSQL's NOTIFY carries an ended request (migration 0025): a waiter in another replica
resumes on it without reading the request again, and anything the payload cannot carry still
wakes the waiter, who reads."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from signoff import Approve, Reject, RequestStatus, Store
from signoff.requests import Request
from signoff.rules.effective import RequestRule
from signoff.store.notified import notified
from signoff.store.wakeup import ANY
from signoff.waiting import watch_async, watch_blocking

from .conftest import POSTGRES_DSN
from .test_store_requests import new_request


@pytest.fixture
def replica(pg_store: Store) -> Any:
    """Another replica on the same database."""
    from signoff.store.postgres import PostgresStore

    assert POSTGRES_DSN is not None and isinstance(pg_store, PostgresStore)
    other = PostgresStore(POSTGRES_DSN, schema=pg_store.schema, max_size=2, migrate=False)
    yield other
    other.close()


def listening(store: Store, replica: Store) -> None:
    """Once the store's listener listens, a commit's NOTIFY reaches it: a request the replica
    makes (or the listener's own wake-up of everyone when it starts) wakes an `ANY` waiter."""
    waiter = store.subscribe(ANY)
    try:
        for attempt in range(60):
            replica.create_request(new_request(tool_call_id=f"listening-{attempt}"))
            if waiter.wait(1):
                return
        raise AssertionError("the listener never listened")
    finally:
        store.unsubscribe(waiter)


def ended_after(store: Store, replica: Store, request: Request, decide: Any) -> Request | None:
    """What the waiter of `request` was handed once every NOTIFY up to `decide`'s has arrived:
    the replica then decides a marker request, whose NOTIFY comes after them (one listening
    connection gets them in commit order, and its thread fires each before the next)."""
    listening(store, replica)
    waiter = store.subscribe(request.id)
    try:
        decide()
        marker, _ = replica.create_request(new_request(tool_call_id=f"marker-{request.id}"))
        marked = store.subscribe(marker.id)
        try:
            replica.decide(marker.id, Approve(), actor="alice", channel="bench")
            assert marked.wait(30), "the marker's decision never arrived"
        finally:
            store.unsubscribe(marked)
        assert waiter.wait(0), "the decision never woke the waiter"
        return waiter.ended
    finally:
        store.unsubscribe(waiter)


@pytest.mark.parametrize("decision", [Approve(comment="fine"), Reject(message="not today")])
def test_a_decision_in_another_replica_carries_the_request_as_read(
    pg_store: Store, replica: Store, decision: Any
) -> None:
    request, _ = pg_store.create_request(new_request(args={"to": "a@example.com", "n": [1, {"b": 2.5}]}))
    ended = ended_after(
        pg_store,
        replica,
        request,
        lambda: replica.decide(request.id, decision, actor="alice", channel="bench"),
    )
    assert ended is not None
    assert ended.is_terminal
    assert ended == pg_store.get_request(request.id)


def test_a_row_too_long_for_notify_wakes_the_waiter_who_reads(pg_store: Store, replica: Store) -> None:
    request, _ = pg_store.create_request(new_request(args={"to": "a@example.com", "subject": "x" * 9000}))
    ended = ended_after(
        pg_store,
        replica,
        request,
        lambda: replica.decide(request.id, Approve(), actor="alice", channel="bench"),
    )
    assert ended is None
    assert pg_store.get_request(request.id).status is RequestStatus.APPROVED


def test_a_quorum_vote_carries_no_request(pg_store: Store, replica: Store) -> None:
    request, _ = pg_store.create_request(new_request(rule=RequestRule(approvers=("alice", "bob"), quorum=2)))
    replica.decide(request.id, Approve(), actor="alice", channel="bench")
    ended = ended_after(
        pg_store,
        replica,
        request,
        lambda: replica.decide(request.id, Approve(), actor="bob", channel="bench"),
    )
    assert ended is None
    assert pg_store.get_request(request.id).approvals == ("alice", "bob")


def test_the_waiter_resumes_on_the_carried_request_without_reading_again(
    pg_store: Store, replica: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    request, _ = pg_store.create_request(new_request())
    reads: list[str] = []
    first_read = threading.Event()
    read = pg_store.get_request

    def counted(request_id: str) -> Request:
        current = read(request_id)
        reads.append(request_id)
        first_read.set()
        return current

    listening(pg_store, replica)
    monkeypatch.setattr(pg_store, "get_request", counted)
    resumed: list[Request] = []
    waiting = threading.Thread(
        target=lambda: resumed.append(watch_blocking(pg_store, request.id, give_up=None))
    )
    waiting.start()
    assert first_read.wait(30)
    replica.decide(request.id, Approve(), actor="alice", channel="bench")
    waiting.join(30)
    assert resumed and resumed[0].status is RequestStatus.APPROVED
    assert reads == [request.id]


@pytest.mark.parametrize(
    "payload",
    ["req_1\tagent\t{not json", 'req_1\tagent\t{"id": "req_1"}', "req_1\tagent\t[]"],
)
def test_a_row_that_cannot_be_read_is_only_a_wake_up(payload: str) -> None:
    assert notified(payload) == ("req_1", "agent", None)


def test_the_older_payloads_still_read() -> None:
    assert notified("req_1") == ("req_1", "", None)
    assert notified("req_1\tagent") == ("req_1", "agent", None)


def test_an_async_waiter_resumes_on_the_carried_request_without_reading_again(
    pg_store: Store, replica: Store
) -> None:
    request, _ = pg_store.create_request(new_request())
    listening(pg_store, replica)
    reads: list[str] = []

    async def waiting() -> Request:
        first_read = asyncio.Event()
        loop = asyncio.get_running_loop()

        async def run(fn: Any, *args: Any) -> Any:
            result = await asyncio.to_thread(fn, *args)
            if fn == pg_store.get_request:
                reads.append(args[0])
                first_read.set()
            return result

        watching = asyncio.create_task(watch_async(pg_store, request.id, give_up=None, run=run))
        await first_read.wait()
        await loop.run_in_executor(
            None, lambda: replica.decide(request.id, Approve(), actor="alice", channel="bench")
        )
        return await asyncio.wait_for(watching, 30)

    resumed = asyncio.run(waiting())
    assert resumed.status is RequestStatus.APPROVED
    assert reads == [request.id]


def test_a_fault_while_relaying_restarts_the_listener(
    pg_store: Store, replica: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An error the relay did not expect (here: reading a payload) is logged and the listener
    listens again; it used to end the thread, leaving waiters to the 2 s poll for good."""
    from signoff.store import postgres

    listening(pg_store, replica)
    faults = iter([RuntimeError("a bad payload")])

    def failing_once(payload: str) -> Any:
        fault = next(faults, None)
        if fault is not None:
            raise fault
        return notified(payload)

    monkeypatch.setattr(postgres, "notified", failing_once)
    with caplog.at_level("ERROR", logger=postgres.log.name):
        replica.create_request(new_request(tool_call_id="the-faulty-one"))
        for _ in range(200):
            if "the PostgreSQL listener failed" in caplog.text:
                break
            threading.Event().wait(0.05)
    assert "the PostgreSQL listener failed" in caplog.text
    request, _ = pg_store.create_request(new_request(tool_call_id="after-the-fault"))
    ended = ended_after(
        pg_store,
        replica,
        request,
        lambda: replica.decide(request.id, Approve(), actor="alice", channel="bench"),
    )
    assert ended is not None and ended.id == request.id and ended.status == RequestStatus.APPROVED
