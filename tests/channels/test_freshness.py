"""Every signed callback's timestamp is whole seconds or nothing: `nan` (which compared false
with the window, so it never went stale), `inf`, `1e3`, `12.5`, an empty one, and forms that
read as numbers elsewhere (`+N`, ` N`, `N.0`) are refused by Slack, Standard Webhooks in, the
text bridge, WeCom and Feishu alike, each signed right so that only the timestamp is wrong."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable

import httpx
import pytest

from signoff.channels import BadSignature
from signoff.channels.feishu import FeishuChannel
from signoff.channels.freshness import check_fresh, parse_timestamp
from signoff.channels.slack import SlackChannel
from signoff.channels.text import TextChannel
from signoff.channels.wecom import WeComChannel
from signoff.store import Store

from ..live import LiveServer
from ..test_outbox import QUICK, ask
from .signers import card_action, card_event, feishu_callback, wecom_callback
from .slack_signing import SIGNING_SECRET, click, form

NOW = int(time.time())
UNREADABLE = ["nan", "NaN", "inf", "-inf", "1e3", "12.5", "", f"{NOW}.0", f"+{NOW}", f" {NOW}", f"{NOW}\n"]
SENDABLE = [stamp for stamp in UNREADABLE if stamp == stamp.strip()]
"""The ones an HTTP header can carry (a header's value has no spaces at either end)."""
SECRET = "whsec_" + base64.b64encode(b"a shared secret of 32 bytes, ok.").decode()


def standard_signature(secret: str, msg_id: str, stamp: str, body: bytes) -> str:
    """Standard Webhooks' v1 signature over the timestamp's text as given (the library signs
    only whole seconds it formats itself)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def standard_headers(secret: str, body: bytes, stamp: str, msg_id: str = "msg_1") -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": stamp,
        "webhook-signature": standard_signature(secret, msg_id, stamp, body),
        "content-type": "application/json",
    }


@pytest.mark.parametrize("stamp", UNREADABLE)
def test_the_parser_takes_whole_seconds_only(stamp: str) -> None:
    with pytest.raises(BadSignature, match="not a number of whole seconds"):
        parse_timestamp(stamp)
    with pytest.raises(BadSignature):
        check_fresh(stamp)


def test_whole_seconds_within_the_window_pass() -> None:
    assert parse_timestamp(str(NOW)) == NOW
    assert check_fresh(str(NOW), now=NOW + 299) == NOW
    with pytest.raises(BadSignature, match="too old"):
        check_fresh(str(NOW), now=NOW + 301)
    with pytest.raises(BadSignature, match="too new"):
        check_fresh(str(NOW), now=NOW - 301)
    with pytest.raises(BadSignature, match="missing"):
        check_fresh(None)


@pytest.mark.parametrize("stamp", UNREADABLE)
def test_slack_refuses_it(stamp: str) -> None:
    slack = SlackChannel(bot_token="xoxb-1", signing_secret=SIGNING_SECRET)
    body = form(click("r1", "approve"))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {"x-slack-request-timestamp": stamp, "x-slack-signature": f"v0={digest}"}
    with pytest.raises(BadSignature):
        slack.verify(body, headers)
    good = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{good}:".encode() + body, hashlib.sha256).hexdigest()
    assert slack.verify(body, {"x-slack-request-timestamp": good, "x-slack-signature": f"v0={digest}"})


@pytest.mark.parametrize("stamp", UNREADABLE)
def test_the_text_bridge_refuses_it(stamp: str) -> None:
    text = TextChannel(
        "wechat",
        platform="wechat",
        send_url="https://bridge.example.com/send",
        secret=SECRET,
    )
    body = json.dumps({"from": "wxid_1", "text": "1"}).encode()
    with pytest.raises(BadSignature):
        text.verify(body, standard_headers(SECRET, body, stamp))
    assert text.verify(body, standard_headers(SECRET, body, str(int(time.time())))).kind == "decide"


WECOM_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"


@pytest.mark.parametrize("stamp", UNREADABLE)
def test_wecom_refuses_it(stamp: str) -> None:
    wecom = WeComChannel(
        "wecom",
        corp_id="wwcorp",
        corp_secret="s",
        agent_id=1000002,
        token="cb-token",
        encoding_aes_key=WECOM_KEY,
        base_url="http://127.0.0.1:9",
    )
    message = card_event(user="zhangsan", key="so1|approve|req_1", corp_id="wwcorp")

    def callback(timestamp: str) -> tuple[dict[str, str], bytes]:
        return wecom_callback(
            token="cb-token",
            encoding_aes_key=WECOM_KEY,
            corp_id="wwcorp",
            message=message,
            timestamp=timestamp,
        )

    query, body = callback(stamp)
    with pytest.raises(BadSignature):
        wecom.verify(body, {}, query)
    query, body = callback(str(int(time.time())))
    assert wecom.verify(body, {}, query).kind == "decide"


@pytest.mark.parametrize("stamp", UNREADABLE)
def test_feishu_refuses_it(stamp: str) -> None:
    feishu = FeishuChannel(
        "feishu",
        app_id="cli_fresh",
        app_secret="s",
        encrypt_key="encrypt-key",
        verification_token="verification-token",
        base_url="http://127.0.0.1:9",
    )
    value = {"signoff": "so1", "decision": "approve", "request_id": "req_1"}

    def callback(timestamp: str) -> tuple[dict[str, str], bytes]:
        payload = card_action(token="verification-token", open_id="ou_alice", value=value)
        return feishu_callback(encrypt_key="encrypt-key", payload=payload, timestamp=timestamp)

    headers, body = callback(stamp)
    with pytest.raises(BadSignature):
        feishu.verify(body, headers)
    headers, body = callback(str(int(time.time())))
    assert feishu.verify(body, headers).kind == "decide"


@pytest.fixture
def server(sqlite_store: Store) -> LiveServer:
    sqlite_store.add_user("alice", role="member", actor="test")
    return LiveServer(sqlite_store, QUICK)


def test_standard_webhooks_in_refuse_it_with_401_audited_and_decide_nothing(server: LiveServer) -> None:
    store = server.store
    webhook, secret = store.add_webhook(
        "http://127.0.0.1:9/unused", inbound_as="alice", allow_private=True, actor="test"
    )
    request_id = ask(store, call="fresh", approvers=("alice",))
    body = json.dumps({"request_id": request_id, "decision": {"type": "approve"}}).encode()
    url = f"{server.url}/v1/webhooks/{webhook.id}/decisions"
    send: Callable[[str, str], httpx.Response] = lambda stamp, msg_id: httpx.post(  # noqa: E731
        url, content=body, headers=standard_headers(secret, body, stamp, msg_id)
    )
    with server:
        for number, stamp in enumerate(SENDABLE):
            answer = send(stamp, f"msg_{number}")
            assert answer.status_code == 401, (stamp, answer.text)
        assert store.get_request(request_id).status.value == "pending"
        assert send(str(int(time.time())), "msg_good").status_code == 200
    refused = [entry for entry in store.audit_entries() if entry.action == "callback.refused"]
    assert len(refused) == len(SENDABLE)
    assert store.get_request(request_id).status.value == "approved"
