"""What the chat channels send people, through the one mechanism every channel renders from
(`build_notice`, `build_follow_up`): characters a person cannot see (a bidi override, a
zero-width space, a control character) written as escapes in the payloads Slack, WeCom and
Feishu receive (their local stand-ins record them), and the tool's result in the follow-up of
every channel that sends one: redacted by the rule, cut short, escaped."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from standardwebhooks import Webhook

from signoff import Approve, Reject
from signoff._util import utcnow
from signoff.channels import Channel, FollowUp, Notice, build_follow_up, build_notice
from signoff.channels.email import EmailChannel
from signoff.channels.feishu import FeishuChannel
from signoff.channels.notice import RESULT_CHARS, result_text
from signoff.channels.slack import SlackChannel
from signoff.channels.text import TextChannel
from signoff.channels.wecom import WeComChannel
from signoff.destinations import Destinations
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store
from tests.helpers import decided_digest

from ..receivers import Receiver
from . import platforms
from .mailserver import MailServer
from .slack_fake import TOKEN, FakeSlack

HIDDEN = {"\u202e": "\\u202e", "\u200b": "\\u200b", "\x07": "\\u0007"}
"""A bidi override, a zero-width space, a control character (BEL), and how each must read."""
ARGS = {
    "to": "billing@company.com\u202etxt.exe",
    "note": "a\u200bb",
    "bell": "ding\x07",
    "password": "hunter2",
}
RESULT = {
    "status": "sent\u202e",
    "password": "hunter2",
    "echo": "logged in as billing with hunter2",
    "nested": [{"password": "hunter2", "ok": True}],
}
TEXT_SECRET = "whsec_" + base64.b64encode(b"a bridge's secret, 32 bytes long").decode()


def ask(store: Store, n: int = 1) -> str:
    new = NewRequest(
        thread_id="thread-v",
        tool_call_id=f"call-{n}",
        tool_name="send_email",
        args=ARGS,
        description="Mail \u202eeht\u200b invoice\x07",
        deadline=utcnow() + timedelta(hours=24),
        requester="carol",
        rule=RequestRule(approvers=("alice",), redact=("password",)),  # alice decides, not carol
    )
    return store.create_request(new)[0].id


def notice_of(store: Store, request_id: str) -> Notice:
    return build_notice(
        store.get_request(request_id), approver="alice", link="http://x/h/1", request_url="http://x/r"
    )


def payloads(*calls: Any) -> str:
    """Everything sent, as the JSON text a platform receives (non-ASCII kept as it is)."""
    return json.dumps([call.body for call in calls], ensure_ascii=False)


def assert_visible(sent: str, *, expect: tuple[str, ...] = ("\\u202e",)) -> None:
    for raw in HIDDEN:
        assert raw not in sent, f"{raw!r} reached the platform raw"
    # in JSON text an escape written for a person is a backslash, itself escaped
    for shown in expect:
        assert shown.replace("\\", "\\\\") in sent, f"{shown} is not shown"


def finish(store: Store, request_id: str, *, succeeded: bool = True, **kw: Any) -> FollowUp:
    decided = store.decide(request_id, Approve(), actor="alice")
    claim = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    finished = store.finish_execution(request_id, claim.token, succeeded=succeeded, **kw)
    return build_follow_up(decided, finished, "en")


# -- the platforms' stand-ins ---------------------------------------------------------------------


@pytest.fixture
def slack_api() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def wecom_api() -> Iterator[platforms.FakePlatform]:
    with platforms.wecom(corp_id="wwcorp") as fake:
        yield fake


@pytest.fixture
def feishu_app() -> str:
    return f"cli_{uuid.uuid4().hex[:12]}"  # lark-oapi caches tokens per app id


@pytest.fixture
def feishu_api(feishu_app: str) -> Iterator[platforms.FakePlatform]:
    with platforms.feishu(app_id=feishu_app) as fake:
        yield fake


def slack(fake: FakeSlack) -> SlackChannel:
    return SlackChannel("slack", bot_token=TOKEN, signing_secret="s3", api_url=fake.api_url, timeout=5)


def wecom(api: platforms.FakePlatform) -> WeComChannel:
    return WeComChannel(
        "wecom",
        corp_id="wwcorp",
        corp_secret="corp-secret",
        agent_id=1000002,
        token="cb-token",
        encoding_aes_key="abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        base_url=api.url,
    )


def feishu(api: platforms.FakePlatform, app_id: str) -> FeishuChannel:
    return FeishuChannel(
        "feishu",
        app_id=app_id,
        app_secret="app-secret",
        encrypt_key="encrypt-key",
        verification_token="verification-token",
        base_url=api.url,
        timeout=5,
    )


def run(channel: Channel, *steps: Callable[[Channel], Awaitable[Any]]) -> None:
    async def scenario() -> None:
        try:
            for step in steps:
                await step(channel)
        finally:
            await channel.close()

    asyncio.run(scenario())


# -- hidden characters (item 2) ---------------------------------------------------------------------


def test_the_notice_every_channel_renders_from_is_escaped(sqlite_store: Store) -> None:
    notice = notice_of(sqlite_store, ask(sqlite_store))
    shown = "\n".join(
        [notice.title, notice.description, notice.tool, *(f"{k}: {v}" for k, v in notice.arg_rows)]
    )
    for raw, escaped in HIDDEN.items():
        assert raw not in shown and escaped in shown
    assert dict(notice.arg_rows)["to"] == "billing@company.com\\u202etxt.exe"
    assert dict(notice.arg_rows)["password"] == "***"
    assert notice.description == "Mail \\u202eeht\\u200b invoice\\u0007"
    assert notice.args["to"] == ARGS["to"], "the args themselves (an edit form's values) are unchanged"


def test_slack_gets_hidden_characters_as_escapes(sqlite_store: Store, slack_api: FakeSlack) -> None:
    request_id = ask(sqlite_store)
    notice = notice_of(sqlite_store, request_id)
    sqlite_store.decide(request_id, Reject(message="no\u202e way"), actor="alice")
    ended = notice_of(sqlite_store, request_id)
    ref = {"channel": "D1", "ts": "1.1"}
    run(slack(slack_api), lambda ch: ch.send(notice, "U1"), lambda ch: ch.update(ended, "U1", ref))
    sent = payloads(*slack_api.of("chat.postMessage"), *slack_api.of("chat.update"))
    assert_visible(sent, expect=tuple(HIDDEN.values()))
    assert "billing@company.com\\\\u202etxt.exe" in sent
    assert "“no\\\\u202e way”" in sent, "the reason said in the final state too"
    assert "hunter2" not in sent


def test_wecom_gets_hidden_characters_as_escapes(
    sqlite_store: Store, wecom_api: platforms.FakePlatform
) -> None:
    request_id = ask(sqlite_store)
    notice = notice_of(sqlite_store, request_id)
    run(wecom(wecom_api), lambda ch: ch.send(notice, "zhangsan"))
    (card,) = wecom_api.called("POST", "/cgi-bin/message/send")
    sent = payloads(card)
    assert_visible(sent, expect=("\\u202e", "\\u200b"))
    rows = card.body["template_card"]["horizontal_content_list"]
    assert {"keyname": "note", "value": "a\\u200bb"} in rows
    assert {"keyname": "bell", "value": "ding\\u0007"} in rows
    assert card.body["template_card"]["main_title"]["desc"].startswith("Mail \\u202eeht")
    assert "hunter2" not in sent


def test_feishu_gets_hidden_characters_as_escapes(
    sqlite_store: Store, feishu_api: platforms.FakePlatform, feishu_app: str
) -> None:
    request_id = ask(sqlite_store)
    notice = notice_of(sqlite_store, request_id)
    sqlite_store.decide(request_id, Reject(message="no\u200b"), actor="alice")
    ended = notice_of(sqlite_store, request_id)
    run(
        feishu(feishu_api, feishu_app),
        lambda ch: ch.send(notice, "ou_alice"),
        lambda ch: ch.update(ended, "ou_alice", {"message_id": "om_1"}),
    )
    calls = [call for call in feishu_api.calls if "/im/v1/messages" in call.path]
    assert len(calls) == 2
    sent = json.dumps([json.loads(call.body["content"]) for call in calls], ensure_ascii=False)
    assert_visible(sent, expect=tuple(HIDDEN.values()))
    assert "to: billing@company.com\\\\u202etxt.exe" in sent
    assert "no\\\\u200b" in sent
    assert "hunter2" not in sent


# -- the result in the follow-up (item 3) ------------------------------------------------------------


def test_the_result_is_redacted_escaped_and_cut(sqlite_store: Store) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    assert message.headline == "✅ send_email ran"
    assert message.result == (
        '{"status": "sent\\u202e", "password": "***", "echo": "logged in as billing with ***", '
        '"nested": [{"password": "***", "ok": true}]}'
    )
    assert message.text == f"✅ send_email ran\nResult: {message.result}"
    request = sqlite_store.get_request(ask(sqlite_store, 2))
    long = result_text("x" * 5000, request)
    assert len(long) == RESULT_CHARS and long.endswith("…")
    assert result_text("line one\nline two\u200b", request) == "line one\nline two\\u200b"


def test_a_failure_says_its_error_and_no_result(sqlite_store: Store) -> None:
    message = finish(sqlite_store, ask(sqlite_store), succeeded=False, error="boom\u202e")
    assert message.text == "❌ send_email failed: boom\\u202e"
    assert message.result is None


def test_slack_follow_up_carries_the_result(sqlite_store: Store, slack_api: FakeSlack) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    run(slack(slack_api), lambda ch: ch.follow_up(message, "U1", {"channel": "D1", "ts": "1.1"}))
    (call,) = slack_api.of("chat.postMessage")
    assert call.body["thread_ts"] == "1.1"
    assert call.body["text"].startswith(
        '✅ send_email ran\nResult: {"status": "sent\\u202e", "password": "***"'
    )
    assert "hunter2" not in call.body["text"] and "\u202e" not in call.body["text"]


def test_wecom_follow_up_carries_the_result(sqlite_store: Store, wecom_api: platforms.FakePlatform) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    run(wecom(wecom_api), lambda ch: ch.follow_up(message, "zhangsan", {}))
    (call,) = wecom_api.called("POST", "/cgi-bin/message/send")
    assert call.body["text"] == {"content": message.text}
    assert message.result is not None and message.result in call.body["text"]["content"]
    assert "hunter2" not in payloads(call)


def test_feishu_follow_up_carries_the_result(
    sqlite_store: Store, feishu_api: platforms.FakePlatform, feishu_app: str
) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    run(feishu(feishu_api, feishu_app), lambda ch: ch.follow_up(message, "ou_alice", {"message_id": "om_7"}))
    (reply,) = feishu_api.called("POST", "/open-apis/im/v1/messages/om_7/reply")
    assert json.loads(reply.body["content"]) == {"text": message.text}
    assert "Result: {" in message.text and "hunter2" not in payloads(reply)


def test_email_follow_up_carries_the_result(sqlite_store: Store) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    with MailServer() as smtp:
        mail = EmailChannel(
            "mail", sender="signoff <approvals@example.com>", host="127.0.0.1", port=smtp.port
        )
        run(mail, lambda ch: ch.follow_up(message, "alice@example.com", {"message_id": "<n@x>"}))
        (got,) = smtp.handler.wait_for(1)
    plain = got.mail.get_body(("plain",))
    html = got.mail.get_body(("html",))
    assert plain is not None and html is not None
    text, page = plain.get_content().replace("\r\n", "\n"), html.get_content()
    assert "✅ send_email ran\nResult: {" in text
    assert "&#34;password&#34;: &#34;***&#34;" in page or "&quot;password&quot;: &quot;***&quot;" in page
    assert ">✅ send_email ran</h1>" in page
    for part in (text, page):
        assert "hunter2" not in part and "\u202e" not in part and "sent\\u202e" in part


def test_text_follow_up_carries_the_result_and_the_code(sqlite_store: Store) -> None:
    message = finish(sqlite_store, ask(sqlite_store), result=RESULT)
    with Receiver() as bridge:
        text = TextChannel(
            "wechat",
            platform="wechat",
            send_url=bridge.url,
            secret=TEXT_SECRET,
            destinations=Destinations(allow_private=True),  # the bridge listens on loopback
        )
        run(text, lambda ch: ch.follow_up(message, "wxid_alice", {"id": "m", "code": "K7QD"}))
        (post,) = bridge.wait_for(1)
    body = Webhook(TEXT_SECRET).verify(post.body, post.headers)
    assert body["message"] == "follow_up"
    assert body["text"] == f"✅ send_email ran · K7QD\nResult: {message.result}"
    assert "hunter2" not in body["text"]
