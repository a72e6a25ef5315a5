"""The WeCom channel against a local stand-in of qyapi.weixin.qq.com (real HTTP): the template
card as documented (field by field, button keys), the access_token fetched once and cached,
the card updated with its response_code, the follow-up, and how failures are classed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from signoff import Approve
from signoff.channels import DeliveryError, FollowUp
from signoff.channels.wecom import WeComChannel, task_id
from signoff.store import Store

from . import platforms
from .notices import LINK, new_request, notice_of

AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
CORP = "wwcorp"


@pytest.fixture
def api() -> Iterator[platforms.FakePlatform]:
    with platforms.wecom(corp_id=CORP) as fake:
        yield fake


def channel(api: platforms.FakePlatform, secret: str = "corp-secret") -> WeComChannel:
    return WeComChannel(
        "wecom",
        corp_id=CORP,
        corp_secret=secret,
        agent_id=1000002,
        token="cb-token",
        encoding_aes_key=AES_KEY,
        base_url=api.url,
    )


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


async def _send_twice(wecom: WeComChannel, notice, targets):  # type: ignore[no-untyped-def]
    try:
        return [await wecom.send(notice, target) for target in targets]
    finally:
        await wecom.close()


def test_the_card_is_a_documented_button_interaction_template_card(
    sqlite_store: Store, api: platforms.FakePlatform
) -> None:
    request_id = new_request(sqlite_store)
    notice = notice_of(sqlite_store, request_id)
    refs = run(_send_twice(channel(api), notice, ["zhangsan", "lisi"]))

    assert len(api.called("GET", "/cgi-bin/gettoken")) == 1, "the access_token is cached"
    token_call = api.called("GET", "/cgi-bin/gettoken")[0]
    assert token_call.query == {"corpid": CORP, "corpsecret": "corp-secret"}
    first, second = api.called("POST", "/cgi-bin/message/send")
    assert first.query == {"access_token": "wecom-token-1"}
    assert second.query == {"access_token": "wecom-token-1"}
    body = first.body
    assert body["touser"] == "zhangsan"
    assert body["msgtype"] == "template_card"
    assert body["agentid"] == 1000002
    card = body["template_card"]
    assert card["card_type"] == "button_interaction"
    assert card["main_title"] == {
        "title": "AI 想执行：send_email",
        "desc": "Send the quarterly report to bob",
    }
    assert card["sub_title_text"] == "⚠️ 24 小时内有效"
    assert card["horizontal_content_list"] == [
        {"keyname": "to", "value": "bob@example.com"},
        {"keyname": "password", "value": "***"},
    ]
    assert "hunter2" not in str(body)
    assert card["task_id"].startswith(f"{request_id}-")
    assert second.body["template_card"]["task_id"] != card["task_id"]
    assert card["card_action"] == {"type": 1, "url": LINK}
    assert card["button_list"] == [
        {"type": 0, "text": "✅ 批准", "style": 1, "key": f"so1|approve|{request_id}"},
        {"type": 0, "text": "❌ 拒绝", "style": 3, "key": f"so1|reject|{request_id}"},
    ]
    assert refs[0] == {"msgid": "msg0", "response_code": "rc-1", "task_id": card["task_id"]}
    assert refs[1]["response_code"] == "rc-2"


def test_task_ids_keep_to_what_wecom_allows(sqlite_store: Store) -> None:
    request_id = new_request(sqlite_store)
    made = task_id(request_id, "someone with spaces & 中文")
    assert task_id(request_id, "someone with spaces & 中文") != made, "WeCom refuses a task_id it has seen"
    assert len(made.encode()) <= 128
    assert all(ch.isalnum() or ch in "_-@" for ch in made)


def test_edit_opens_the_request_in_the_browser(sqlite_store: Store, api: platforms.FakePlatform) -> None:
    request_id = new_request(sqlite_store, decisions=("approve", "edit", "reject"))
    run(_send_twice(channel(api), notice_of(sqlite_store, request_id, locale="en"), ["zhangsan"]))
    card = api.called("POST", "/cgi-bin/message/send")[0].body["template_card"]
    assert card["main_title"]["title"] == "AI wants to run: send_email"
    assert [button["text"] for button in card["button_list"]] == ["✅ Approve", "✏️ Edit", "❌ Reject"]
    assert card["button_list"][1] == {"type": 1, "text": "✏️ Edit", "style": 2, "url": LINK}
    without_link = notice_of(sqlite_store, request_id, locale="en", link=None)
    run(_send_twice(channel(api), without_link, ["zhangsan"]))
    card = api.called("POST", "/cgi-bin/message/send")[1].body["template_card"]
    assert [button["text"] for button in card["button_list"]] == ["✅ Approve", "❌ Reject"]
    assert "card_action" not in card


def test_the_card_turns_into_its_final_state_once_then_text(
    sqlite_store: Store, api: platforms.FakePlatform
) -> None:
    request_id = new_request(sqlite_store)
    wecom = channel(api)

    async def scenario():  # type: ignore[no-untyped-def]
        ref = await wecom.send(notice_of(sqlite_store, request_id), "zhangsan")
        sqlite_store.decide(request_id, Approve(), actor="alice")
        final = notice_of(sqlite_store, request_id, link=None)
        first = await wecom.update(final, "zhangsan", ref)
        again = await wecom.update(final, "zhangsan", ref)  # its response_code is spent now
        await wecom.close()
        return first, again

    first, again = run(scenario())
    assert first is None
    (update, rejected) = api.called("POST", "/cgi-bin/message/update_template_card")
    assert update.body == {
        "userids": ["zhangsan"],
        "agentid": 1000002,
        "response_code": "rc-1",
        "button": {"replace_name": "✅ 已批准（alice）"},
    }
    assert rejected.body["response_code"] == "rc-1"
    text = api.called("POST", "/cgi-bin/message/send")[-1].body
    assert text["msgtype"] == "text"
    assert text["text"] == {"content": "AI 想执行：send_email\n✅ 已批准（alice）"}
    assert again == {"msgid": "msg1"}


def test_the_follow_up_is_a_text_message(sqlite_store: Store, api: platforms.FakePlatform) -> None:
    request_id = new_request(sqlite_store)
    message = FollowUp(
        request_id=request_id, tool="send_email", status="succeeded", text="✅ send_email 已执行", locale="zh"
    )
    wecom = channel(api)

    async def scenario():  # type: ignore[no-untyped-def]
        try:
            return await wecom.follow_up(message, "zhangsan", {})
        finally:
            await wecom.close()

    run(scenario())
    sent = api.called("POST", "/cgi-bin/message/send")[0].body
    assert sent == {
        "touser": "zhangsan",
        "msgtype": "text",
        "agentid": 1000002,
        "text": {"content": "✅ send_email 已执行"},
    }


def test_failures_say_whether_to_try_again(sqlite_store: Store, api: platforms.FakePlatform) -> None:
    notice = notice_of(sqlite_store, new_request(sqlite_store))
    wecom = channel(api)
    path = "/cgi-bin/message/send"

    async def attempt() -> DeliveryError:
        with pytest.raises(DeliveryError) as caught:
            await wecom.send(notice, "zhangsan")
        return caught.value

    async def scenario() -> list[DeliveryError]:
        api.then("POST", path, (200, {"errcode": 0, "errmsg": "ok", "invaliduser": "zhangsan"}))
        unknown = await attempt()
        api.then("POST", path, (200, {"errcode": 45009, "errmsg": "api freq out of limit"}))
        limited = await attempt()
        api.then("POST", path, (503, {}))
        down = await attempt()
        api.then("POST", path, (200, {"errcode": 42001, "errmsg": "access_token expired"}))
        expired = await attempt()
        await wecom.send(notice, "zhangsan")  # a new token is fetched, and it works
        api.then("POST", path, (200, {"errcode": 40058, "errmsg": "invalid parameter"}))
        invalid = await attempt()
        await wecom.close()
        return [unknown, limited, down, expired, invalid]

    unknown, limited, down, expired, invalid = run(scenario())
    assert not unknown.retry and "zhangsan" in unknown.message
    assert limited.retry and limited.retry_after == 60.0
    assert down.retry
    assert expired.retry
    assert not invalid.retry and "40058" in invalid.message
    assert len(api.called("GET", "/cgi-bin/gettoken")) == 2


def test_bad_credentials_are_a_delivery_error(sqlite_store: Store, api: platforms.FakePlatform) -> None:
    notice = notice_of(sqlite_store, new_request(sqlite_store))
    wecom = channel(api, secret="wrong")

    async def scenario() -> None:
        try:
            await wecom.send(notice, "zhangsan")
        finally:
            await wecom.close()

    with pytest.raises(DeliveryError, match="40001"):
        run(scenario())


def test_a_request_that_ended_before_its_notice_is_sent_as_text(
    sqlite_store: Store, api: platforms.FakePlatform
) -> None:
    request_id = new_request(sqlite_store)
    sqlite_store.decide(request_id, Approve(), actor="alice")
    ref = run(_send_twice(channel(api), notice_of(sqlite_store, request_id, link=None), ["zhangsan"]))[0]
    sent = api.called("POST", "/cgi-bin/message/send")[0].body
    assert sent["msgtype"] == "text"
    assert sent["text"] == {"content": "AI 想执行：send_email\n✅ 已批准（alice）"}
    assert "response_code" not in ref
