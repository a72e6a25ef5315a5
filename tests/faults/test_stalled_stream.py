"""A stalled event-stream client: the feed drops it without waiting, its stream ends, and the
client resumes by `Last-Event-ID` with nothing missed."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from contextlib import closing
from typing import Any

import h11
import pytest

from signoff import Approve, Client, Gate, RuleSet, Scope, ToolCall
from signoff.server.events import EventFeed
from signoff.store import SQLiteStore

from ..live import LiveServer
from ..test_events import event_stream, next_event
from ..test_store_requests import new_request

BATCH = 50
"""Requests created (or decided) in one commit: one burst of events for the feed."""
PUSH_ONLY = 3600.0


def feed_of(server: LiveServer) -> EventFeed:
    feed: EventFeed = server.app.state.server.feed
    return feed


def create_batch(store: SQLiteStore, start: int, count: int) -> list[str]:
    """`count` new requests in one commit (one burst for the feed), with args big enough that a
    few hundred events fill a socket's buffers."""
    ids = []
    with store.grouped():
        for n in range(start, start + count):
            request, _ = store.create_request(
                new_request(thread_id="stall", tool_call_id=f"c{n}", args={"to": "x", "body": "y" * 2000})
            )
            ids.append(request.id)
    return ids


class RawStream:
    """`GET /v1/events` on a bare socket with a tiny receive buffer, read only when asked."""

    def __init__(self, server: LiveServer, token: str) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(10)  # under the 15 s keepalive: a stream that never ends fails the read
        self.sock.connect(("127.0.0.1", server.port))
        self.http = h11.Connection(our_role=h11.CLIENT)
        request = h11.Request(
            method="GET",
            target="/v1/events",
            headers=[
                ("Host", "127.0.0.1"),
                ("Authorization", f"Bearer {token}"),
                ("Accept", "text/event-stream"),
            ],
        )
        self.sock.sendall(self.http.send(request) + self.http.send(h11.EndOfMessage()))
        self.text = ""
        self.status: int | None = None

    def close(self) -> None:
        self.sock.close()

    def read(self, *, until_end: bool) -> None:
        """Read what has arrived (the first chunk only, unless `until_end`: then up to the end of
        the response, which fails with a socket timeout if the stream never ends)."""
        while True:
            event = self.http.next_event()
            if event is h11.NEED_DATA:
                self.http.receive_data(self.sock.recv(65536))
                continue
            if isinstance(event, h11.Response):
                self.status = event.status_code
            elif isinstance(event, h11.Data):
                self.text += bytes(event.data).decode()
                if not until_end:
                    return
            elif isinstance(event, h11.EndOfMessage):
                return

    def events(self) -> tuple[list[str], int]:
        """The request ids of the events received, and the last event id reached."""
        ids, last = [], -1
        for block in self.text.split("\n\n"):
            fields = dict(
                line.split(": ", 1)
                for line in block.splitlines()
                if ": " in line and not line.startswith(":")
            )
            if "id" in fields:
                last = int(fields["id"])
            if "data" in fields:
                ids.append(json.loads(fields["data"])["request"]["id"])
        return ids, last


def test_a_reader_that_stops_reading_is_dropped_its_stream_ends_and_it_resumes(
    sqlite_store: SQLiteStore,
) -> None:
    with LiveServer(sqlite_store) as server:
        feed = feed_of(server)
        feed.queue_limit = 2 * BATCH  # a reader that keeps up never has more than a burst queued
        alice = server.user("alice")
        with event_stream(server, alice) as steady, closing(RawStream(server, alice)) as stalled:
            stalled.read(until_end=False)
            assert stalled.status == 200
            while len(feed._subscriptions) < 2:
                time.sleep(0.01)
            created: list[str] = []
            while len(feed._subscriptions) == 2:  # until the stalled reader is dropped
                assert len(created) < 5000, "the stalled reader was never dropped"
                created += create_batch(sqlite_store, len(created), BATCH)
                time.sleep(0.05)
            created += create_batch(sqlite_store, len(created), BATCH)  # after the drop: only by replay
            steadily = [next_event(steady)["request"]["id"] for _ in created]
            assert steadily == created, "the reader that kept up got every event, in order"

            stalled.read(until_end=True)  # the reader reads again: its stream has ended
        received, last = stalled.events()
        assert received == created[: len(received)]
        assert len(received) < len(created)
        with event_stream(server, alice, last_event_id=last) as resumed:
            replayed = [next_event(resumed)["request"]["id"] for _ in created[len(received) :]]
            time.sleep(0.2)
            assert resumed.empty(), "nothing more than what was missed"
        assert received + replayed == created, "nothing missed, nothing twice"


def test_a_client_that_falls_behind_reconnects_and_its_waiters_miss_nothing(
    sqlite_store: SQLiteStore,
) -> None:
    rules = RuleSet.from_yaml("tools: {deploy: {requires_approval: true}}")
    waiters = BATCH
    with LiveServer(sqlite_store) as server:
        feed = feed_of(server)
        feed.queue_limit = BATCH // 2  # the burst of decisions overflows it
        with Client(server.url, server.user("bot", role="agent")) as client:
            gate = Gate(client, rules=rules, poll_interval=PUSH_ONLY)

            async def scenario() -> list[Any]:
                tasks = [
                    asyncio.create_task(
                        gate.areview(
                            ToolCall(name="deploy", args={"n": n}, id=f"w{n}"), Scope(thread_id="behind")
                        )
                    )
                    for n in range(waiters)
                ]
                while len(client.hub.watched()) < waiters or client.events.streams_opened < 1:
                    await asyncio.sleep(0.01)
                pending = await asyncio.to_thread(
                    sqlite_store.list_requests, thread_id="behind", limit=waiters
                )

                def decide_all() -> None:
                    with sqlite_store.grouped():  # one commit: a burst of events larger than the queue
                        for request in pending:
                            sqlite_store.decide(request.id, Approve(), actor="alice")

                await asyncio.to_thread(decide_all)
                return list(await asyncio.wait_for(asyncio.gather(*tasks), 30))

            outcomes = asyncio.run(scenario())
            assert client.events.streams_opened >= 2, "the stream that fell behind was ended, and resumed"
    assert [outcome.status for outcome in outcomes] == ["approved"] * waiters


@pytest.fixture(autouse=True)
def _quiet_client_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("ERROR", logger="signoff.client")
