"""`Idempotency-Key` (issue 8, item 8): a call made again with the same key gets the first answer
instead of a 409, on every endpoint that changes a request, on both backends."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import httpx
import jsonschema
import pytest

from signoff import Approve
from signoff.requests import RequestStatus
from signoff.server import ServerSettings
from signoff.store import SQLiteStore, Store
from tests.helpers import decided_digest

from .live import LiveServer

REQUEST = {
    "thread_id": "t1",
    "tool_call_id": "call-1",
    "tool": "send_email",
    "args": {"to": "bob@example.com"},
    "approvers": ["alice"],
}


@pytest.fixture
def people(live_server: LiveServer) -> Iterator[dict[str, httpx.Client]]:
    clients = {
        "agent": live_server.client(live_server.user("bot", "agent")),
        "other": live_server.client(live_server.user("other-bot", "agent")),
        "alice": live_server.client(live_server.user("alice")),
        "admin": live_server.client(live_server.user("root", "admin")),
    }
    yield clients
    for client in clients.values():
        client.close()


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


def new_key() -> str:
    return str(uuid.uuid4())


def ask(agent: httpx.Client, *, key: str | None = None, **fields: Any) -> httpx.Response:
    return agent.post("/v1/requests", json={**REQUEST, **fields}, headers=keyed(key) if key else None)


def error_of(response: httpx.Response) -> tuple[str, str]:
    error = response.json()["error"]
    return error["type"], error["message"]


def test_a_decision_retried_with_its_key_gets_the_first_answer_not_409(
    people: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(people["agent"]).json()["id"]
    key = new_key()
    path = f"/v1/requests/{request_id}/decision"
    first = people["alice"].post(path, json={"type": "approve"}, headers=keyed(key))
    assert first.status_code == 200
    assert "Idempotent-Replayed" not in first.headers
    again = people["alice"].post(path, json={"type": "approve"}, headers=keyed(key))
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    without_key = people["alice"].post(path, json={"type": "approve"})
    assert without_key.status_code == 409  # what the retry got before
    assert [record.actor for record in store.decisions(request_id)] == ["alice"]


def test_a_create_retried_with_its_key_gets_its_201(people: dict[str, httpx.Client], store: Store) -> None:
    key = new_key()
    first = ask(people["agent"], key=key)
    assert first.status_code == 201
    again = ask(people["agent"], key=key)
    assert (again.status_code, again.content) == (201, first.content)
    assert ask(people["agent"]).status_code == 200  # get-or-create without a key: the existing one
    assert len(store.list_requests(thread_id="t1")) == 1


def test_the_same_key_with_another_body_or_endpoint_is_refused(
    people: dict[str, httpx.Client], store: Store
) -> None:
    key = new_key()
    assert ask(people["agent"], key=key).status_code == 201
    other_body = ask(people["agent"], key=key, tool_call_id="call-2")
    assert other_body.status_code == 422
    kind, message = error_of(other_body)
    assert kind == "IdempotencyKeyReused"
    assert key in message and "different body" in message
    assert store.find_request("t1", "call-2", created_by="bot") is None
    request_id = store.find_request("t1", "call-1", created_by="bot").id  # type: ignore[union-attr]
    elsewhere = people["agent"].post(f"/v1/requests/{request_id}/cancel", json={}, headers=keyed(key))
    assert elsewhere.status_code == 422
    assert "POST /v1/requests" in error_of(elsewhere)[1]
    assert store.get_request(request_id).status is RequestStatus.PENDING


def test_keys_belong_to_their_user(people: dict[str, httpx.Client], store: Store) -> None:
    key = new_key()
    mine = ask(people["agent"], key=key)
    assert mine.status_code == 201
    theirs = ask(people["other"], key=key, thread_id="t2")
    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine.json()["id"]
    assert "Idempotent-Replayed" not in theirs.headers


def test_errors_are_not_kept_so_the_same_call_is_tried_again(
    people: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(people["agent"], drafting=True).json()["id"]
    key = new_key()
    path = f"/v1/requests/{request_id}/decision"
    still_drafting = people["alice"].post(path, json={"type": "approve"}, headers=keyed(key))
    assert still_drafting.status_code == 409
    store.update_draft(request_id, ready=True, actor="bot")
    decided = people["alice"].post(path, json={"type": "approve"}, headers=keyed(key))
    assert decided.status_code == 200
    assert decided.json()["status"] == "approved"
    assert "Idempotent-Replayed" not in decided.headers


Clients = dict[str, httpx.Client]


def _cancel(people: Clients, store: Store, request_id: str, key: str) -> httpx.Response:
    path = f"/v1/requests/{request_id}/cancel"
    return people["agent"].post(path, json={"reason": "done"}, headers=keyed(key))


def _draft_ready(people: Clients, store: Store, request_id: str, key: str) -> httpx.Response:
    return people["agent"].patch(f"/v1/requests/{request_id}", json={"ready": True}, headers=keyed(key))


def _claim(people: Clients, store: Store, request_id: str, key: str) -> httpx.Response:
    if store.get_request(request_id).status is RequestStatus.PENDING:
        store.decide(request_id, Approve(), actor="alice")
    path = f"/v1/requests/{request_id}/execution"
    body = {"action": "claim", "args_digest": decided_digest(store, request_id)}
    return people["agent"].post(path, json=body, headers=keyed(key))


def _cancel_thread(people: Clients, store: Store, request_id: str, key: str) -> httpx.Response:
    return people["agent"].post("/v1/threads/t1/cancel", json={}, headers=keyed(key))


ENDPOINTS = [_cancel, _draft_ready, _claim, _cancel_thread]


@pytest.mark.parametrize("call", ENDPOINTS, ids=lambda call: call.__name__)
def test_every_endpoint_that_changes_a_request_replays_its_first_answer(
    people: dict[str, httpx.Client],
    store: Store,
    call: Callable[[dict[str, httpx.Client], Store, str, str], httpx.Response],
) -> None:
    request_id = ask(people["agent"], drafting=call is _draft_ready).json()["id"]
    key = new_key()
    first = call(people, store, request_id, key)
    assert first.status_code == 200, first.text
    again = call(people, store, request_id, key)
    assert (again.status_code, again.content) == (200, first.content)
    assert again.headers["Idempotent-Replayed"] == "true"
    if call is _claim:  # the retried claim still holds its token; without the key it finds the run busy
        assert again.json()["kind"] == "claimed" and again.json()["token"] == first.json()["token"]
        assert call(people, store, request_id, new_key()).json()["kind"] == "busy"


def test_a_bad_key_is_refused(people: dict[str, httpx.Client], store: Store) -> None:
    for bad in ("", "x" * 256, "has space", "caf\u00e9"):
        response = people["agent"].post(
            "/v1/requests", json=REQUEST, headers={"Idempotency-Key": bad.encode()}
        )
        assert response.status_code == 422, bad
        assert "Idempotency-Key must be" in error_of(response)[1]
    assert store.list_requests() == []


def test_an_expired_key_is_free_again(store: Store) -> None:
    settings = ServerSettings(sweep_interval=0.2, idempotency_ttl=timedelta(milliseconds=300))
    with LiveServer(store, settings) as server, server.client(server.user("bot", "agent")) as agent:
        key = new_key()
        assert ask(agent, key=key).status_code == 201
        assert ask(agent, key=key, tool_call_id="call-2").status_code == 422
        time.sleep(0.4)
        assert ask(agent, key=key, tool_call_id="call-2").status_code == 201
        assert store.purge_kept_answers(ttl=timedelta(0)) == 1


def test_the_kept_answer_commits_with_the_change(sqlite_store: SQLiteStore) -> None:
    """On SQLite the decision and its kept answer share one commit: a crash loses both or
    neither, so the retry never finds the change without its answer (the 409 of item 8)."""
    with LiveServer(sqlite_store) as server, server.client(server.user("alice")) as alice:
        with server.client(server.user("bot", "agent")) as agent:
            request_id = ask(agent).json()["id"]
        key = new_key()
        assert alice.get("/v1/me").status_code == 200  # her token's use is written (once a minute)
        before = sqlite_store.commits
        decided = alice.post(
            f"/v1/requests/{request_id}/decision", json={"type": "approve"}, headers=keyed(key)
        )
        assert decided.status_code == 200
        assert sqlite_store.commits == before + 1
        assert sqlite_store.kept_answer("alice", key, ttl=timedelta(hours=1)) is not None


def test_a_failed_commit_keeps_neither_the_change_nor_the_answer(sqlite_store: SQLiteStore) -> None:
    with LiveServer(sqlite_store) as server, server.client(server.user("alice")) as alice:
        with server.client(server.user("bot", "agent")) as agent:
            request_id = ask(agent).json()["id"]
        real_commit = sqlite_store._commit
        failures = [1]

        def failing_commit(batch: Any) -> None:
            if failures:
                failures.pop()
                sqlite_store._connection.execute("ROLLBACK")
                batch.error = RuntimeError("disk I/O error (injected)")
                sqlite_store._batch = None
                batch.done.set()
                return
            real_commit(batch)

        sqlite_store._commit = failing_commit  # type: ignore[method-assign]
        key = new_key()
        path = f"/v1/requests/{request_id}/decision"
        failed = alice.post(path, json={"type": "approve"}, headers=keyed(key))
        assert failed.status_code >= 500
        assert sqlite_store.get_request(request_id).status is RequestStatus.PENDING
        assert sqlite_store.kept_answer("alice", key, ttl=timedelta(hours=1)) is None
        retried = alice.post(path, json={"type": "approve"}, headers=keyed(key))
        assert retried.status_code == 200
        assert retried.json()["status"] == "approved"


def test_openapi_documents_the_header_on_each_endpoint(live_server: LiveServer) -> None:
    paths = httpx.get(f"{live_server.url}/openapi.json").json()["paths"]
    documented = {
        (method.upper(), path)
        for path, operations in paths.items()
        for method, operation in operations.items()
        if any(parameter["name"] == "Idempotency-Key" for parameter in operation.get("parameters", []))
    }
    assert documented == {
        ("POST", "/v1/requests"),
        ("POST", "/v1/requests/{request_id}/decision"),
        ("POST", "/v1/requests/decide"),  # a batch, kept by its key like a single decision
        ("POST", "/v1/requests/{request_id}/cancel"),
        ("PATCH", "/v1/requests/{request_id}"),
        ("POST", "/v1/requests/{request_id}/execution"),
        ("POST", "/v1/threads/{thread_id}/cancel"),
    }


def test_openapi_documents_which_keys_the_server_takes(live_server: LiveServer) -> None:
    """The documented schema refuses exactly the keys `test_a_bad_key_is_refused` sends."""
    create = httpx.get(f"{live_server.url}/openapi.json").json()["paths"]["/v1/requests"]["post"]
    (header,) = (parameter for parameter in create["parameters"] if parameter["name"] == "Idempotency-Key")
    schema = header["schema"]
    for bad in ("", "x" * 256, "has space", "caf\u00e9", "tab\there"):
        assert not jsonschema.Draft202012Validator(schema).is_valid(bad), bad
    for good in (new_key(), "!~", "x" * 255):
        assert jsonschema.Draft202012Validator(schema).is_valid(good), good
