"""An event feed nobody follows is not told of changes at all: it leaves the store's wake-ups, so
SQLite's change watcher does not read each commit's log entries for nobody; the first stream
after the pause starts at the log's head and gets every change after it."""

from __future__ import annotations

import asyncio
import uuid

from signoff import Approve
from signoff.store import Store
from signoff.store.sqlite import SQLiteStore
from signoff.store.wakeup import ANY

from .test_replicas_event_feed import ADMIN, arrived, assert_once_in_order, feed_of, wait_for
from .test_store_requests import new_request


def create_and_decide(store: Store, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        request, _ = store.create_request(new_request(tool_call_id=f"call-{uuid.uuid4().hex}"))
        store.decide(request.id, Approve(), actor="alice")
        ids.append(request.id)
    return ids


def test_a_feed_follows_the_store_only_while_a_stream_is_open(store: Store) -> None:
    with feed_of(store) as running:
        running.call(_settle())
        unread = create_and_decide(store, 3)
        assert ANY not in store.hub.watched()
        seen, _ = running.follow(ADMIN)
        wait_for(lambda: ANY in store.hub.watched(), "the feed listens once a stream is open")
        ids = create_and_decide(store, 3)
        wait_for(arrived(seen, ids), "the stream got the changes made after it opened")
        assert not [item for item in seen if item[2] in unread]
        assert_once_in_order(seen, ids)

        async def open_and_close() -> None:
            running.feed.unsubscribe(running.feed.subscribe(ADMIN))

        running.call(open_and_close())
        assert ANY in store.hub.watched()  # the first stream is still open


def test_the_change_watcher_looks_at_nothing_for_a_feed_nobody_follows(sqlite_store: SQLiteStore) -> None:
    with feed_of(sqlite_store) as running:

        async def open_and_close() -> None:
            running.feed.unsubscribe(running.feed.subscribe(ADMIN))
            await running.feed.start_point()

        running.call(open_and_close())
        wait_for(lambda: ANY not in sqlite_store.hub.watched(), "the feed left the wake-ups")
        looks = [getattr(source, "looks", None) for source in sqlite_store.hub.sources]
        create_and_decide(sqlite_store, 5)
        running.call(_settle())
        assert not sqlite_store.hub.watched()
        assert [getattr(source, "looks", None) for source in sqlite_store.hub.sources] == looks


async def _settle() -> None:
    """Let the feed's task run up to its wait."""
    await asyncio.sleep(0.1)
