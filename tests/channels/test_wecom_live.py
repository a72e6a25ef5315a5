"""WeCom end to end: a real signoff server (LiveServer) whose outbox delivers to a local
stand-in of WeCom's API, and callbacks made as WeCom makes them (the tests' own encryptor) on the
WeCom callback URL: a click decides as the clicking person, the card is updated once to its
final state, and forged, stale and non-approver clicks are refused and audited; expiry updates
the card too. On SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from signoff._util import utcnow
from signoff.channels import ChannelConfig, ChannelRegistry
from signoff.channels.wecom import WeComChannel
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

from ..live import LiveServer
from ..test_outbox import QUICK, wait_until
from . import platforms
from .signers import card_event, wecom_callback, wecom_decrypt, wecom_encrypt, wecom_signature

AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
CORP = "wwcorp"
TOKEN = "cb-token"
SEND = "/cgi-bin/message/send"
UPDATE = "/cgi-bin/message/update_template_card"


@pytest.fixture
def api() -> Iterator[platforms.FakePlatform]:
    with platforms.wecom(corp_id=CORP) as fake:
        yield fake


@pytest.fixture
def server(store: Store, api: platforms.FakePlatform) -> Iterator[LiveServer]:
    for name, address in (("alice", "zhangsan"), ("bob", "lisi")):
        store.add_user(name, role="member", actor="test")
        store.set_address(name, "wecom", address, actor="test")
    wecom = WeComChannel(
        "wecom",
        corp_id=CORP,
        corp_secret="corp-secret",
        agent_id=1000002,
        token=TOKEN,
        encoding_aes_key=AES_KEY,
        base_url=api.url,
    )
    registry = ChannelRegistry()
    registry.add(wecom, ChannelConfig(name="wecom", kind="wecom", locale="zh"))
    live = LiveServer(store, QUICK, channels=registry)
    with live:
        yield live


def ask(store: Store, *, seconds: float = 3600, call: str = "c1") -> str:
    new = NewRequest(
        thread_id="thread-1",
        tool_call_id=call,
        tool_name="execute",
        args={"command": "rm -rf /tmp/build"},
        description="Clean the build directory",
        deadline=utcnow() + timedelta(seconds=seconds),
        rule=RequestRule(approvers=("alice",), channels=("wecom",), allowed_decisions=("approve", "reject")),
    )
    return store.create_request(new)[0].id


def sent_card(api: platforms.FakePlatform) -> dict[str, object]:
    wait_until(lambda: api.called("POST", SEND))
    card: dict[str, object] = api.called("POST", SEND)[0].body["template_card"]
    return card


def click(
    server: LiveServer, user: str, key: str, created: int | None = None, **kwargs: object
) -> httpx.Response:
    query, body = wecom_callback(
        token=TOKEN,
        encoding_aes_key=AES_KEY,
        corp_id=CORP,
        message=card_event(user=user, key=key, corp_id=CORP, created=created),
        **kwargs,  # type: ignore[arg-type]
    )
    return httpx.post(f"{server.url}/channels/wecom/wecom", params=query, content=body)


def refusals(store: Store) -> list[str]:
    return [entry.action for entry in store.audit_entries() if "refused" in entry.action]


def test_a_click_approves_and_the_card_is_updated_once(
    server: LiveServer, api: platforms.FakePlatform
) -> None:
    store = server.store
    request_id = ask(store)
    card = sent_card(api)
    assert api.called("POST", SEND)[0].body["touser"] == "zhangsan"
    assert card["main_title"] == {"title": "AI 想执行：execute", "desc": "Clean the build directory"}
    approve = card["button_list"][0]  # type: ignore[index]
    answer = click(server, "zhangsan", approve["key"])
    assert answer.status_code == 200
    assert answer.text == ""
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "wecom")
    wait_until(lambda: api.called("POST", UPDATE))
    (update,) = api.called("POST", UPDATE)
    assert update.body["response_code"] == "rc-1"
    assert update.body["userids"] == ["zhangsan"]
    assert update.body["button"] == {"replace_name": "✅ 已批准（alice）"}
    again = click(server, "zhangsan", approve["key"])  # a second click on the old card
    assert again.status_code == 200
    time.sleep(0.5)
    assert len(api.called("POST", UPDATE)) == 1, "the card is updated once"
    assert store.get_request(request_id).status.value == "approved"


def test_a_reject_click_rejects(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store)
    reject = sent_card(api)["button_list"][1]  # type: ignore[index]
    assert click(server, "zhangsan", reject["key"]).status_code == 200
    assert server.store.get_request(request_id).status.value == "rejected"
    wait_until(lambda: api.called("POST", UPDATE))
    assert api.called("POST", UPDATE)[0].body["button"] == {"replace_name": "❌ 已拒绝（alice）"}


def test_the_url_check_answers_the_echostr_as_text(server: LiveServer) -> None:
    echostr = wecom_encrypt(AES_KEY, CORP, "echo-5812")
    stamp = str(int(time.time()))
    query = {
        "msg_signature": wecom_signature(TOKEN, stamp, "n", echostr),
        "timestamp": stamp,
        "nonce": "n",
        "echostr": echostr,
    }
    answer = httpx.get(f"{server.url}/channels/wecom/wecom", params=query)
    assert answer.status_code == 200
    assert answer.text == "echo-5812"
    forged = httpx.get(f"{server.url}/channels/wecom/wecom", params={**query, "nonce": "m"})
    assert forged.status_code == 401


def test_a_non_approver_is_refused_with_an_encrypted_reply_and_audited(
    server: LiveServer, api: platforms.FakePlatform
) -> None:
    store = server.store
    request_id = ask(store)
    approve = sent_card(api)["button_list"][0]  # type: ignore[index]
    answer = click(server, "lisi", approve["key"])  # bob's WeCom id: not an approver
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/xml")
    encrypted = answer.text.split("<Encrypt><![CDATA[")[1].split("]]>")[0]
    message, corp = wecom_decrypt(AES_KEY, encrypted)
    assert corp == CORP.encode()
    assert b"<ToUserName><![CDATA[lisi]]></ToUserName>" in message
    assert "你不是这个请求的审批人".encode() in message  # in the channel's language (zh)
    assert store.get_request(request_id).status.value == "pending"
    assert any(entry.actor == "bob" for entry in store.audit_entries(request_id=request_id))
    stranger = click(server, "nobody", approve["key"])
    assert stranger.status_code == 200
    assert store.get_request(request_id).status.value == "pending"
    assert not api.called("POST", UPDATE)


def test_forged_and_stale_clicks_are_401_and_audited(server: LiveServer, api: platforms.FakePlatform) -> None:
    store = server.store
    request_id = ask(store)
    approve = sent_card(api)["button_list"][0]  # type: ignore[index]
    query, body = wecom_callback(
        token="guessed",
        encoding_aes_key=AES_KEY,
        corp_id=CORP,
        message=card_event(user="zhangsan", key=approve["key"], corp_id=CORP),
    )
    forged = httpx.post(f"{server.url}/channels/wecom/wecom", params=query, content=body)
    assert forged.status_code == 401
    stale = click(server, "zhangsan", approve["key"], timestamp=int(time.time()) - 600)
    assert stale.status_code == 401
    unsigned = httpx.post(f"{server.url}/channels/wecom/wecom", content=body)
    assert unsigned.status_code == 401
    shared = httpx.post(f"{server.url}/channels/wecom/callback", params=query, content=body)
    assert shared.status_code == 400, "the shared route cannot check WeCom's query-string signature"
    assert store.get_request(request_id).status.value == "pending"
    assert refusals(store).count("callback.refused") == 3
    assert httpx.get(f"{server.url}/channels/nope/wecom").status_code == 404


def test_expiry_updates_the_card(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store, seconds=1.5)
    sent_card(api)
    wait_until(lambda: api.called("POST", UPDATE), timeout=20)
    assert server.store.get_request(request_id).status.value == "expired"
    assert api.called("POST", UPDATE)[0].body["button"] == {"replace_name": "⌛ 已过期"}
    late = click(server, "zhangsan", f"so1|approve|{request_id}")
    assert late.status_code == 200
    encrypted = late.text.split("<Encrypt><![CDATA[")[1].split("]]>")[0]
    assert "请求已过期".encode() in wecom_decrypt(AES_KEY, encrypted)[0]


def test_the_server_itself_serves_the_wecom_callback_url(sqlite_store: Store) -> None:
    wecom = WeComChannel(
        "wecom",
        corp_id=CORP,
        corp_secret="s",
        agent_id=1,
        token=TOKEN,
        encoding_aes_key=AES_KEY,
        base_url="http://127.0.0.1:9",
    )
    registry = ChannelRegistry()
    registry.add(wecom)
    with LiveServer(sqlite_store, QUICK, channels=registry) as live:
        unsigned = httpx.get(f"{live.url}/channels/wecom/wecom", params={"echostr": "x"})
        assert unsigned.status_code == 401


def test_a_cancel_updates_the_card(server: LiveServer, api: platforms.FakePlatform) -> None:
    request_id = ask(server.store)
    sent_card(api)
    server.store.cancel(request_id, actor="agent", reason="the run was aborted")
    wait_until(lambda: api.called("POST", UPDATE))
    assert api.called("POST", UPDATE)[0].body["button"] == {"replace_name": "🚫 已取消（agent）"}


def test_racing_clicks_decide_once_and_update_the_card_once(
    server: LiveServer, api: platforms.FakePlatform
) -> None:
    request_id = ask(server.store)
    approve, reject = sent_card(api)["button_list"]  # type: ignore[misc]
    answers: list[httpx.Response] = []
    now = int(time.time())
    threads = [  # six clicks (distinct ones: WeCom's retries of one callback share its CreateTime)
        threading.Thread(
            target=lambda k=key, n=n: answers.append(click(server, "zhangsan", k, created=now - n))
        )
        for n, key in enumerate((approve["key"], reject["key"]) * 3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [answer.status_code for answer in answers] == [200] * 6
    assert sum(answer.text == "" for answer in answers) == 1, "one click decided; the others are refused"
    status = server.store.get_request(request_id).status.value
    assert status in ("approved", "rejected")
    wait_until(lambda: api.called("POST", UPDATE))
    time.sleep(0.5)
    (update,) = api.called("POST", UPDATE)
    assert (
        update.body["button"]["replace_name"]
        == {"approved": "✅ 已批准（alice）", "rejected": "❌ 已拒绝（alice）"}[status]
    )


def test_a_grant_click_approves_and_covers_the_next_same_call(
    server: LiveServer, api: platforms.FakePlatform
) -> None:
    store = server.store
    rule = RequestRule(approvers=("alice",), channels=("wecom",), max_grant=timedelta(minutes=20))

    def asked(call: str) -> str:
        new = NewRequest(
            thread_id="thread-1",
            tool_call_id=call,
            tool_name="execute",
            args={"command": "make"},
            description="Build",
            deadline=utcnow() + timedelta(hours=1),
            rule=rule,
            agent="bot",
        )
        return store.create_request(new)[0].id

    request_id = asked("c1")
    card = sent_card(api)
    grant = card["button_list"][1]  # type: ignore[index]
    assert grant["text"] == "✅ 同类调用 20 分钟内批准" and grant["key"].endswith("|20")
    assert click(server, "zhangsan", grant["key"]).status_code == 200
    decided = store.get_request(request_id)
    assert decided.status.value == "approved" and decided.granted_id is not None
    assert decided.decision is not None and decided.decision.channel == "wecom"
    covered = store.get_request(asked("c2"))
    assert covered.status.value == "approved" and covered.grant_id == decided.granted_id
    forged = click(server, "zhangsan", grant["key"].rsplit("|", 1)[0] + "|600", created=int(time.time()) + 1)
    assert forged.status_code == 200  # an unreadable or later click decides nothing more
    assert len(store.list_grants()) == 1
