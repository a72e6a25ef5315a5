"""A channel address counts only once verified (DESIGN §9), end to end on every platform: a real
server whose outbox sends to the local stand-ins of Slack, WeCom, Feishu, an SMTP server and a
text bridge. alice claims her address herself (the API): the stand-in gets the code and nothing
else; a request routed to her is not sent there (its notice is dead-lettered, saying why); a
signed callback from the address decides nothing, is answered "not verified" in the channel's
language and is audited as a refused decision. Once she enters the code, the next request reaches
her there and her click decides it."""

from __future__ import annotations

import base64
import itertools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from signoff._util import utcnow
from signoff.channels import ChannelConfig, ChannelRegistry, parse_config
from signoff.channels.feishu import FeishuChannel
from signoff.channels.slack import SlackChannel
from signoff.channels.wecom import WeComChannel
from signoff.destinations import Destinations
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

from ..live import LiveServer
from ..test_outbox import QUICK, wait_until
from . import platforms
from .mailserver import MailServer
from .signers import card_action, card_event, feishu_callback, wecom_callback, wecom_decrypt
from .slack_fake import TOKEN as SLACK_TOKEN
from .slack_fake import FakeSlack
from .slack_signing import SIGNING_SECRET, form, signed
from .slack_signing import click as slack_click

CALLS = itertools.count(1)
NOT_VERIFIED = {
    "en": "This address is not verified for any signoff user.",
    "zh": "这个地址还没有被任何 signoff 用户验证。",
}


@dataclass
class Rig:
    """One platform: the live server, alice's address there, and its stand-in's side."""

    server: LiveServer
    channel: str
    kind: str
    address: str
    locale: str
    sent_to: Callable[[str], list[str]]
    """The text of every message the stand-in got for an address, oldest first."""
    click: Callable[[str], str] | None
    """A signed approve from alice's address on a request; what the person is told ("" for
    nothing, as Slack and WeCom answer a decision). None: the platform takes no callbacks."""
    fake: Any = None
    """The platform's stand-in (Slack's: `FakeSlack`)."""


def _server(store: Store, registry: ChannelRegistry) -> LiveServer:
    store.add_user("alice", role="member", actor="test")
    return LiveServer(store, QUICK, channels=registry)


@contextmanager
def slack(store: Store) -> Iterator[Rig]:
    with FakeSlack() as fake:
        channel = SlackChannel(
            "slack", bot_token=SLACK_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url, timeout=5
        )
        registry = ChannelRegistry()
        registry.add(channel)

        def sent_to(address: str) -> list[str]:
            posts = fake.of("chat.postMessage")
            return [str(call.body.get("text")) for call in posts if call.body.get("channel") == address]

        with _server(store, registry) as live:

            def click(request_id: str) -> str:
                told = len(fake.of("chat.postEphemeral"))
                body = form(slack_click(request_id, "approve", "U-ALICE"))
                answer = httpx.post(f"{live.url}/channels/slack/callback", content=body, headers=signed(body))
                assert answer.status_code == 200, answer.text
                if store.get_request(request_id).status.value != "pending":
                    return ""
                return str(fake.wait_for("chat.postEphemeral", told + 1)[-1].body["text"])

            yield Rig(live, "slack", "slack", "U-ALICE", "en", sent_to, click, fake)


WECOM = {"corp_id": "wwcorp", "token": "cb-token", "aes": "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"}


@contextmanager
def wecom(store: Store) -> Iterator[Rig]:
    with platforms.wecom(corp_id=WECOM["corp_id"]) as api:
        channel = WeComChannel(
            "wecom",
            corp_id=WECOM["corp_id"],
            corp_secret="corp-secret",
            agent_id=1000002,
            token=WECOM["token"],
            encoding_aes_key=WECOM["aes"],
            base_url=api.url,
        )
        registry = ChannelRegistry()
        registry.add(channel, ChannelConfig(name="wecom", kind="wecom", locale="zh"))

        def sent_to(address: str) -> list[str]:
            sends = [call.body for call in api.called("POST", "/cgi-bin/message/send")]
            return [
                json.dumps(body.get("text") or body.get("template_card"), ensure_ascii=False)
                for body in sends
                if body.get("touser") == address
            ]

        live = _server(store, registry)
        with live:

            def click(request_id: str) -> str:
                event = card_event(user="zhangsan", key=f"so1|approve|{request_id}", corp_id=WECOM["corp_id"])
                query, body = wecom_callback(
                    token=WECOM["token"],
                    encoding_aes_key=WECOM["aes"],
                    corp_id=WECOM["corp_id"],
                    message=event,
                )
                answer = httpx.post(f"{live.url}/channels/wecom/wecom", params=query, content=body)
                assert answer.status_code == 200, answer.text
                if not answer.text:
                    return ""
                encrypted = answer.text.split("<Encrypt><![CDATA[")[1].split("]]>")[0]
                message = wecom_decrypt(WECOM["aes"], encrypted)[0].decode()
                return message.split("<Content><![CDATA[")[1].split("]]>")[0]

            yield Rig(live, "wecom", "wecom", "zhangsan", "zh", sent_to, click)


FEISHU = {"key": "encrypt-key", "token": "verification-token"}


@contextmanager
def feishu(store: Store) -> Iterator[Rig]:
    app_id = f"cli_{uuid.uuid4().hex[:12]}"
    with platforms.feishu(app_id=app_id) as api:
        channel = FeishuChannel(
            "feishu",
            app_id=app_id,
            app_secret="app-secret",
            encrypt_key=FEISHU["key"],
            verification_token=FEISHU["token"],
            base_url=api.url,
        )
        registry = ChannelRegistry()
        registry.add(channel, ChannelConfig(name="feishu", kind="feishu", locale="en"))

        def sent_to(address: str) -> list[str]:
            created = api.called("POST", "/open-apis/im/v1/messages")
            return [str(call.body["content"]) for call in created if call.body.get("receive_id") == address]

        with _server(store, registry) as live:

            def click(request_id: str) -> str:
                value = {"signoff": "so1", "decision": "approve", "request_id": request_id}
                payload = card_action(
                    token=FEISHU["token"], open_id="ou_alice", value=value, message_id="om_1"
                )
                headers, body = feishu_callback(encrypt_key=FEISHU["key"], payload=payload)
                answer = httpx.post(f"{live.url}/channels/feishu/callback", headers=headers, content=body)
                assert answer.status_code == 200, answer.text
                return str(answer.json()["toast"]["content"])

            yield Rig(live, "feishu", "feishu", "ou_alice", "en", sent_to, click)


BRIDGE_SECRET = "whsec_" + base64.b64encode(b"the wechat bridge's shared key!!").decode()


@contextmanager
def text(store: Store) -> Iterator[Rig]:
    from ..receivers import Receiver

    with Receiver() as bridge:
        config = parse_config(
            {
                "wechat": {
                    "kind": "text",
                    "platform": "wechat",
                    "locale": "zh",
                    "send_url": bridge.url,
                    "secret": BRIDGE_SECRET,
                }
            },
            destinations=Destinations(allow_private=True),  # the bridge listens on loopback
        )

        def sent_to(address: str) -> list[str]:
            bodies = [json.loads(post.body) for post in bridge.delivered]
            return [f"{body['message']}: {body['text']}" for body in bodies if body["to"] == address]

        with _server(store, ChannelRegistry.from_configs(config)) as live:

            def click(request_id: str) -> str:
                code = store.reply_code(request_id, "wechat", "alice")  # names the request: two are open
                body = json.dumps({"from": "wxid_alice", "text": f"1 {code}"})
                msg_id, moment = f"msg_{next(CALLS)}", datetime.now(UTC)
                headers = {
                    "content-type": "application/json",
                    "webhook-id": msg_id,
                    "webhook-timestamp": str(int(moment.timestamp())),
                    "webhook-signature": Webhook(BRIDGE_SECRET).sign(msg_id, moment, body),
                }
                answer = httpx.post(
                    f"{live.url}/channels/wechat/callback", content=body.encode(), headers=headers
                )
                assert answer.status_code == 200, answer.text
                return str(answer.json()["reply"])

            yield Rig(live, "wechat", "text:wechat", "wxid_alice", "zh", sent_to, click)


@contextmanager
def email(store: Store) -> Iterator[Rig]:
    with MailServer() as smtp:
        config = parse_config(
            {"mail": {"kind": "email", "from": "signoff <approvals@example.com>", "port": smtp.port}}
        )

        def sent_to(address: str) -> list[str]:
            mails = [got.mail for got in smtp.handler.received if got.recipients == [address]]
            return [f"{mail['Subject']}\n{mail.get_body(('plain',)).get_content()}" for mail in mails]  # type: ignore[union-attr]

        with _server(store, ChannelRegistry.from_configs(config)) as live:
            yield Rig(live, "mail", "email", "alice@example.com", "en", sent_to, None)


RIGS = {"slack": slack, "wecom": wecom, "feishu": feishu, "text": text, "email": email}


@pytest.fixture(params=list(RIGS))
def rig(request: pytest.FixtureRequest, store: Store) -> Iterator[Rig]:
    with RIGS[request.param](store) as made:
        yield made


def ask(rig: Rig) -> str:
    new = NewRequest(
        thread_id="thread-v",
        tool_call_id=f"call-{next(CALLS)}",
        tool_name="deploy",
        args={"env": "prod"},
        description="Deploy to production",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(
            approvers=("alice",), channels=(rig.channel,), allowed_decisions=("approve", "reject")
        ),
    )
    return rig.server.store.create_request(new)[0].id


def test_an_unverified_address_gets_only_its_code_and_decides_nothing_until_verified(rig: Rig) -> None:
    store, alice = rig.server.store, rig.server.user("alice")
    with rig.server.client(alice) as client:
        claimed = client.put(f"/v1/users/alice/addresses/{rig.kind}", json={"address": rig.address})
        assert claimed.status_code == 200, claimed.text
        assert (claimed.json()["verified"], claimed.json()["code_via"]) == (False, rig.channel)
        wait_until(lambda: rig.sent_to(rig.address))
        [code_message] = rig.sent_to(rig.address)
        intro = "Your signoff verification code is" if rig.locale == "en" else "你的 signoff 验证码是"
        assert intro in code_message
        found = re.search(r"(?<!\d)(\d{6})(?!\d)", code_message)
        assert found is not None
        code = found.group(1)

        first = ask(rig)
        wait_until(
            lambda: [row.state for row in store.outbox_for(first) if row.message == "notice"] == ["dead"]
        )
        [notice] = [row for row in store.outbox_for(first) if row.message == "notice"]
        assert notice.last_error is not None and "address is not verified" in notice.last_error
        assert rig.sent_to(rig.address) == [code_message], "nothing but the code went there"
        if rig.click is not None:
            told = rig.click(first)
            assert told == NOT_VERIFIED[rig.locale]
            assert store.get_request(first).status.value == "pending"
            refused = list(store.audit_entries(action="decision.refused"))
            assert refused and refused[-1].data["sender"] == rig.address
            assert refused[-1].data["claimed_by"] == ["alice"] and refused[-1].channel == rig.channel

        verified = client.post(f"/v1/users/alice/addresses/{rig.kind}/verify", json={"code": code})
        assert verified.status_code == 200, verified.text

    second = ask(rig)
    wait_until(lambda: len(rig.sent_to(rig.address)) == 2)
    if rig.click is not None:
        rig.click(second)
        decided = store.get_request(second)
        assert decided.status.value == "approved"
        assert decided.decision is not None and decided.decision.actor == "alice"
    assert store.get_request(first).status.value == "pending", "the earlier click decided nothing"


def test_slack_opens_no_modal_for_an_unverified_address(store: Store) -> None:
    with slack(store) as rig:
        with rig.server.client(rig.server.user("alice")) as client:
            client.put("/v1/users/alice/addresses/slack", json={"address": "U-ALICE"})
        request_id = ask(rig)
        body = form(slack_click(request_id, "reject", "U-ALICE"))
        answer = httpx.post(f"{rig.server.url}/channels/slack/callback", content=body, headers=signed(body))
        assert answer.status_code == 200
        [ephemeral] = rig.fake.wait_for("chat.postEphemeral")
        assert ephemeral.body["text"] == NOT_VERIFIED["en"]
        assert rig.fake.of("views.open") == []
        assert store.get_request(request_id).status.value == "pending"
        [refused] = store.audit_entries(action="decision.refused")
        assert (refused.actor, refused.request_id, refused.data["kind"]) == ("anonymous", request_id, "slack")
