"""The text fallback end to end: a real server whose outbox sends to a local HTTP receiver (the
"bridge"), and signed replies posted to `/channels/wechat/callback` as a bridge would. The
receiver checks our signatures with the `standardwebhooks` library, independently of our code."""

from __future__ import annotations

import base64
import itertools
import json
import re
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
from tests.helpers import decided_digest

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
    store: Store,
    description: str,
    *,
    approvers: tuple[str, ...] = ("alice",),
    seconds: float = 3600,
    tool: str = "run_sql",
    args: dict[str, Any] | None = None,
    redact: tuple[str, ...] = (),
) -> str:
    new = NewRequest(
        thread_id="thread-w",
        tool_call_id=f"call-{next(IDS)}",
        tool_name=tool,
        args=args if args is not None else {"sql": "DROP TABLE users WHERE id < 1000"},
        description=description,
        deadline=utcnow() + timedelta(seconds=seconds),
        rule=RequestRule(approvers=approvers, channels=("wechat",), redact=redact),
    )
    return store.create_request(new)[0].id


CODE = re.compile(r"^🔔 .* · ([A-Z0-9]{4})\n")


def code_of(notice: dict[str, Any]) -> str:
    """The reply code a notice's first line carries."""
    found = CODE.match(notice["text"])
    assert found is not None, notice["text"]
    return found.group(1)


def notice_for(bridge: Receiver, count: int, request_id: str) -> dict[str, Any]:
    """The notice of `request_id` among the first `count` messages (sends run concurrently)."""
    (found,) = [
        body
        for body in messages(bridge, count)
        if body["message"] == "notice" and body["request_id"] == request_id
    ]
    return found


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
    code = code_of(notice)
    assert [entry.code for entry in store.open_requests("wechat", "alice")] == [code]
    assert notice["text"].startswith(
        f"🔔 等待你的决策 · {code}\n\n📋 操作：删除旧用户\n🔧 工具：run_sql\n内容：\n  sql: DROP TABLE users"
    )
    assert f"回复以下任一选项：\n  1 {code}  ✅ 批准\n  2 {code}  ❌ 拒绝" in notice["text"]
    answer = reply(server, ALICE, " １ ")
    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "to": ALICE, "reply": "✅ 已批准：删除旧用户"}
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "wechat")
    update = messages(bridge, 2)[1]
    assert update["message"] == "update"
    assert update["text"] == f"✅ 已批准（alice） · {code}\n📋 操作：删除旧用户"
    claim = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    store.finish_execution(request_id, claim.token, succeeded=True, result={"rows": 3})
    follow_up = messages(bridge, 3)[2]
    assert follow_up["message"] == "follow_up"
    assert follow_up["text"] == f'✅ run_sql 已执行 · {code}\n结果：{{"rows": 3}}'
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


def test_with_two_pending_a_bare_reply_decides_nothing_and_lists_the_codes(
    server: LiveServer, bridge: Receiver
) -> None:
    """The tester's case: A (DROP TABLE a), then B (wire_money). A bare `1` used to approve B,
    the newest, which the agent chose to send last."""
    store = server.store
    drop = ask(store, "Drop a table", args={"sql": "DROP TABLE a"})
    code_a = code_of(notice_for(bridge, 1, drop))
    wire = ask(
        store,
        "Wire money",
        tool="wire_money",
        args={"to": "acct-9\u202e", "amount": 5000, "memo": "rent"},
    )
    code_b = code_of(notice_for(bridge, 2, wire))
    assert code_a != code_b
    bare = reply(server, ALICE, "1").json()
    assert bare == {
        "ok": False,
        "to": ALICE,
        "reply": "\n".join(
            [
                f"有 2 个请求在等你，回复须带上编号（如 1 {code_b} 批准、2 {code_b} 拒绝）。未做任何决策。",
                f"  {code_a}  run_sql · sql: DROP TABLE a",
                f"  {code_b}  wire_money · to: acct-9\\u202e, amount: 5000",
            ]
        ),
    }
    assert (status(store, drop), status(store, wire)) == ("pending", "pending")
    bare_reject = reply(server, ALICE, "2 不行").json()
    assert bare_reject["ok"] is False and status(store, wire) == "pending"
    coded = reply(server, ALICE, f"1 {code_a.lower()}").json()
    assert coded == {
        "ok": True,
        "to": ALICE,
        "reply": "\n".join(
            [
                "✅ 已批准：Drop a table",
                "还有 1 个请求在等你：",
                f"  {code_b}  wire_money · to: acct-9\\u202e, amount: 5000",
            ]
        ),
    }
    assert (status(store, drop), status(store, wire)) == ("approved", "pending")
    last = reply(server, ALICE, "2").json()
    assert last == {"ok": True, "to": ALICE, "reply": "❌ 已拒绝：Wire money"}, (
        "one open: a bare reply decides it"
    )
    assert status(store, wire) == "rejected"


@pytest.mark.parametrize("form", ["{code} 1", "批准 {code}", "  {lower}   YES ", "Approve {code}"])
def test_a_coded_reply_decides_that_request_in_any_form(
    server: LiveServer, bridge: Receiver, form: str
) -> None:
    store = server.store
    first = ask(store, "first")
    code = code_of(notice_for(bridge, 1, first))
    second = ask(store, "second")
    notice_for(bridge, 2, second)
    answer = reply(server, ALICE, form.format(code=code, lower=code.lower())).json()
    assert answer["ok"] is True and answer["reply"].startswith("✅ 已批准：first\n还有 1 个请求在等你：")
    assert (status(store, first), status(store, second)) == ("approved", "pending")


def test_an_unknown_code_or_a_closed_requests_code_decides_nothing_and_lists_the_open_ones(
    server: LiveServer, bridge: Receiver
) -> None:
    store = server.store
    done = ask(store, "done already")
    done_code = code_of(notice_for(bridge, 1, done))
    assert reply(server, ALICE, f"2 {done_code}").json()["ok"] is True
    assert status(store, done) == "rejected"
    waiting = ask(store, "still waiting", args={"sql": "SELECT 1"})
    waiting_code = code_of(notice_for(bridge, 3, waiting))
    listed = f"等你决策的请求：\n  {waiting_code}  run_sql · sql: SELECT 1"
    unknown = "QQQQ" if "QQQQ" not in (done_code, waiting_code) else "RRRR"
    answer = reply(server, ALICE, f"1 {unknown}").json()
    assert answer == {
        "ok": False,
        "to": ALICE,
        "reply": f"你在这里没有编号为 {unknown} 的请求。未做任何决策。\n{listed}",
    }
    late = reply(server, ALICE, f"1 {done_code}").json()
    assert late == {"ok": False, "to": ALICE, "reply": f"该请求已处理：❌ 已拒绝（alice）。\n{listed}"}
    assert (status(store, done), status(store, waiting)) == ("rejected", "pending")
    bob_knows_the_code = reply(server, BOB, f"1 {waiting_code}").json()
    assert bob_knows_the_code["ok"] is False, "a code is the person's: bob has none"
    assert status(store, waiting) == "pending"


def test_a_reply_delivered_twice_decides_once(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    older = ask(store, "first")
    newer = ask(store, "second")
    newer_code = code_of(notice_for(bridge, 2, newer))
    moment = datetime.now(UTC)
    first = reply(server, ALICE, f"1 {newer_code}", at=moment, msg_id="msg_same")
    again = reply(server, ALICE, f"1 {newer_code}", at=moment, msg_id="msg_same")
    assert first.json()["ok"] is True
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
        "reply": "回复 1（或 批准）批准、2（或 拒绝）拒绝，并带上请求消息里的编号（如 1 K7QD）；"
        "只有一个请求在等你时，只回 1 或 2 也可以。",
    }
    assert status(server.store, request_id) == "pending"


def test_a_reply_after_expiry_is_told_so_and_the_expiry_is_sent(server: LiveServer, bridge: Receiver) -> None:
    store = server.store
    request_id = ask(store, "Pay the invoice", seconds=1.5)
    code = code_of(messages(bridge, 1)[0])
    wait_until(lambda: status(store, request_id) == "expired")
    answer = reply(server, ALICE, "1")
    assert answer.json() == {"ok": False, "to": ALICE, "reply": "请求已过期 / the request expired"}
    coded = reply(server, ALICE, f"1 {code}")
    assert coded.json() == {"ok": False, "to": ALICE, "reply": "请求已过期 / the request expired"}
    update = messages(bridge, 2)[1]
    assert (update["message"], update["text"]) == ("update", f"⌛ 已过期 · {code}\n📋 操作：Pay the invoice")
    assert status(store, request_id) == "expired"


def test_a_cancelled_request_is_sent_as_cancelled(server: LiveServer, bridge: Receiver) -> None:
    request_id = ask(server.store, "Pay the invoice")
    code = code_of(messages(bridge, 1)[0])
    server.store.cancel(request_id, actor="agent", reason="run aborted")
    update = messages(bridge, 2)[1]
    assert update["text"].startswith(f"🚫 已取消（agent） · {code}\n📋 操作：Pay the invoice")


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
