"""Feishu end to end: a real signoff server (LiveServer) whose outbox delivers through lark-oapi
to a local stand-in of open.feishu.cn, and card callbacks made as Feishu makes them (encrypted
and signed by the tests' own code) on the shared `POST /channels/feishu/callback`: a click decides
as the clicking person, the card is patched once to its final state and the execution's result
is a reply under it; forged, stale and non-approver clicks are refused and audited; expiry
patches the card too. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from signoff._util import utcnow
from signoff.channels import ChannelConfig, ChannelRegistry
from signoff.channels.feishu import FeishuChannel
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store
from tests.helpers import decided_digest

from ..live import LiveServer
from ..test_outbox import QUICK, wait_until
from . import platforms
from .signers import card_action, feishu_callback, url_verification

KEY = "encrypt-key"
TOKEN = "verification-token"
MESSAGES = "/open-apis/im/v1/messages"


@pytest.fixture
def app_id() -> str:
    return f"cli_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def api(app_id: str) -> Iterator[platforms.FakePlatform]:
    with platforms.feishu(app_id=app_id) as fake:
        yield fake


@pytest.fixture
def server(store: Store, api: platforms.FakePlatform, app_id: str) -> Iterator[LiveServer]:
    for name, address in (("alice", "ou_alice"), ("bob", "ou_bob")):
        store.add_user(name, role="member", actor="test")
        store.set_address(name, "feishu", address, actor="test")
    feishu = FeishuChannel(
        "feishu",
        app_id=app_id,
        app_secret="app-secret",
        encrypt_key=KEY,
        verification_token=TOKEN,
        base_url=api.url,
    )
    registry = ChannelRegistry()
    registry.add(feishu, ChannelConfig(name="feishu", kind="feishu", locale="en"))
    with LiveServer(store, QUICK, channels=registry) as live:
        yield live


def ask(store: Store, *, seconds: float = 3600) -> str:
    new = NewRequest(
        thread_id="thread-1",
        tool_call_id="c1",
        tool_name="execute",
        args={"command": "rm -rf /tmp/build"},
        description="Clean the build directory",
        deadline=utcnow() + timedelta(seconds=seconds),
        rule=RequestRule(approvers=("alice",), channels=("feishu",), allowed_decisions=("approve", "reject")),
    )
    return store.create_request(new)[0].id


def sent(api: platforms.FakePlatform) -> tuple[str, dict[str, Any]]:
    """The first card sent: (the open_id it went to, the card)."""
    wait_until(lambda: api.called("POST", MESSAGES))
    call = api.called("POST", MESSAGES)[0]
    return call.body["receive_id"], json.loads(call.body["content"])


def button_values(card: dict[str, Any]) -> list[Any]:
    columns = card["body"]["elements"][-2]["columns"]
    return [column["elements"][0]["behaviors"][0]["value"] for column in columns]


def click(server: LiveServer, open_id: str, value: Any, **kwargs: object) -> httpx.Response:
    payload = card_action(token=TOKEN, open_id=open_id, value=value, message_id="om_2")
    headers, body = feishu_callback(encrypt_key=KEY, payload=payload, **kwargs)  # type: ignore[arg-type]
    return httpx.post(f"{server.url}/channels/feishu/callback", headers=headers, content=body)


def patches(api: platforms.FakePlatform) -> list[platforms.Call]:
    return [call for call in api.calls if call.method == "PATCH"]


def test_a_click_approves_the_card_is_patched_once_and_the_result_follows(
    server: LiveServer, api: platforms.FakePlatform
) -> None:
    store = server.store
    request_id = ask(store)
    target, card = sent(api)
    assert target == "ou_alice"
    assert card["header"]["title"]["content"] == "AI wants to run: execute"
    approve, _ = button_values(card)
    answer = click(server, "ou_alice", approve)
    assert answer.status_code == 200
    assert answer.json() == {"toast": {"type": "success", "content": "Approved."}}
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "feishu")
    wait_until(lambda: patches(api))
    (patch,) = patches(api)
    assert patch.path == f"{MESSAGES}/om_2"
    final = json.loads(patch.body["content"])
    assert final["header"]["template"] == "green"
    assert final["body"]["elements"][-1]["text"]["content"] == "✅ Approved by alice"
    assert click(server, "ou_alice", approve).json()["toast"]["type"] == "error"  # already decided
    claim = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    store.finish_execution(request_id, claim.token, succeeded=True, result={"removed": 3})
    wait_until(lambda: api.called("POST", f"{MESSAGES}/om_2/reply"))
    (reply,) = api.called("POST", f"{MESSAGES}/om_2/reply")
    assert json.loads(reply.body["content"]) == {"text": '✅ execute ran\nResult: {"removed": 3}'}
    time.sleep(0.3)
    assert len(patches(api)) == 1, "the card is patched once"
    assert len(api.called("POST", "/open-apis/auth/v3/tenant_access_token/internal")) == 1


def test_a_reject_click_rejects(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store)
    _, reject = button_values(sent(api)[1])
    assert click(server, "ou_alice", reject).json()["toast"]["type"] == "success"
    assert server.store.get_request(request_id).status.value == "rejected"
    wait_until(lambda: patches(api))
    final = json.loads(patches(api)[0].body["content"])
    assert final["header"]["template"] == "red"


def test_the_url_check_is_answered(server: LiveServer) -> None:
    _, body = feishu_callback(encrypt_key=KEY, payload=url_verification(token=TOKEN, challenge="c-77"))
    answer = httpx.post(f"{server.url}/channels/feishu/callback", content=body)
    assert answer.status_code == 200
    assert answer.json() == {"challenge": "c-77"}


def test_a_non_approver_is_refused_and_audited(server: LiveServer, api: platforms.FakePlatform) -> None:
    store = server.store
    request_id = ask(store)
    approve, _ = button_values(sent(api)[1])
    answer = click(server, "ou_bob", approve)
    assert answer.status_code == 200
    assert answer.json()["toast"]["type"] == "error"
    assert "approver" in answer.json()["toast"]["content"]
    assert store.get_request(request_id).status.value == "pending"
    assert any(entry.actor == "bob" for entry in store.audit_entries(request_id=request_id))
    assert click(server, "ou_stranger", approve).json()["toast"]["type"] == "error"
    assert store.get_request(request_id).status.value == "pending"
    assert not patches(api)


def test_forged_and_stale_clicks_are_401_and_audited(server: LiveServer, api: platforms.FakePlatform) -> None:
    store = server.store
    request_id = ask(store)
    approve, _ = button_values(sent(api)[1])
    payload = card_action(token=TOKEN, open_id="ou_alice", value=approve)
    headers, body = feishu_callback(encrypt_key=KEY, payload=payload)
    forged = httpx.post(
        f"{server.url}/channels/feishu/callback",
        headers={**headers, "x-lark-signature": "0" * 64},
        content=body,
    )
    assert forged.status_code == 401
    assert click(server, "ou_alice", approve, timestamp=int(time.time()) - 600).status_code == 401
    other_key = feishu_callback(encrypt_key="not-the-key", payload=payload)
    assert (
        httpx.post(
            f"{server.url}/channels/feishu/callback", headers=other_key[0], content=other_key[1]
        ).status_code
        == 401
    )
    unreadable = httpx.post(f"{server.url}/channels/feishu/callback", content=b"{")
    assert unreadable.status_code == 401, "an unsigned body is refused as unsigned"
    assert store.get_request(request_id).status.value == "pending"
    refused = [entry.action for entry in store.audit_entries() if entry.action == "callback.refused"]
    assert len(refused) == 4


def test_expiry_patches_the_card(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store, seconds=1.5)
    approve, _ = button_values(sent(api)[1])
    wait_until(lambda: patches(api), timeout=20)
    assert server.store.get_request(request_id).status.value == "expired"
    final = json.loads(patches(api)[0].body["content"])
    assert final["header"]["template"] == "grey"
    assert final["body"]["elements"][-1]["text"]["content"] == "⌛ Expired"
    late = click(server, "ou_alice", approve)
    assert late.json() == {"toast": {"type": "warning", "content": "The request expired."}}


def test_a_cancel_patches_the_card(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store)
    sent(api)
    server.store.cancel(request_id, actor="agent", reason="the run was aborted")
    wait_until(lambda: patches(api))
    final = json.loads(patches(api)[0].body["content"])
    assert final["header"]["template"] == "grey"
    texts = [element["text"]["content"] for element in final["body"]["elements"]]
    assert texts[-2:] == ["🚫 Cancelled by agent", "the run was aborted"]
