"""The Feishu channel against a local stand-in of open.feishu.cn (real HTTP, lark-oapi's own
client pointed at it): the interactive card as documented (card JSON 2.0, field by field, the
buttons' values), the tenant_access_token fetched once and cached, the card patched to its
final state, the follow-up as a reply, and how failures are classed."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from signoff import Approve, Reject
from signoff._util import utcnow
from signoff.channels import DeliveryError, FollowUp
from signoff.channels.feishu import FeishuChannel, dedupe_key
from signoff.requests import NewRequest
from signoff.store import Store

from . import platforms
from .notices import LINK, new_request, notice_of

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
MESSAGES = "/open-apis/im/v1/messages"


@pytest.fixture
def app_id() -> str:
    # lark-oapi caches tokens per app id in the whole process: a new app per test
    return f"cli_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def api(app_id: str) -> Iterator[platforms.FakePlatform]:
    with platforms.feishu(app_id=app_id) as fake:
        yield fake


def channel(api: platforms.FakePlatform, app_id: str, secret: str = "app-secret") -> FeishuChannel:
    return FeishuChannel(
        "feishu",
        app_id=app_id,
        app_secret=secret,
        encrypt_key="encrypt-key",
        verification_token="verification-token",
        base_url=api.url,
        timeout=5,
    )


def content(call: platforms.Call) -> Any:
    return json.loads(call.body["content"])


def test_the_card_is_documented_card_json(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    request_id = new_request(sqlite_store)
    feishu = channel(api, app_id)
    notice = notice_of(sqlite_store, request_id)
    refs = [asyncio.run(feishu.send(notice, target)) for target in ("ou_alice", "ou_bob")]

    (token,) = api.called("POST", TOKEN_PATH)
    assert token.body == {"app_id": app_id, "app_secret": "app-secret"}
    first, second = api.called("POST", MESSAGES)
    assert first.query == {"receive_id_type": "open_id"}
    assert first.headers["authorization"] == "Bearer t-1" == second.headers["authorization"]
    assert first.body["receive_id"] == "ou_alice"
    assert first.body["msg_type"] == "interactive"
    assert first.body["uuid"] == dedupe_key(request_id, "ou_alice") != second.body["uuid"]
    assert len(first.body["uuid"]) <= 50
    assert isinstance(first.body["content"], str), "content is the card as a JSON string"
    card = content(first)
    assert card["schema"] == "2.0"
    assert card["config"] == {"update_multi": True}
    assert card["header"] == {
        "title": {"tag": "plain_text", "content": "AI 想执行：send_email"},
        "template": "orange",
    }
    description, to, password, buttons, valid_for = card["body"]["elements"]
    assert description == {
        "tag": "div",
        "text": {"tag": "plain_text", "content": "Send the quarterly report to bob"},
    }
    assert to["text"]["content"] == "to: bob@example.com"
    assert password["text"]["content"] == "password: ***"
    assert "hunter2" not in first.body["content"]
    assert valid_for["text"]["content"] == "⚠️ 24 小时内有效"
    assert buttons["tag"] == "column_set"
    approve, reject = (column["elements"][0] for column in buttons["columns"])
    assert approve == {
        "tag": "button",
        "text": {"tag": "plain_text", "content": "✅ 批准"},
        "type": "primary_filled",
        "behaviors": [
            {"type": "callback", "value": {"signoff": "so1", "decision": "approve", "request_id": request_id}}
        ],
    }
    assert reject["text"]["content"] == "❌ 拒绝"
    assert reject["type"] == "danger"
    assert reject["behaviors"][0]["value"]["decision"] == "reject"
    assert refs == [{"message_id": "om_2"}, {"message_id": "om_3"}]


def test_edit_opens_the_request_in_the_browser(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    request_id = new_request(sqlite_store, decisions=("approve", "edit", "reject"))
    asyncio.run(channel(api, app_id).send(notice_of(sqlite_store, request_id, locale="en"), "ou_alice"))
    card = content(api.called("POST", MESSAGES)[0])
    assert card["header"]["title"]["content"] == "AI wants to run: send_email"
    columns = card["body"]["elements"][3]["columns"]
    edit = columns[1]["elements"][0]
    assert edit["text"]["content"] == "✏️ Edit"
    assert edit["behaviors"] == [{"type": "open_url", "default_url": LINK}]


def test_the_card_is_patched_to_its_final_state(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    request_id = new_request(sqlite_store)
    feishu = channel(api, app_id)
    ref = asyncio.run(feishu.send(notice_of(sqlite_store, request_id), "ou_alice"))
    sqlite_store.decide(request_id, Reject(message="not this quarter"), actor="alice")
    assert asyncio.run(feishu.update(notice_of(sqlite_store, request_id, link=None), "ou_alice", ref)) is None
    (patch,) = api.called("PATCH", f"{MESSAGES}/{ref['message_id']}")
    card = content(patch)
    assert card["header"]["template"] == "red"
    assert card["header"]["title"]["content"] == "AI 想执行：send_email"
    texts = [element["text"]["content"] for element in card["body"]["elements"]]
    assert texts[-2:] == ["❌ 已拒绝（alice）", "not this quarter"]
    assert all(element["tag"] == "div" for element in card["body"]["elements"]), "no live buttons"
    assert len(api.called("POST", TOKEN_PATH)) == 1


def test_an_approved_card_is_green(sqlite_store: Store, api: platforms.FakePlatform, app_id: str) -> None:
    request_id = new_request(sqlite_store)
    feishu = channel(api, app_id)
    ref = asyncio.run(feishu.send(notice_of(sqlite_store, request_id, locale="en"), "ou_alice"))
    sqlite_store.decide(request_id, Approve(), actor="alice")
    asyncio.run(feishu.update(notice_of(sqlite_store, request_id, locale="en"), "ou_alice", ref))
    card = content(api.called("PATCH", f"{MESSAGES}/{ref['message_id']}")[0])
    assert card["header"]["template"] == "green"
    assert card["body"]["elements"][-1]["text"]["content"] == "✅ Approved by alice"


def test_the_follow_up_is_a_reply_under_the_card(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    request_id = new_request(sqlite_store)
    message = FollowUp(
        request_id=request_id,
        tool="send_email",
        status="failed",
        text="❌ send_email failed: boom",
        locale="en",
    )
    ref = asyncio.run(channel(api, app_id).follow_up(message, "ou_alice", {"message_id": "om_9"}))
    (reply,) = api.called("POST", f"{MESSAGES}/om_9/reply")
    assert reply.body["msg_type"] == "text"
    assert content(reply) == {"text": "❌ send_email failed: boom"}
    assert ref is not None and ref["message_id"].startswith("om_")


def test_failures_say_whether_to_try_again(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    notice = notice_of(sqlite_store, new_request(sqlite_store))
    feishu = channel(api, app_id)

    def attempt() -> DeliveryError:
        with pytest.raises(DeliveryError) as caught:
            asyncio.run(feishu.send(notice, "ou_alice"))
        return caught.value

    api.then("POST", MESSAGES, (400, {"code": 230013, "msg": "Bot has NO availability to this user."}))
    unavailable = attempt()
    api.then("POST", MESSAGES, (429, {"code": 99991400, "msg": "request trigger frequency limit"}))
    limited = attempt()
    api.then("POST", MESSAGES, (502, {"code": 1, "msg": "bad gateway"}))
    down = attempt()
    api.then("POST", MESSAGES, (401, {"code": 99991663, "msg": "Invalid access token"}))
    expired = attempt()
    asyncio.run(feishu.send(notice, "ou_alice"))  # with a new token
    assert not unavailable.retry and "230013" in unavailable.message
    assert limited.retry
    assert down.retry
    assert expired.retry
    assert len(api.called("POST", TOKEN_PATH)) == 2


def test_bad_app_credentials_are_a_delivery_error(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    notice = notice_of(sqlite_store, new_request(sqlite_store))
    with pytest.raises(DeliveryError, match="credentials"):
        asyncio.run(channel(api, app_id, secret="wrong").send(notice, "ou_alice"))
    assert not api.called("POST", MESSAGES)


def test_a_request_that_ended_before_its_notice_is_sent_its_final_card(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    request_id = new_request(sqlite_store)
    sqlite_store.decide(request_id, Approve(), actor="alice")
    asyncio.run(channel(api, app_id).send(notice_of(sqlite_store, request_id, link=None), "ou_alice"))
    card = content(api.called("POST", MESSAGES)[0])
    assert card["header"]["template"] == "green"
    assert all(element["tag"] == "div" for element in card["body"]["elements"])


def test_a_card_shows_at_most_twenty_arguments(
    sqlite_store: Store, api: platforms.FakePlatform, app_id: str
) -> None:
    new = NewRequest(
        thread_id="t-many",
        tool_call_id="c-many",
        tool_name="bulk",
        args={f"a{n:02}": n for n in range(25)},
        description="Many arguments",
        deadline=utcnow() + timedelta(hours=1),
    )
    request_id = sqlite_store.create_request(new)[0].id
    asyncio.run(channel(api, app_id).send(notice_of(sqlite_store, request_id), "ou_alice"))
    texts = [
        element["text"]["content"]
        for element in content(api.called("POST", MESSAGES)[0])["body"]["elements"]
        if element["tag"] == "div"
    ]
    assert texts[1] == "a00: 0" and texts[20] == "a19: 19"
    assert texts[21] == "… +5"
