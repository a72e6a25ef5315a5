"""The Slack channel's messages: the Block Kit payload field by field, sent, updated and
followed up through slack_sdk against a fake Slack Web API, and Slack's errors sorted into
retry-later and give-up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from signoff import Approve, Reject
from signoff._util import utcnow
from signoff.channels import DeliveryError, FollowUp, Notice, build_notice
from signoff.channels.slack import SlackChannel
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

from .slack_fake import TOKEN, FakeSlack


def ask(store: Store, call: str = "call-1", **rule: Any) -> str:
    new = NewRequest(
        thread_id="thread-1",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com", "body": "<!channel> hi & bye", "password": "hunter2"},
        description="Send a mail to <bob>",
        deadline=utcnow() + timedelta(hours=24),
        requester="carol",
        rule=RequestRule(redact=("password",), **rule),
    )
    return store.create_request(new)[0].id


def notice_of(store: Store, request_id: str, locale: str = "en") -> Notice:
    return build_notice(
        store.get_request(request_id),
        approver="alice",
        link="http://signoff.test/h/so_hdl_x",
        request_url="http://signoff.test/inbox/r/" + request_id,
        locale=locale,  # type: ignore[arg-type]
    )


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def slack(fake: FakeSlack) -> SlackChannel:
    return SlackChannel("slack", bot_token=TOKEN, signing_secret="s3", api_url=fake.api_url, timeout=5)


def test_the_message_shows_title_description_args_and_a_button_per_allowed_decision(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    request_id = ask(sqlite_store, allowed_decisions=("approve", "edit", "reject"))
    ref = asyncio.run(slack.send(notice_of(sqlite_store, request_id), "U123"))
    assert ref == {"channel": "D123", "ts": "1700000000.000001"}
    [call] = fake.of("chat.postMessage")
    assert call.headers["authorization"] == f"Bearer {TOKEN}"
    body = call.body
    assert body["channel"] == "U123"
    assert body["text"] == "AI wants to run: send_email: Send a mail to &lt;bob&gt;"
    assert body["metadata"] == {
        "event_type": "signoff_request",
        "event_payload": {"request_id": request_id, "target": "U123"},
    }
    header, description, args, context, actions = body["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": "AI wants to run: send_email", "emoji": True},
    }
    assert description == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "Send a mail to &lt;bob&gt;"},
    }
    assert args["type"] == "section"
    assert [field["text"] for field in args["fields"]] == [
        "*to*\nbob@example.com",
        "*body*\n&lt;!channel&gt; hi &amp; bye",
        "*password*\n***",
    ]
    assert "hunter2" not in str(body)
    assert context["type"] == "context"
    assert context["elements"][0]["text"] == "⚠️ Valid for 24 hours · Asked by carol"
    assert actions["type"] == "actions" and actions["block_id"] == "signoff.actions"
    buttons = actions["elements"]
    assert [(b["action_id"], b["text"]["text"], b.get("style"), b.get("value")) for b in buttons] == [
        ("signoff.approve", "✅ Approve", "primary", request_id),
        ("signoff.approve_like", "✅ All like this…", None, request_id),
        ("signoff.edit", "✏️ Edit", None, request_id),
        ("signoff.reject", "❌ Reject", "danger", request_id),
        ("signoff.open", "Open in signoff", None, None),
    ]
    assert buttons[-1]["url"] == "http://signoff.test/h/so_hdl_x"


def test_only_the_allowed_decisions_get_buttons_and_chinese_words(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    request_id = ask(sqlite_store, allowed_decisions=("approve",))
    asyncio.run(slack.send(notice_of(sqlite_store, request_id, "zh"), "U9"))
    blocks = fake.of("chat.postMessage")[0].body["blocks"]
    assert blocks[0]["text"]["text"] == "AI 想执行：send_email"
    assert blocks[-2]["elements"][0]["text"] == "⚠️ 24 小时内有效 · 发起人：carol"
    labels = [b["text"]["text"] for b in blocks[-1]["elements"]]
    assert labels == ["✅ 批准", "✅ 批准所有同类…", "在 signoff 中打开"]
    request_id = ask(sqlite_store, "call-2", allowed_decisions=("approve",), batch=False)
    asyncio.run(slack.send(notice_of(sqlite_store, request_id, "zh"), "U9"))
    labels = [b["text"]["text"] for b in fake.of("chat.postMessage")[1].body["blocks"][-1]["elements"]]
    assert labels == ["✅ 批准", "在 signoff 中打开"]  # a rule saying `batch: false` offers no batch


def test_the_final_state_replaces_the_buttons(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    request_id = ask(sqlite_store, approvers=("alice",))
    sqlite_store.decide(request_id, Reject(message="not <today>"), actor="alice", channel="slack")
    ref = {"channel": "D123", "ts": "1700000000.000001"}
    assert asyncio.run(slack.update(notice_of(sqlite_store, request_id), "U123", ref)) is None
    [call] = fake.of("chat.update")
    assert (call.body["channel"], call.body["ts"]) == ("D123", "1700000000.000001")
    assert call.body["text"] == "AI wants to run: send_email: ❌ Rejected by alice"
    blocks = call.body["blocks"]
    assert not [block for block in blocks if block["type"] == "actions"]
    outcome, details = blocks[-2:]
    assert outcome["text"]["text"] == "*❌ Rejected by alice*\n“not &lt;today&gt;”"
    assert details["elements"][0]["text"].startswith("via slack · <!date^")
    assert details["elements"][0]["text"].endswith("|Open in signoff>")
    assert fake.of("chat.postMessage") == []


def test_the_follow_up_is_a_reply_in_the_messages_thread(fake: FakeSlack, slack: SlackChannel) -> None:
    message = FollowUp(
        request_id="r1", tool="send_email", status="failed", text="❌ failed: <!here>", locale="en"
    )
    ref = asyncio.run(slack.follow_up(message, "U123", {"channel": "D123", "ts": "17.5"}))
    [call] = fake.of("chat.postMessage")
    assert call.body == {"channel": "D123", "text": "❌ failed: &lt;!here&gt;", "thread_ts": "17.5"}
    assert ref is not None and ref["channel"] == "D123"


def test_slack_errors_are_retried_or_given_up(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    notice = notice_of(sqlite_store, ask(sqlite_store))
    fake.failures["chat.postMessage"] = ["ratelimited", "channel_not_found", "internal_error"]
    with pytest.raises(DeliveryError) as limited:
        asyncio.run(slack.send(notice, "U1"))
    assert limited.value.retry and limited.value.retry_after == 1.0
    with pytest.raises(DeliveryError) as missing:
        asyncio.run(slack.send(notice, "U1"))
    assert not missing.value.retry and "channel_not_found" in missing.value.message
    with pytest.raises(DeliveryError) as hiccup:
        asyncio.run(slack.send(notice, "U1"))
    assert hiccup.value.retry and hiccup.value.retry_after is None
    assert asyncio.run(slack.send(notice, "U1"))["ts"]


def test_a_wrong_token_is_given_up_and_an_unreachable_slack_retried(
    sqlite_store: Store, fake: FakeSlack
) -> None:
    notice = notice_of(sqlite_store, ask(sqlite_store))
    wrong = SlackChannel(bot_token="xoxb-wrong", signing_secret="s", api_url=fake.api_url)
    with pytest.raises(DeliveryError) as refused:
        asyncio.run(wrong.send(notice, "U1"))
    assert not refused.value.retry and "invalid_auth" in refused.value.message
    gone = SlackChannel(bot_token=TOKEN, signing_secret="s", api_url="http://127.0.0.1:9/api/", timeout=2)
    with pytest.raises(DeliveryError) as unreachable:
        asyncio.run(gone.send(notice, "U1"))
    assert unreachable.value.retry


def test_an_update_without_a_message_is_given_up(sqlite_store: Store, slack: SlackChannel) -> None:
    request_id = ask(sqlite_store, approvers=("alice",))
    sqlite_store.decide(request_id, Approve(), actor="alice")
    with pytest.raises(DeliveryError) as error:
        asyncio.run(slack.update(notice_of(sqlite_store, request_id), "U1", {}))
    assert not error.value.retry


def test_many_args_stay_within_slacks_block_limit(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    new = NewRequest(
        thread_id="thread-2",
        tool_call_id="call-2",
        tool_name="bulk",
        args={f"arg{n}": n for n in range(60)},
        description="Many",
        deadline=utcnow() + timedelta(hours=1),
    )
    request_id = sqlite_store.create_request(new)[0].id
    asyncio.run(slack.send(notice_of(sqlite_store, request_id), "U1"))
    blocks = fake.of("chat.postMessage")[0].body["blocks"]
    sections = [block for block in blocks if block["type"] == "section" and "fields" in block]
    assert [len(section["fields"]) for section in sections] == [10, 10, 10, 10]
    assert "left out" in blocks[2 + len(sections)]["elements"][0]["text"]


def test_a_notice_sent_again_by_the_same_process_is_not_posted_twice(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    notice = notice_of(sqlite_store, ask(sqlite_store))
    first = asyncio.run(slack.send(notice, "U1"))
    assert asyncio.run(slack.send(notice, "U1")) == first
    assert asyncio.run(slack.send(notice, "U2")) != first
    assert [call.body["channel"] for call in fake.of("chat.postMessage")] == ["U1", "U2"]


def test_a_message_block_kit_refuses_is_given_up(
    sqlite_store: Store, fake: FakeSlack, slack: SlackChannel
) -> None:
    notice = notice_of(sqlite_store, ask(sqlite_store, allowed_decisions=("approve",)))
    too_long = replace(notice, buttons={"approve": "A" * 100})  # Slack's buttons hold 75 characters
    with pytest.raises(DeliveryError) as error:
        asyncio.run(slack.send(too_long, "U1"))
    assert not error.value.retry and "cannot be built" in error.value.message
    assert fake.of("chat.postMessage") == []


def test_the_modals_block_kit_in_chinese(sqlite_store: Store) -> None:
    from signoff.channels.slack_blocks import form_view, reject_view
    from signoff.channels.slack_interactions import slack_edit_fields

    request = sqlite_store.get_request(ask(sqlite_store))
    ref = {"channel": "D1", "ts": "1.5"}
    reject = reject_view(tool="send_email", request_id=request.id, ref=ref, locale="zh").to_dict()
    assert (reject["type"], reject["callback_id"]) == ("modal", "signoff.reject")
    assert (reject["title"]["text"], reject["submit"]["text"], reject["close"]["text"]) == (
        "拒绝",
        "拒绝",
        "取消",
    )
    assert json.loads(reject["private_metadata"]) == {"request_id": request.id, "channel": "D1", "ts": "1.5"}
    prompt, reason = reject["blocks"]
    assert prompt["text"]["text"] == "拒绝 *send_email*？AI 会收到你的原因。"
    assert reason["label"]["text"] == "原因（可选）" and reason["element"]["multiline"] is True
    edit = form_view(
        "edit", slack_edit_fields(request), tool="send_email", request_id=request.id, ref=ref, locale="zh"
    ).to_dict()
    assert (edit["title"]["text"], edit["submit"]["text"]) == ("修改参数", "按修改后批准")
    inputs = [block for block in edit["blocks"] if block["type"] == "input"]
    assert [block["block_id"] for block in inputs] == ["arg", "comment"]  # no schema: the args as JSON
    whole = inputs[0]
    assert whole["label"]["text"] == "参数（JSON）" and whole["hint"]["text"] == "JSON"
    assert json.loads(whole["element"]["initial_value"])["password"] == "***"
    assert "hunter2" not in json.dumps(edit)
    assert inputs[1]["label"]["text"] == "给 AI 的备注（可选）" and inputs[1]["optional"] is True
