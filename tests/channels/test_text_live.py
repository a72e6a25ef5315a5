"""The text fallback end to end: a real server whose outbox sends to a local HTTP receiver (the
"bridge"), and signed replies posted to `/channels/wechat/callback` as a bridge would. The
receiver checks our signatures with the `standardwebhooks` library, independently of our code."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from signoff import Reject
from signoff._util import utcnow
from signoff.channels import ChannelRegistry, parse_config
from signoff.channels.registry import build_channel
from signoff.destinations import Destinations
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

from ..live import LiveServer
from ..receivers import Receiver
from ..test_outbox import QUICK, wait_until

SECRET = "whsec_" + base64.b64encode(b"the wechat bridge's shared key!!").decode()
TOKEN = "bridge-token-1"
ALICE, BOB = "wxid_alice", "wxid_bob"
IDS = itertools.count(1)
LOCAL = Destinations(allow_private=True)
"""The bridges are on 127.0.0.1."""


@pytest.fixture
def bridge() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


@pytest.fixture
def server(store: Store, bridge: Receiver) -> Iterator[LiveServer]:
    for name, address in (("alice", ALICE), ("bob", BOB)):
        store.add_user(name, role="member", actor="test")
        store.set_address(name, "text:wechat", address, actor="test")
    config = parse_config(
        {
            "wechat": {
                "kind": "text",
                "platform": "wechat",
                "locale": "zh",
                "send_url": bridge.url,
                "secret": SECRET,
                "send_token": TOKEN,
            }
        },
        destinations=LOCAL,
    )
    registry = ChannelRegistry.from_configs(config)
    with LiveServer(store, QUICK, channels=registry) as live:
        yield live


def ask(
    store: Store, description: str, *, approvers: tuple[str, ...] = ("alice",), seconds: float = 3600
) -> str:
    new = NewRequest(
        thread_id="thread-w",
        tool_call_id=f"call-{next(IDS)}",
        tool_name="run_sql",
        args={"sql": "DROP TABLE users WHERE id < 1000"},
        description=description,
        deadline=utcnow() + timedelta(seconds=seconds),
        rule=RequestRule(approvers=approvers, channels=("wechat",)),
    )
    return store.create_request(new)[0].id


def messages(bridge: Receiver, count: int) -> list[dict[str, Any]]:
    """The first `count` messages the bridge got, each checked: signed with our secret (verified
    by the standardwebhooks library) and carrying the bridge's token."""
    got = bridge.wait_for(count)
    assert len(got) >= count, f"the bridge got {len(got)} messages, not {count}"
    bodies = []
    for post in got:
        assert post.headers["authorization"] == f"Bearer {TOKEN}"
        bodies.append(Webhook(SECRET).verify(post.body, post.headers))
    return bodies


def reply(
    server: LiveServer,
    sender: str,
    text: str,
    *,
    at: datetime | None = None,
    msg_id: str | None = None,
    secret: str = SECRET,
) -> httpx.Response:
    body = json.dumps({"from": sender, "text": text}, ensure_ascii=False)
    moment = at or datetime.now(UTC)
    msg_id = msg_id or f"msg_reply_{next(IDS)}"
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, moment, body),
    }
    return httpx.post(f"{server.url}/channels/wechat/callback", content=body.encode(), headers=headers)


def status(store: Store, request_id: str) -> str:
    return store.get_request(request_id).status.value


def test_a_reply_decides_and_the_final_state_and_result_follow(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    request_id = ask(store, "删除旧用户")
    (notice,) = messages(bridge, 1)
    assert notice["to"] == ALICE
    assert notice["message"] == "notice" and notice["request_id"] == request_id
    assert notice["text"].startswith(
        "🔔 等待你的决策\n\n📋 操作：删除旧用户\n内容：\n  sql: DROP TABLE users"
    )
    assert "回复以下任一选项：\n  1  ✅ 批准\n  2  ❌ 拒绝" in notice["text"]
    answer = reply(server, ALICE, " １ ")
    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "to": ALICE, "reply": "✅ 已批准：删除旧用户"}
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "wechat")
    update = messages(bridge, 2)[1]
    assert update["message"] == "update"
    assert update["text"] == "✅ 已批准（alice）\n📋 操作：删除旧用户"
    claim = store.claim_execution(request_id, lease=timedelta(minutes=1))
    assert claim.token is not None
    store.finish_execution(request_id, claim.token, succeeded=True, result={"rows": 3})
    follow_up = messages(bridge, 3)[2]
    assert (follow_up["message"], follow_up["text"]) == ("follow_up", "✅ run_sql 已执行")
    assert len(bridge.delivered) == 3


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ("批准", "approved"),
        ("YES", "approved"),
        ("y", "approved"),
        ("２", "rejected"),
        ("拒绝", "rejected"),
        ("No", "rejected"),
    ],
)
def test_replies_in_both_languages_decide(
    server: LiveServer, bridge: Receiver, text: str, outcome: str
) -> None:
    request_id = ask(server.store, "Pay the invoice")
    messages(bridge, 1)
    assert reply(server, ALICE, text).json()["ok"] is True
    assert status(server.store, request_id) == outcome


def test_a_reason_after_reject_is_kept(server: LiveServer, bridge: Receiver) -> None:
    request_id = ask(server.store, "Pay the invoice")
    messages(bridge, 1)
    assert reply(server, ALICE, "2 周五不付款").json() == {
        "ok": True,
        "to": ALICE,
        "reply": "❌ 已拒绝：Pay the invoice",
    }
    request = server.store.get_request(request_id)
    assert request.decision is not None
    assert request.decision.decision == Reject(message="周五不付款")


def test_with_two_pending_the_latest_is_decided_and_the_reply_says_one_more_waits(
    server: LiveServer, bridge: Receiver
) -> None:
    store = server.store
    older = ask(store, "第一个")
    messages(bridge, 1)
    newer = ask(store, "第二个")
    messages(bridge, 2)
    first = reply(server, ALICE, "1").json()
    assert first == {
        "ok": True,
        "to": ALICE,
        "reply": "✅ 已批准：第二个\n还有 1 个请求在等你；下一条回复决定其中最新的一个。",
    }
    assert (status(store, newer), status(store, older)) == ("approved", "pending")
    second = reply(server, ALICE, "2").json()
    assert second == {"ok": True, "to": ALICE, "reply": "❌ 已拒绝：第一个"}
    assert status(store, older) == "rejected"
    third = reply(server, ALICE, "1").json()
    assert third == {"ok": False, "to": ALICE, "reply": "该请求已处理：✅ 已批准（alice）。"}, (
        "with none pending: the newest"
    )
    assert (status(store, newer), status(store, older)) == ("approved", "rejected")


def test_a_reply_delivered_twice_decides_once(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    older = ask(store, "first")
    newer = ask(store, "second")
    messages(bridge, 2)
    moment = datetime.now(UTC)
    first = reply(server, ALICE, "1", at=moment, msg_id="msg_same")
    again = reply(server, ALICE, "1", at=moment, msg_id="msg_same")
    assert again.json() == first.json()
    assert (status(store, newer), status(store, older)) == ("approved", "pending")


def test_unknown_text_gets_help_and_decides_nothing(server: LiveServer, bridge: Receiver) -> None:
    request_id = ask(server.store, "Pay the invoice")
    messages(bridge, 1)
    answer = reply(server, ALICE, "这是什么？")
    assert answer.status_code == 200
    assert answer.json() == {
        "ok": False,
        "to": ALICE,
        "reply": "回复 1（或 批准）批准，回复 2（或 拒绝）拒绝你最新的待审批请求。",
    }
    assert status(server.store, request_id) == "pending"


def test_a_reply_after_expiry_is_told_so_and_the_expiry_is_sent(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    request_id = ask(store, "Pay the invoice", seconds=1.5)
    messages(bridge, 1)
    wait_until(lambda: status(store, request_id) == "expired")
    answer = reply(server, ALICE, "1")
    assert answer.json() == {"ok": False, "to": ALICE, "reply": "请求已过期 / the request expired"}
    update = messages(bridge, 2)[1]
    assert (update["message"], update["text"]) == ("update", "⌛ 已过期\n📋 操作：Pay the invoice")
    assert status(store, request_id) == "expired"


def test_a_cancelled_request_is_sent_as_cancelled(server: LiveServer, bridge: Receiver) -> None:
    request_id = ask(server.store, "Pay the invoice")
    messages(bridge, 1)
    server.store.cancel(request_id, actor="agent", reason="run aborted")
    update = messages(bridge, 2)[1]
    assert update["text"].startswith("🚫 已取消（agent）\n📋 操作：Pay the invoice")


def test_forged_stale_and_unknown_replies_decide_nothing(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    request_id = ask(store, "Pay the invoice")
    messages(bridge, 1)
    forged = reply(server, ALICE, "1", secret="whsec_" + base64.b64encode(b"x" * 32).decode())
    assert forged.status_code == 401
    assert forged.json()["error"]["type"] == "BadSignature"
    stale = reply(server, ALICE, "1", at=datetime.now(UTC) - timedelta(minutes=6))
    assert stale.status_code == 401
    refused = [entry for entry in store.audit_entries() if entry.action == "callback.refused"]
    assert len(refused) == 2
    stranger = reply(server, "wxid_stranger", "1").json()
    assert stranger == {"ok": False, "to": "wxid_stranger", "reply": "你的账号尚未关联 signoff。"}
    not_notified = reply(server, BOB, "1").json()
    assert not_notified == {"ok": False, "to": BOB, "reply": "没有等待你决策的请求。"}
    assert status(store, request_id) == "pending"


def test_a_bridge_that_fails_is_retried_and_one_that_refuses_is_dead_lettered(sqlite_store: Store) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.set_address("alice", "text:wechat", ALICE, actor="test")
    with Receiver(fail=2) as flaky, Receiver(status=403) as refusing:
        registry = ChannelRegistry(
            {
                name: build_channel(config)
                for name, config in parse_config(
                    {
                        "wechat": {
                            "kind": "text",
                            "platform": "wechat",
                            "send_url": flaky.url,
                            "secret": SECRET,
                        },
                        "line": {
                            "kind": "text",
                            "platform": "wechat",
                            "send_url": refusing.url,
                            "secret": SECRET,
                        },
                    },
                    destinations=LOCAL,
                ).items()
            }
        )
        with LiveServer(sqlite_store, QUICK, channels=registry):
            ask(sqlite_store, "flaky")
            request_id = sqlite_store.create_request(
                NewRequest(
                    thread_id="thread-x",
                    tool_call_id="refused",
                    tool_name="run_sql",
                    args={},
                    description="refused",
                    deadline=utcnow() + timedelta(hours=1),
                    rule=RequestRule(approvers=("alice",), channels=("line",)),
                )
            )[0].id
            flaky.wait_for(1)
            wait_until(lambda: any(row.state == "dead" for row in sqlite_store.outbox_for(request_id)))
    assert [post.status for post in flaky.posts] == [503, 503, 200]
    assert len({post.headers["webhook-id"] for post in flaky.posts}) == 1
    (dead,) = sqlite_store.outbox_for(request_id)
    assert dead.last_error == "the wechat bridge answered 403"
    assert [attempt.outcome for attempt in sqlite_store.delivery_attempts(request_id)] == ["failed"]
