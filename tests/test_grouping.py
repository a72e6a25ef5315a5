"""The server's grouped writer: store writes from the event loop in bursts sharing one commit."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

from signoff import AlreadyDecided, Approve, RequestNotFound, RequestStatus, StoreError
from signoff.requests import Request
from signoff.server.grouping import GroupedWriter
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .test_store_grouped import fail_at_commit, pending, status_outside


def approve(store: Store, request_id: str) -> Request:
    return store.decide(request_id, Approve(), actor="alice")


async def approve_and_look(
    writer: GroupedWriter, store: SQLiteStore, request_id: str
) -> tuple[str, str | None]:
    """Approve through the writer; what another connection sees the moment the caller is answered."""
    decided = await writer.run(approve, store, request_id)
    return decided.id, status_outside(store, request_id)


def test_concurrent_calls_share_commits_and_each_is_answered_after_its_commit(
    sqlite_store: SQLiteStore,
) -> None:
    ids = pending(sqlite_store, 40)
    writer = GroupedWriter(sqlite_store)
    before = sqlite_store.commits

    async def main() -> list[tuple[str, str | None]]:
        return await asyncio.gather(*(approve_and_look(writer, sqlite_store, i) for i in ids))

    try:
        answers = asyncio.run(main())
    finally:
        writer.stop()
    assert answers == [(request_id, "approved") for request_id in ids]
    assert 1 <= writer.bursts < 40
    assert sqlite_store.commits - before == writer.bursts
    assert sqlite_store.verify_audit().ok


def test_each_error_goes_to_its_own_caller(sqlite_store: SQLiteStore) -> None:
    first, second = pending(sqlite_store, 2)
    writer = GroupedWriter(sqlite_store)

    async def main() -> list[Any]:
        calls = [
            writer.run(approve, sqlite_store, first),
            writer.run(approve, sqlite_store, "no-such-request"),
            writer.run(approve, sqlite_store, first),
            writer.run(approve, sqlite_store, second),
        ]
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        results = asyncio.run(main())
    finally:
        writer.stop()
    assert isinstance(results[0], Request) and results[0].status is RequestStatus.APPROVED
    assert isinstance(results[1], RequestNotFound)
    assert isinstance(results[2], AlreadyDecided)
    assert isinstance(results[3], Request) and results[3].id == second
    assert [status_outside(sqlite_store, i) for i in (first, second)] == ["approved", "approved"]


def test_a_failed_commit_fails_every_call_of_its_burst_and_keeps_none(sqlite_store: SQLiteStore) -> None:
    ids = pending(sqlite_store, 3)
    writer = GroupedWriter(sqlite_store)
    release = threading.Event()

    async def main() -> list[Any]:
        holding = asyncio.ensure_future(writer.run(release.wait, 10))  # a burst of its own
        await asyncio.sleep(0.05)
        burst = [writer.run(approve, sqlite_store, i) for i in ids] + [
            writer.run(fail_at_commit, sqlite_store)
        ]
        queued = [asyncio.ensure_future(call) for call in burst]
        await asyncio.sleep(0.05)  # all queued behind the holding call
        release.set()
        assert await holding is True
        return await asyncio.gather(*queued, return_exceptions=True)

    try:
        results = asyncio.run(main())
    finally:
        writer.stop()
    assert all(isinstance(result, StoreError) for result in results), results
    assert [status_outside(sqlite_store, i) for i in ids] == ["pending"] * 3
    assert writer.bursts == 2
    assert sqlite_store.verify_audit().ok


def test_a_caller_that_gives_up_does_not_disturb_the_others(sqlite_store: SQLiteStore) -> None:
    first, second = pending(sqlite_store, 2)
    writer = GroupedWriter(sqlite_store)
    release = threading.Event()

    async def main() -> Request:
        holding = asyncio.ensure_future(writer.run(release.wait, 10))
        await asyncio.sleep(0.05)
        abandoned = asyncio.ensure_future(writer.run(approve, sqlite_store, first))
        kept = asyncio.ensure_future(writer.run(approve, sqlite_store, second))
        await asyncio.sleep(0.05)
        abandoned.cancel()
        release.set()
        await holding
        return await kept

    try:
        kept = asyncio.run(main())
    finally:
        writer.stop()
    assert kept.status is RequestStatus.APPROVED
    # the abandoned call still ran: a decision, once queued, is made (the client just never hears)
    assert status_outside(sqlite_store, first) == "approved"


def test_stop_finishes_what_is_queued_then_refuses(sqlite_store: SQLiteStore) -> None:
    (request_id,) = pending(sqlite_store, 1)
    writer = GroupedWriter(sqlite_store)

    async def main() -> None:
        decided = await writer.run(approve, sqlite_store, request_id)
        assert decided.status is RequestStatus.APPROVED
        writer.stop()
        with pytest.raises(RuntimeError, match="stopped"):
            await writer.run(approve, sqlite_store, request_id)

    asyncio.run(main())


def test_concurrent_decisions_through_the_api_share_commits(sqlite_server: LiveServer) -> None:
    """32 people's clients deciding at once: every decision lands once, each double decision
    of one request is refused with 409, and the decisions share commits."""
    store = sqlite_server.store
    assert isinstance(store, SQLiteStore)
    alice = sqlite_server.user("alice")
    ids = pending(store, 64)
    before = store.commits

    async def decide(client: httpx.AsyncClient, request_id: str) -> tuple[int, str]:
        response = await client.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
        return response.status_code, response.json().get("status") or response.json()["error"]["message"]

    async def main() -> list[tuple[int, str]]:
        limits = httpx.Limits(max_connections=32)
        headers = {"Authorization": f"Bearer {alice}"}
        async with httpx.AsyncClient(base_url=sqlite_server.url, headers=headers, limits=limits) as client:
            # every request twice: one of each pair wins, the other is told who did
            return await asyncio.gather(*(decide(client, i) for i in ids + ids))

    answers = asyncio.run(main())
    wins = [answer for answer in answers if answer[0] == 200]
    refusals = [answer for answer in answers if answer[0] == 409]
    assert len(wins) == 64 and all(status == "approved" for _, status in wins)
    assert len(refusals) == 64 and all("already approved by alice" in message for _, message in refusals)
    assert all(status_outside(store, i) == "approved" for i in ids)
    decided = [entry for entry in store.audit_entries() if entry.action == "request.decided"]
    assert sorted(entry.request_id or "" for entry in decided) == sorted(ids)
    assert store.commits - before < 64
    assert store.verify_audit().ok


def test_concurrent_asks_through_the_api_get_or_create_once(sqlite_server: LiveServer) -> None:
    """Agents asking at once: each distinct call is created once (201), the same call asked again
    in the same burst gets that request back (200), and the asks share commits."""
    store = sqlite_server.store
    assert isinstance(store, SQLiteStore)
    bot = sqlite_server.user("bot", "agent")
    before = store.commits

    async def ask(client: httpx.AsyncClient, call_id: str) -> tuple[int, str]:
        body = {"thread_id": "t", "tool_call_id": call_id, "tool": "send_email", "args": {"to": "x"}}
        response = await client.post("/v1/requests", json=body)
        return response.status_code, response.json()["id"]

    async def main() -> list[tuple[int, str]]:
        headers = {"Authorization": f"Bearer {bot}"}
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(base_url=sqlite_server.url, headers=headers, limits=limits) as client:
            calls = [f"c{n}" for n in range(48)]
            return await asyncio.gather(*(ask(client, call) for call in calls + calls[:16]))

    answers = asyncio.run(main())
    created = [request_id for status, request_id in answers if status == 201]
    again = [request_id for status, request_id in answers if status == 200]
    assert len(created) == len(set(created)) == 48
    assert len(again) == 16 and set(again) <= set(created)
    assert len(store.list_requests(limit=100)) == 48
    assert all(status_outside(store, request_id) == "pending" for request_id in created)
    assert store.commits - before < 48
