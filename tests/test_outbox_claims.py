"""Claiming outbox rows: each row is one worker's (PostgreSQL: `FOR UPDATE SKIP LOCKED` across
servers), and a worker that dies holding rows loses them when its lease runs out."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest

from signoff._util import utcnow
from signoff.channels import ChannelRegistry
from signoff.destinations import Destinations
from signoff.outbox import DeliveryWorker, OutboxSettings, RetryPolicy
from signoff.requests import NewRequest
from signoff.store import Store
from signoff.store.outbox_ops import Outcome

from .conftest import POSTGRES_DSN
from .receivers import Receiver

LOCAL = Destinations(allow_private=True)
"""The receivers are on 127.0.0.1."""


def make_requests(store: Store, count: int) -> None:
    for index in range(count):
        store.create_request(
            NewRequest(
                thread_id="claims",
                tool_call_id=f"c{index}",
                tool_name="deploy",
                args={"n": index},
                description="Deploy",
                deadline=utcnow() + timedelta(hours=1),
            )
        )


def test_a_dead_workers_rows_are_taken_again_after_its_lease(store: Store) -> None:
    store.add_webhook("http://127.0.0.1:9/x", events=["request.created"], allow_private=True, actor="test")
    make_requests(store, 1)
    [row] = store.claim_outbox("dies", lease=timedelta(milliseconds=300))
    assert store.claim_outbox("lives", lease=timedelta(minutes=1)) == []
    time.sleep(0.4)
    [again] = store.claim_outbox("lives", lease=timedelta(minutes=1))
    assert again.id == row.id and again.claimed_by == "lives"
    sent = Outcome(state="sent", result="sent", target="x", next_at=utcnow())
    assert store.finish_outbox(row, "dies", sent) is False  # too late: not its row any more
    assert store.finish_outbox(again, "lives", sent) is True
    assert store.claim_outbox("lives", lease=timedelta(minutes=1)) == []


@pytest.fixture
def second_pg_store(pg_store: Store) -> Store:
    from signoff.store.postgres import PostgresStore

    assert POSTGRES_DSN is not None
    other = PostgresStore(POSTGRES_DSN, schema=pg_store.schema, max_size=4)  # type: ignore[attr-defined]
    yield other  # type: ignore[misc]
    other.close()


def test_two_postgres_workers_never_claim_the_same_row(pg_store: Store, second_pg_store: Store) -> None:
    pg_store.add_webhook("http://127.0.0.1:9/x", events=["request.created"], allow_private=True, actor="test")
    make_requests(pg_store, 300)
    claimed: dict[str, list[int]] = {"a": [], "b": []}
    start = threading.Barrier(2)

    def work(name: str, store: Store) -> None:
        start.wait()
        while rows := store.claim_outbox(name, lease=timedelta(minutes=1), limit=7):
            claimed[name].extend(row.id for row in rows)

    threads = [
        threading.Thread(target=work, args=("a", pg_store)),
        threading.Thread(target=work, args=("b", second_pg_store)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not set(claimed["a"]) & set(claimed["b"])
    assert len(claimed["a"]) + len(claimed["b"]) == 300
    assert claimed["a"] and claimed["b"], "both workers took part"


def test_two_postgres_servers_workers_deliver_each_event_once(
    pg_store: Store, second_pg_store: Store
) -> None:
    with Receiver() as receiver:
        pg_store.add_webhook(receiver.url, events=["request.created"], allow_private=True, actor="test")
        make_requests(pg_store, 120)
        settings = OutboxSettings(poll=0.05, retry=RetryPolicy.quick(), batch=10)

        async def both() -> None:
            workers = [
                DeliveryWorker(pg_store, ChannelRegistry(), settings, name="one", destinations=LOCAL),
                DeliveryWorker(second_pg_store, ChannelRegistry(), settings, name="two", destinations=LOCAL),
            ]
            for worker in workers:
                await worker.start()
            give_up = time.monotonic() + 60
            while len(receiver.delivered) < 120 and time.monotonic() < give_up:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            for worker in workers:
                await worker.stop()
            assert workers[0].sent + workers[1].sent == 120

        asyncio.run(both())
        ids = Counter(post.headers["webhook-id"] for post in receiver.posts)
    assert len(ids) == 120
    assert set(ids.values()) == {1}
