"""What comes back from the channels: a channel's verified callback decides as the person whose
address sent it, through the usual checks; a webhook's signed decision (Standard Webhooks)
decides once per message id; forged, tampered and stale messages are refused with 401 and audited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from standardwebhooks import Webhook as Signer

from signoff._util import utcnow
from signoff.channels import ChannelRegistry
from signoff.channels.recording import SIGNATURE_HEADER, RecordingChannel, sign
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

from .live import LiveServer
from .test_outbox import QUICK, ask, wait_until

SECRET = "recording-secret"


@pytest.fixture
def chat() -> RecordingChannel:
    return RecordingChannel("chat", secret=SECRET)


@pytest.fixture
def server(sqlite_store: Store, chat: RecordingChannel) -> Iterator[LiveServer]:
    for name in ("alice", "bob"):
        sqlite_store.add_user(name, role="member", actor="test")
    sqlite_store.set_address("alice", "recording", "U-ALICE", actor="test")
    sqlite_store.set_address("bob", "recording", "U-BOB", actor="test")
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(sqlite_store, QUICK, channels=registry) as live:
        yield live


def callback(server: LiveServer, payload: dict[str, object], *, secret: str = SECRET) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {SIGNATURE_HEADER: sign(secret, body), "content-type": "application/json"}
    return httpx.post(f"{server.url}/channels/chat/callback", content=body, headers=headers)


def actions(store: Store, request_id: str | None = None) -> list[str]:
    return [entry.action for entry in store.audit_entries(request_id=request_id)]


def test_a_signed_callback_decides_as_the_sender_and_the_card_is_updated(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    request_id = ask(store, approvers=("alice",), channels=("chat",))
    wait_until(lambda: len(chat.recorded) == 1)
    answer = callback(
        server, {"sender": "U-ALICE", "request_id": request_id, "decision": {"type": "approve"}}
    )
    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "message": "Approved."}
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None and (request.decision.actor, request.decision.channel) == (
        "alice",
        "chat",
    )
    wait_until(lambda: [entry.action for entry in chat.recorded] == ["send", "update"])


def test_forged_and_unreadable_callbacks_are_refused(server: LiveServer) -> None:
    store = server.store
    request_id = ask(store, approvers=("alice",), channels=("chat",))
    forged = callback(
        server,
        {"sender": "U-ALICE", "request_id": request_id, "decision": {"type": "approve"}},
        secret="guess",
    )
    assert forged.status_code == 401
    assert forged.json()["error"]["type"] == "BadSignature"
    assert "callback.refused" in actions(store)
    unreadable = httpx.post(
        f"{server.url}/channels/chat/callback", content=b"{", headers={SIGNATURE_HEADER: sign(SECRET, b"{")}
    )
    assert unreadable.status_code == 400
    assert httpx.post(f"{server.url}/channels/nope/callback", content=b"{}").status_code == 404
    assert store.get_request(request_id).status.value == "pending"


def test_a_sender_who_is_not_an_approver_is_refused_and_audited(server: LiveServer) -> None:
    store = server.store
    request_id = ask(store, approvers=("alice",), channels=("chat",))
    answer = callback(server, {"sender": "U-BOB", "request_id": request_id, "decision": {"type": "approve"}})
    assert answer.json() == {"ok": False, "message": "You are not an approver of this request."}
    assert store.get_request(request_id).status.value == "pending"
    assert "decision.refused" in actions(store, request_id)
    stranger = callback(
        server, {"sender": "U-NOBODY", "request_id": request_id, "decision": {"type": "approve"}}
    )
    assert stranger.json()["ok"] is False
    assert store.get_request(request_id).status.value == "pending"


def test_a_reply_without_a_request_decides_only_when_one_is_open_and_else_needs_its_code(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    older = ask(store, call="o1", approvers=("alice",), channels=("chat",))
    newer = ask(store, call="o2", approvers=("alice",), channels=("chat",))
    wait_until(lambda: len(chat.recorded) == 2)
    bare = callback(server, {"sender": "U-ALICE", "decision": {"type": "reject", "message": "no"}})
    assert bare.json()["ok"] is False
    assert bare.json()["message"].startswith("2 requests are waiting for you, so a reply must say which")
    assert [store.get_request(older).status.value, store.get_request(newer).status.value] == ["pending"] * 2
    codes = {entry.request_id: entry.code for entry in store.open_requests("chat", "alice")}
    coded = {"sender": "U-ALICE", "code": codes[older], "decision": {"type": "reject", "message": "no"}}
    assert callback(server, coded).json() == {"ok": True, "message": "Rejected."}
    assert (store.get_request(older).status.value, store.get_request(newer).status.value) == (
        "rejected",
        "pending",
    )
    last = callback(server, {"sender": "U-ALICE", "decision": {"type": "approve"}})
    assert last.json() == {"ok": True, "message": "Approved."}, "with one open, a bare reply decides it"
    assert store.get_request(newer).status.value == "approved"


def test_a_reply_after_expiry_is_told_so(server: LiveServer, chat: RecordingChannel) -> None:
    store = server.store
    new = NewRequest(
        thread_id="t",
        tool_call_id="late",
        tool_name="pay",
        args={},
        description="Pay",
        deadline=utcnow() + timedelta(milliseconds=300),
        rule=RequestRule(approvers=("alice",), channels=("chat",)),
    )
    request_id = store.create_request(new)[0].id
    wait_until(lambda: len(chat.recorded) >= 1)
    wait_until(lambda: store.get_request(request_id).status.value == "expired")
    answer = callback(server, {"sender": "U-ALICE", "decision": {"type": "approve"}})
    assert answer.json() == {"ok": False, "message": "The request expired."}


def test_a_challenge_is_answered_and_decides_nothing(server: LiveServer) -> None:
    assert callback(server, {"challenge": "abc"}).json() == {"challenge": "abc"}


# -- webhooks in -------------------------------------------------------------------------------


def signed(secret: str, body: bytes, *, msg_id: str = "msg_1", at: datetime | None = None) -> dict[str, str]:
    moment = at or datetime.now(UTC)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": Signer(secret).sign(msg_id, moment, body.decode()),
        "content-type": "application/json",
    }


def test_a_signed_webhook_decision_decides_once_per_message_id(server: LiveServer) -> None:
    store = server.store
    webhook, secret = store.add_webhook(
        "http://127.0.0.1:9/unused", inbound_as="alice", allow_private=True, actor="test"
    )
    request_id = ask(store, call="w1", approvers=("alice",))
    body = json.dumps({"request_id": request_id, "decision": {"type": "approve", "comment": "fine"}}).encode()
    url = f"{server.url}/v1/webhooks/{webhook.id}/decisions"
    headers = signed(secret, body)
    first = httpx.post(url, content=body, headers=headers)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "approved"
    assert first.json()["decision"]["actor"] == "alice"
    replay = httpx.post(url, content=body, headers=headers)
    assert replay.status_code == 200
    assert replay.headers.get("idempotent-replayed") == "true"
    assert actions(store, request_id).count("request.decided") == 1


def test_tampered_stale_and_unknown_webhook_messages_are_refused(server: LiveServer) -> None:
    store = server.store
    webhook, secret = store.add_webhook(
        "http://127.0.0.1:9/unused", inbound_as="alice", allow_private=True, actor="test"
    )
    request_id = ask(store, call="w2", approvers=("alice",))
    body = json.dumps({"request_id": request_id, "decision": {"type": "approve"}}).encode()
    url = f"{server.url}/v1/webhooks/{webhook.id}/decisions"
    tampered = body.replace(b"approve", b"reject ")
    assert httpx.post(url, content=tampered, headers=signed(secret, body)).status_code == 401
    stale = signed(secret, body, msg_id="msg_2", at=datetime.now(UTC) - timedelta(minutes=6))
    assert httpx.post(url, content=body, headers=stale).status_code == 401
    future = signed(secret, body, msg_id="msg_3", at=datetime.now(UTC) + timedelta(minutes=6))
    assert httpx.post(url, content=body, headers=future).status_code == 401
    unknown = httpx.post(
        f"{server.url}/v1/webhooks/whk_nope/decisions", content=body, headers=signed(secret, body)
    )
    assert unknown.status_code == 401
    assert httpx.post(url, content=body, headers={"content-type": "application/json"}).status_code == 401
    assert store.get_request(request_id).status.value == "pending"
    refused = [entry for entry in store.audit_entries() if entry.action == "callback.refused"]
    assert len(refused) == 5


def test_a_webhook_without_a_person_takes_no_decisions(server: LiveServer) -> None:
    store = server.store
    webhook, secret = store.add_webhook("http://127.0.0.1:9/unused", allow_private=True, actor="test")
    request_id = ask(store, call="w3", approvers=("alice",))
    body = json.dumps({"request_id": request_id, "decision": {"type": "approve"}}).encode()
    answer = httpx.post(
        f"{server.url}/v1/webhooks/{webhook.id}/decisions", content=body, headers=signed(secret, body)
    )
    assert answer.status_code == 403
    assert store.get_request(request_id).status.value == "pending"


def test_a_reply_delivered_twice_decides_once_even_with_another_request_pending(
    server: LiveServer, chat: RecordingChannel
) -> None:
    """A platform that retries a reply (the same delivery id) must not decide the next request
    with it: the first outcome is answered again, from the store."""
    store = server.store
    older = ask(store, call="d1", approvers=("alice",), channels=("chat",))
    newer = ask(store, call="d2", approvers=("alice",), channels=("chat",))
    wait_until(lambda: len(chat.recorded) == 2)
    codes = {entry.request_id: entry.code for entry in store.open_requests("chat", "alice")}
    reply = {"id": "msg-1", "sender": "U-ALICE", "code": codes[newer], "decision": {"type": "approve"}}
    first = callback(server, reply)
    assert first.json() == {"ok": True, "message": "Approved."}
    again = callback(server, reply)
    assert again.status_code == 200 and again.json() == first.json()
    assert store.get_request(newer).status.value == "approved"
    assert store.get_request(older).status.value == "pending", "the repeat decided nothing more"
    bare = {"id": "msg-2", "sender": "U-ALICE", "decision": {"type": "approve"}}
    assert callback(server, bare).json()["ok"] is True, "one open now: a bare reply decides it"
    assert store.get_request(older).status.value == "approved"
