"""A reminder (a rule's `remind`) on each channel's stand-in: Feishu replies under the card, WeCom
sends a text with the link (the card's task_id is its notice's own), mail is threaded under the
notice with a Message-ID of its own, and the text fallback sends the message again with its
reply code. Each reminder has its own dedupe key (Feishu's uuid, the webhook-id, the
Message-ID), so a platform that drops repeats never drops the next reminder; a retry of one
keeps its key."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from signoff.channels import Notice, parse_config
from signoff.channels.contract import REMINDER_KEY
from signoff.channels.email import EmailChannel
from signoff.channels.feishu import FeishuChannel
from signoff.channels.registry import build_channel
from signoff.channels.text import TextChannel
from signoff.channels.wecom import WeComChannel
from signoff.destinations import Destinations
from signoff.store import Store

from ..receivers import Receiver
from . import platforms
from .mailserver import MailServer
from .notices import LINK, new_request, notice_of
from .test_text import SECRET
from .test_wecom import AES_KEY, CORP

MESSAGES = "/open-apis/im/v1/messages"


def reminder(store: Store, key: str, locale: Any = "en") -> Notice:
    request_id = new_request(store)
    notice = notice_of(store, request_id, locale=locale)
    said = "⏰ Reminder: still waiting for your decision (24 hours left)"
    return replace(notice, reminder=said, extra={REMINDER_KEY: key})


@pytest.fixture
def feishu_api() -> Iterator[tuple[platforms.FakePlatform, str]]:
    app_id = f"cli_{uuid.uuid4().hex[:12]}"
    with platforms.feishu(app_id=app_id) as fake:
        yield fake, app_id


def test_feishu_replies_under_the_card_with_a_uuid_per_reminder(
    sqlite_store: Store, feishu_api: tuple[platforms.FakePlatform, str]
) -> None:
    api, app_id = feishu_api
    feishu = FeishuChannel(
        "feishu",
        app_id=app_id,
        app_secret="app-secret",
        encrypt_key="encrypt-key",
        verification_token="verification-token",
        base_url=api.url,
        timeout=5,
    )
    first = reminder(sqlite_store, "7")
    asyncio.run(feishu.remind(first, "ou_alice", {"message_id": "om_9"}))
    asyncio.run(feishu.remind(replace(first, extra={REMINDER_KEY: "8"}), "ou_alice", {"message_id": "om_9"}))
    replies = api.called("POST", f"{MESSAGES}/om_9/reply")
    assert len(replies) == 2
    assert json.loads(replies[0].body["content"])["text"] == (
        "⏰ Reminder: still waiting for your decision (24 hours left) · AI wants to run: send_email"
    )
    assert replies[0].body["uuid"] != replies[1].body["uuid"]


def test_wecom_sends_a_text_with_the_link(sqlite_store: Store) -> None:
    with platforms.wecom(corp_id=CORP) as api:
        wecom = WeComChannel(
            "wecom",
            corp_id=CORP,
            corp_secret="corp-secret",
            agent_id=1000002,
            token="cb-token",
            encoding_aes_key=AES_KEY,
            base_url=api.url,
        )

        async def scenario() -> None:
            try:
                await wecom.remind(reminder(sqlite_store, "7"), "zhangsan", {"task_id": "t"})
            finally:
                await wecom.close()

        asyncio.run(scenario())
        sent = api.called("POST", "/cgi-bin/message/send")[0].body
    assert sent["msgtype"] == "text"
    assert sent["text"]["content"] == (
        f"⏰ Reminder: still waiting for your decision (24 hours left)\nAI wants to run: send_email\n{LINK}"
    )


def test_mail_is_threaded_under_the_notice_with_its_own_message_id(sqlite_store: Store) -> None:
    notice = reminder(sqlite_store, "7")
    parent = {"message_id": "<first@x>", "subject": "[signoff] AI wants to run: send_email"}
    with MailServer() as smtp:
        given = {"kind": "email", "from": "signoff <approvals@example.com>", "port": smtp.port}
        mail = build_channel(parse_config({"mail": given})["mail"])
        assert isinstance(mail, EmailChannel)
        ref = asyncio.run(mail.remind(notice, "alice@example.com", parent))
        (got,) = smtp.handler.wait_for(1)
    assert str(got.mail["In-Reply-To"]).strip() == "<first@x>"
    assert got.mail["Subject"] == "Re: [signoff] AI wants to run: send_email"
    assert ref is not None and ".remind7@" in ref["message_id"]
    plain = got.mail.get_body(preferencelist=("plain",))
    assert plain is not None and "⏰ Reminder: still waiting for your decision" in plain.get_content()


def test_the_text_fallback_sends_the_message_again_with_its_code(sqlite_store: Store) -> None:
    with Receiver() as bridge:
        config = parse_config(
            {"wechat": {"kind": "text", "platform": "wechat", "send_url": bridge.url, "secret": SECRET}},
            destinations=Destinations(allow_private=True),
        )["wechat"]
        text = build_channel(config)
        assert isinstance(text, TextChannel)
        notice = reminder(sqlite_store, "7", locale="zh")

        async def scenario() -> None:
            await text.remind(notice, "wx_alice", {"code": "K7QD"})
            await text.remind(replace(notice, extra={REMINDER_KEY: "8"}), "wx_alice", {"code": "K7QD"})

        asyncio.run(scenario())
        posts = bridge.wait_for(2)
    first = json.loads(posts[0].body)
    assert first["message"] == "remind"
    assert first["text"].startswith("⏰ Reminder: still waiting for your decision")
    assert "K7QD" in first["text"]
    assert posts[0].headers["webhook-id"] != posts[1].headers["webhook-id"]
